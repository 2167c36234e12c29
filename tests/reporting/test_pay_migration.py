"""annotation 0015: a posted reward left at the old default 0 becomes "not set"; a stated one stays."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0014_study_translations")]
AFTER = [("annotation", "0015_pay_rule_version")]


def test_a_zero_reward_is_unset_and_a_stated_reward_is_kept():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    task, _ = old.get_model("tasks_app", "Task").objects.get_or_create(
        slug="mnli", defaults={"name": "MNLI", "kind": "classification", "description": "Pairs."}
    )
    Study = old.get_model("annotation", "Study")
    Study.objects.create(slug="zero", name="Zero", task_id=task.pk, base_reward=Decimal("0.00"))
    Study.objects.create(slug="posted", name="Posted", task_id=task.pk, base_reward=Decimal("2.50"))
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("annotation", "Study")
    assert new.objects.get(slug="zero").base_reward is None  # no bonus until someone states the reward
    assert new.objects.get(slug="posted").base_reward == Decimal("2.50")
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
