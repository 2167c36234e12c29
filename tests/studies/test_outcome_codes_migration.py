"""Migration 0006: a study's single completion code and Prolific URL become its "completed" outcome."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0005_study_close_grace"), ("tasks_app", "0004_worker_title")]
AFTER = [("annotation", "0006_consent_survey_outcomes")]


def test_the_old_code_and_url_move_into_completed_and_the_rest_are_generated():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    task = old.get_model("tasks_app", "Task").objects.get(slug="mnli")
    assert task.worker_title == "How do two sentences relate?"  # tasks_app 0004 filled the CLUES titles
    Study = old.get_model("annotation", "Study")
    Study.objects.create(
        slug="old", name="Old", task_id=task.pk, completion_code="OLD123",
        prolific_completion_url="https://app.prolific.com/submissions/complete",
    )  # fmt: skip
    Study.objects.create(slug="bare", name="Bare", task_id=task.pk)
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("annotation", "Study")
    old_codes = new.objects.get(slug="old").outcome_codes
    assert old_codes["completed"] == {"code": "OLD123", "url": "https://app.prolific.com/submissions/complete"}
    bare = new.objects.get(slug="bare").outcome_codes
    assert len(bare) == 6 and all(len(entry["code"]) == 8 for entry in bare.values())
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
