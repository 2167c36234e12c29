"""annotation 0015: the group filter's exclusions, recorded with the kind "admin", get "training_filter";
an admin's own exclusion keeps "admin"; decisions made before rule versions were recorded are version 1."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0014_study_translations")]
AFTER = [("annotation", "0016_filter_rule_version_and_group_exclusion_kind")]


def test_group_exclusions_take_the_filter_kind_and_old_decisions_are_version_1():
    executor = MigrationExecutor(connection)
    before = BEFORE + executor.loader.graph.leaf_nodes("tasks_app")  # tasks_app stays as it is: its state too
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    task, _ = old.get_model("tasks_app", "Task").objects.get_or_create(
        slug="sst2", defaults={"name": "SST-2", "kind": "classification", "description": "Reviews."}
    )
    study = old.get_model("annotation", "Study").objects.create(slug="old-filter", name="Old", task_id=task.pk)
    condition = old.get_model("annotation", "Condition").objects.create(study=study, shots=0)
    Worker = old.get_model("annotation", "Worker")
    Participation = old.get_model("annotation", "Participation")
    Event = old.get_model("annotation", "ParticipationEvent")
    Decision = old.get_model("annotation", "FilterDecision")
    now = timezone.now()

    def excluded(slot: int, reason: str, *, failed: bool, override: bool) -> int:
        worker = Worker.objects.create(platform="prolific", external_id=f"w{slot}")
        p = Participation.objects.create(
            study=study, condition=condition, task_id=task.pk, worker=worker, slot_index=slot,
            state="excluded", exclusion_kind="admin",
        )  # fmt: skip
        Event.objects.create(participation=p, from_state="test", to_state="excluded", at=now, reason=reason)
        Decision.objects.create(
            participation=p, training_s1=0.1, rule="relative", threshold=0.2, passed=not failed,
            is_override=override, reason="x", at=now,
        )  # fmt: skip
        return p.pk

    by_group = excluded(0, "failed training filter: training S1 0.100 < 0.500", failed=True, override=False)
    by_admin = excluded(1, "admin override: copied answers", failed=True, override=True)
    executor = MigrationExecutor(connection)
    after = AFTER + executor.loader.graph.leaf_nodes("tasks_app")
    executor.migrate(after)
    new = executor.loader.project_state(after).apps
    kinds = dict(new.get_model("annotation", "Participation").objects.values_list("pk", "exclusion_kind"))
    assert (kinds[by_group], kinds[by_admin]) == ("training_filter", "admin")
    versions = set(new.get_model("annotation", "FilterDecision").objects.values_list("rule_version", flat=True))
    assert versions == {1}
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
