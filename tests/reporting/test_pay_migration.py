"""annotation 0015: a posted reward left at the old default 0 becomes "not set"; a stated one stays."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0016_filter_rule_version_and_group_exclusion_kind")]
AFTER = [("annotation", "0017_pay_rule_version")]


def test_a_zero_reward_is_unset_and_a_stated_reward_is_kept():
    executor = MigrationExecutor(connection)
    before = BEFORE + executor.loader.graph.leaf_nodes("tasks_app")  # tasks_app stays as it is: its state too
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    task, _ = old.get_model("tasks_app", "Task").objects.get_or_create(
        slug="mnli", defaults={"name": "MNLI", "kind": "classification", "description": "Pairs."}
    )
    Study = old.get_model("annotation", "Study")
    Study.objects.create(slug="zero", name="Zero", task_id=task.pk, base_reward=Decimal("0.00"))
    Study.objects.create(slug="posted", name="Posted", task_id=task.pk, base_reward=Decimal("2.50"))
    executor = MigrationExecutor(connection)
    after = AFTER + executor.loader.graph.leaf_nodes("tasks_app")
    executor.migrate(after)
    new = executor.loader.project_state(after).apps.get_model("annotation", "Study")
    assert new.objects.get(slug="zero").base_reward is None  # no bonus until someone states the reward
    assert new.objects.get(slug="posted").base_reward == Decimal("2.50")
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
