"""A task's question types are edited as lines "CODE | Name | Question", stored as the same JSON list."""

import pytest

from tasks_app.admin import TaskForm
from tests.factories import make_span_task

pytestmark = pytest.mark.django_db


def _data(task, question_types: str) -> dict:
    return {
        "slug": task.slug,
        "name": task.name,
        "kind": task.kind,
        "group": task.group,
        "description": "d",
        "instructions": "",
        "question_types": question_types,
        "display_order": 1,
    }


def test_lines_are_shown_and_saved_as_the_json_list():
    task = make_span_task(slug="ner-qt")
    task.question_types = [{"code": "PER", "name": "Person", "question": "List all the people names"}]
    task.save()
    shown = TaskForm(instance=task)["question_types"].value()
    assert TaskForm.base_fields["question_types"].prepare_value(shown) == "PER | Person | List all the people names"
    form = TaskForm(_data(task, "PER | Person | Who?\nLOC | Location | Where?\n"), instance=task)
    assert form.is_valid(), form.errors
    form.save()
    task.refresh_from_db()
    assert task.question_types == [
        {"code": "PER", "name": "Person", "question": "Who?"},
        {"code": "LOC", "name": "Location", "question": "Where?"},
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("PER | Person", "Line 1: write CODE | Name | Question"),
        ("PER | | Who?", "three parts, none empty"),
        ("PER | Person | Who?\nPER | People | Whom?", "Line 2: the code 'PER' is used twice."),
    ],
)
def test_a_bad_line_is_refused_with_its_number_and_nothing_changes(text, message):
    task = make_span_task(slug="ner-bad")
    before = list(task.question_types)
    form = TaskForm(_data(task, text), instance=task)
    assert not form.is_valid()
    assert message in " ".join(form.errors["question_types"])
    task.refresh_from_db()
    assert task.question_types == before
