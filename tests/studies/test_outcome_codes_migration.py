"""annotation 0006: a study's single completion code and Prolific URL become its "completed" outcome;
tasks_app 0004: the CLUES tasks get their worker titles and questions."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0010_training_filter_group"), ("tasks_app", "0004_qa_answer_options")]
AFTER = [("annotation", "0011_consent_survey_outcomes"), ("tasks_app", "0005_worker_title")]


def test_the_old_code_and_url_move_into_completed_and_the_rest_are_generated():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    # An earlier transactional test may have flushed the tasks the migrations installed.
    task, _ = old.get_model("tasks_app", "Task").objects.get_or_create(
        slug="mnli", defaults={"name": "MNLI", "kind": "classification", "description": "Pairs."}
    )
    Study = old.get_model("annotation", "Study")
    Study.objects.create(
        slug="old", name="Old", task_id=task.pk, completion_code="OLD123",
        prolific_completion_url="https://app.prolific.com/submissions/complete",
    )  # fmt: skip
    Study.objects.create(slug="bare", name="Bare", task_id=task.pk)
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    after = executor.loader.project_state(AFTER).apps
    assert after.get_model("tasks_app", "Task").objects.get(slug="mnli").worker_question == (
        "What is the relationship between these sentences?"
    )  # tasks_app 0004 gave the CLUES tasks their worker titles and questions
    new = after.get_model("annotation", "Study")
    old_codes = new.objects.get(slug="old").outcome_codes
    assert old_codes["completed"] == {"code": "OLD123", "url": "https://app.prolific.com/submissions/complete"}
    bare = new.objects.get(slug="bare").outcome_codes
    assert len(bare) == 6 and all(len(entry["code"]) == 8 for entry in bare.values())
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
