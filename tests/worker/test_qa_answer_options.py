"""QA answer options as in the CLUES paper: several spans per answer, and no "No answer" where the gold
is never empty (ReCoRD), through the session API."""

import importlib
import json

import pytest
from django.apps import apps as django_apps

from annotation.models import Participation, Response
from tasks_app.catalog import BY_SLUG
from tasks_app.models import Task
from tests.factories import ExampleFactory, ResponseFactory
from tests.worker.conftest import make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State
API = "/api/session/"
PARAGRAPH = "The Normans gave their name to Normandy , a region in France ."


def post(client, path, body):
    return client.post(API + path, data=json.dumps(body), content_type="application/json")


def qa_task(*, slug: str, multiple_spans: bool, empty_answer_allowed: bool = True):
    task = make_task_with_items(
        slug=slug,
        multiple_spans=multiple_spans,
        test=[(PARAGRAPH, ["Normandy", "France"]), (PARAGRAPH, ["Normans"])],
        question="Where?",
    )
    task.empty_answer_allowed = empty_answer_allowed
    task.save()
    return task


def spans(*texts: str) -> list[dict]:
    return [{"start": PARAGRAPH.index(t), "end": PARAGRAPH.index(t) + len(t), "text": t} for t in texts]


def test_the_catalog_makes_squad_multi_span_and_record_answer_always():
    squad = BY_SLUG["squad2"]
    assert squad.multiple_spans and squad.overlapping_spans and squad.empty_answer_allowed
    assert not BY_SLUG["record"].multiple_spans and not BY_SLUG["record"].empty_answer_allowed
    assert all(BY_SLUG[s].empty_answer_allowed for s in ("conll03", "wikiann"))


def test_a_multi_span_qa_answer_with_every_gold_text_earns_full_credit(client, worker):
    p = make_participation(qa_task(slug="squad-multi", multiple_spans=True), state=State.TEST)
    worker(p)
    item = client.get(API + "current/").json()["item"]
    assert item["multiple_spans"] is True and item["empty_answer_allowed"] is True
    response = post(client, "submit/", {"item": item["item"], "spans": spans("Normandy", "France"), "confidence": 4})
    assert response.status_code == 200
    assert Response.objects.get(pk=item["item"]).score == 1.0


def test_a_single_span_task_refuses_a_second_span_and_caps_credit(client, worker):
    p = make_participation(qa_task(slug="squad-single", multiple_spans=False), state=State.TEST)
    worker(p)
    item = client.get(API + "current/").json()["item"]
    assert item["multiple_spans"] is False
    refused = post(client, "submit/", {"item": item["item"], "spans": spans("Normandy", "France"), "confidence": 4})
    assert refused.status_code == 400
    post(client, "submit/", {"item": item["item"], "spans": spans("Normandy"), "confidence": 4})
    # P = 1, R = 1/2: S1 = 2/3, the single-span ceiling on an item whose gold has two texts
    assert Response.objects.get(pk=item["item"]).score == pytest.approx(2 / 3)


def test_no_answer_is_refused_where_the_gold_is_never_empty_but_a_skip_is_not(client, worker):
    p = make_participation(
        qa_task(slug="record-like", multiple_spans=False, empty_answer_allowed=False), state=State.TEST
    )
    worker(p)
    item = client.get(API + "current/").json()["item"]
    assert item["empty_answer_allowed"] is False
    refused = post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3})
    assert refused.status_code == 400 and refused.json()["error"] == "no_answer_not_allowed"
    assert Response.objects.get(pk=item["item"]).status == Response.Status.PENDING  # nothing stored
    assert post(client, "skip/", {"item": item["item"]}).status_code == 200
    assert Response.objects.get(pk=item["item"]).status == Response.Status.SKIPPED


def test_a_classification_item_says_no_empty_answer(client, worker, sst_task):
    p = make_participation(sst_task, state=State.TEST)
    worker(p)
    assert client.get(API + "current/").json()["item"]["empty_answer_allowed"] is False


def _qa_migration():
    return importlib.import_module("annotation.migrations.0009_clues_qa_answer_options")


def test_the_data_migration_made_squad_multi_span_and_record_answer_always():
    assert Task.objects.filter(slug="squad2", multiple_spans=True, overlapping_spans=True).exists()
    assert Task.objects.get(slug="record").empty_answer_allowed is False


def test_the_data_migration_keeps_a_squad_task_single_span_once_workers_have_answered():
    squad = Task.objects.get(slug="squad2")
    Task.objects.filter(pk=squad.pk).update(multiple_spans=False, overlapping_spans=False)
    example = ExampleFactory(task=squad, context=PARAGRAPH, gold_answers=["Normandy"])
    ResponseFactory(participation=make_participation(squad, state=State.TEST), example=example)
    _qa_migration().forwards(django_apps, None)
    squad.refresh_from_db()
    assert (squad.multiple_spans, squad.overlapping_spans) == (False, False)
    Response.objects.all().delete()
    _qa_migration().forwards(django_apps, None)
    squad.refresh_from_db()
    assert (squad.multiple_spans, squad.overlapping_spans) == (True, True)
