"""The hand-written reads of the worker's hot path give exactly what the ORM gives (SQLite and PostgreSQL)."""
from datetime import timedelta

import pytest
from django.db.models import Model
from django.utils import timezone

from annotation.models import Participation, Response
from annotation.services import steps, worker_sql
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State


def fields(instance: Model) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def test_a_participation_is_read_with_every_field_and_its_relations_as_the_orm_reads_it(ner_task):
    p = make_participation(ner_task, state=State.TEST, test_order="shuffled")
    Participation.objects.filter(pk=p.pk).update(
        platform_data={"assignmentId": "A1", "nested": [1, "é"]}, test_seed=2**61 + 7,
        finished_at=timezone.now() - timedelta(days=1),
    )
    expected = Participation.objects.select_related("condition__study", "study", "task", "worker").get(pk=p.pk)
    read = worker_sql.participation(p.pk)
    assert fields(read) == fields(expected)
    for relation in ("condition", "study", "task", "worker"):
        assert fields(getattr(read, relation)) == fields(getattr(expected, relation))
    assert fields(read.condition.study) == fields(expected.study)
    assert isinstance(read.platform_data, dict) and isinstance(read.task.question_types, list)


def test_reading_the_relations_runs_no_further_query(ner_task, django_assert_num_queries):
    p = make_participation(ner_task, shots=10, state=State.TRAINING)
    with django_assert_num_queries(1):
        read = worker_sql.participation(p.pk)
        _ = (read.condition.shots, read.condition.study.slug, read.study.slug, read.task.slug, read.worker.platform)


def test_an_unknown_participation_reads_as_none(db):
    assert worker_sql.participation(123456) is None


def test_pending_rows_are_the_first_pending_items_in_order_with_examples_and_the_step_size(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    first = Response.objects.get(participation=p, phase="test", position=0)
    Response.objects.filter(pk=first.pk).update(status="skipped", submitted_at=timezone.now(), answer=[])
    rows = worker_sql.pending_rows(participation_id=p.pk, phase="test", limit=2)
    expected = list(
        Response.objects.filter(participation=p, phase="test", status="pending").select_related("example")
        .order_by("position")[:2]
    )
    assert [fields(r) for r in rows] == [fields(r) for r in expected]
    assert [fields(r.example) for r in rows] == [fields(r.example) for r in expected]
    assert [r.step_size for r in rows] == [3, 3]
    assert steps.progress_at(rows[0]).as_dict()["text"] == "Item 2 of 3"


def test_no_pending_rows_once_the_step_is_done_or_for_another_phase(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    assert worker_sql.pending_rows(participation_id=p.pk, phase="training", limit=2) == []
    Response.objects.filter(participation=p).update(status="skipped", submitted_at=timezone.now())
    assert worker_sql.pending_rows(participation_id=p.pk, phase="test", limit=2) == []


def _laid_out(task):
    p = make_participation(task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    return p, Response.objects.filter(participation=p).order_by("position")


def test_the_lock_writes_a_pending_row_once_and_reports_a_lost_race(ner_task):
    _, rows = _laid_out(ner_task)
    first = rows[0]
    now = timezone.now()
    changes = {"status": "answered", "label": "", "answer": ["Ada Lovelace", "é ✓"], "confidence": 4, "score": 0.5,
               "submitted_at": now}
    assert worker_sql.lock_response(first.pk, changes) is True
    assert worker_sql.lock_response(first.pk, {**changes, "answer": ["changed"]}) is False
    first.refresh_from_db()
    assert (first.status, first.answer, first.confidence, first.score, first.submitted_at) == (
        "answered", ["Ada Lovelace", "é ✓"], 4, 0.5, now)


def test_an_item_is_marked_shown_only_the_first_time(ner_task):
    _, rows = _laid_out(ner_task)
    earlier = timezone.now() - timedelta(seconds=30)
    assert worker_sql.mark_response_shown(rows[1].pk, earlier) is True
    assert worker_sql.mark_response_shown(rows[1].pk, timezone.now()) is False
    assert Response.objects.get(pk=rows[1].pk).shown_at == earlier


def test_spans_are_inserted_with_their_offsets_and_text(ner_task):
    from annotation.models import AnswerSpan

    _, rows = _laid_out(ner_task)
    response = rows[0]
    worker_sql.insert_spans([AnswerSpan(response=response, start=0, end=3, text="Ada"),
                             AnswerSpan(response=response, start=4, end=12, text="Lovelace")])
    worker_sql.insert_spans([])
    assert list(AnswerSpan.objects.filter(response=response).values_list("start", "end", "text")) == [
        (0, 3, "Ada"), (4, 12, "Lovelace")]


@pytest.mark.postgres
def test_statements_are_prepared_again_on_a_new_connection(ner_task):
    from django.db import connection

    p, _ = _laid_out(ner_task)
    assert worker_sql.participation(p.pk).pk == p.pk
    with connection.cursor() as cursor:  # what a server restart or a dropped connection does to a session
        cursor.execute("DEALLOCATE ALL")
    worker_sql._prepared.clear()  # ... and what a new connection object looks like to the module
    assert worker_sql.participation(p.pk).pk == p.pk
    assert [r.position for r in worker_sql.pending_rows(participation_id=p.pk, phase="test", limit=2)] == [0, 1]
