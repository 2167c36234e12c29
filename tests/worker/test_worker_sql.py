"""The hand-written reads of the worker's hot path give exactly what the ORM gives (SQLite and PostgreSQL)."""

from datetime import timedelta

import pytest
from django.db.models import Model
from django.utils import timezone

from annotation.models import Participation, Response
from annotation.services import steps, worker_sql
from tests.worker.conftest import make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State


def fields(instance: Model) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def test_a_participation_is_read_with_every_field_and_its_relations_as_the_orm_reads_it(ner_task):
    p = make_participation(ner_task, state=State.TEST, test_order="shuffled")
    Participation.objects.filter(pk=p.pk).update(
        platform_data={"assignmentId": "A1", "nested": [1, "é"]},
        test_seed=2**61 + 7,
        finished_at=timezone.now() - timedelta(days=1),
    )
    expected = Participation.objects.select_related("condition__study", "study", "task", "worker").get(pk=p.pk)
    read = worker_sql.participation(p.pk)
    assert fields(read) == fields(expected)
    for relation in ("condition", "study", "task", "worker"):
        assert fields(getattr(read, relation)) == fields(getattr(expected, relation))
    assert fields(read.condition.study) == fields(expected.study)
    assert isinstance(read.platform_data, dict) and isinstance(read.task.question_types, list)


def test_instances_read_by_hand_save_like_orm_instances(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    read = worker_sql.participation(p.pk)
    assert (read._state.adding, read._state.db) == (False, "default")
    read.platform_data = {"k": "v"}
    read.save(update_fields=["platform_data"])
    assert Participation.objects.get(pk=p.pk).platform_data == {"k": "v"} and Participation.objects.count() == 1


def test_the_participation_comes_with_its_first_pending_rows_and_the_tasks_label_words(sst_task, ner_task):
    p = make_participation(sst_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    Response.objects.filter(participation=p, position=0).update(status="skipped", submitted_at=timezone.now())
    read = worker_sql.participation(p.pk)
    phase, rows = read.pending_prefetch
    assert phase == "test" and [r.position for r in rows] == [1, 2]
    expected = worker_sql.pending_rows(participation_id=p.pk, phase="test", limit=2)
    assert [fields(r) for r in rows] == [fields(r) for r in expected]
    assert [fields(r.example) for r in rows] == [fields(r.example) for r in expected]
    assert [r.step_size for r in rows] == [r.step_size for r in expected]
    assert read.task.label_names == set(sst_task.labels.values_list("name", flat=True)) and read.task.label_names
    assert worker_sql.participation(make_participation(ner_task, state=State.TEST).pk).task.label_names == set()


def test_outside_a_step_or_once_it_is_done_nothing_pending_is_prefetched(ner_task):
    claimed = make_participation(ner_task, state=State.CLAIMED)
    assert worker_sql.participation(claimed.pk).pending_prefetch == (None, [])
    done = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=done, phase=Response.Phase.TEST)
    Response.objects.filter(participation=done).update(status="skipped", submitted_at=timezone.now())
    assert worker_sql.participation(done.pk).pending_prefetch == ("test", [])


def test_the_prefetched_rows_are_used_once_then_read_again(ner_task, django_assert_num_queries):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    read = worker_sql.participation(p.pk)
    with django_assert_num_queries(0):
        assert [r.position for r in steps.pending_items(participation=read, phase="test", limit=2)] == [0, 1]
    Response.objects.filter(participation=p, position=0).update(status="skipped", submitted_at=timezone.now())
    with django_assert_num_queries(1):  # after a write of the same request: read from the database
        assert [r.position for r in steps.pending_items(participation=read, phase="test", limit=2)] == [1, 2]
    other = worker_sql.participation(p.pk)
    with django_assert_num_queries(1):  # another phase than the one prefetched
        assert steps.pending_items(participation=other, phase="training", limit=2) == []


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
        Response.objects.filter(participation=p, phase="test", status="pending")
        .select_related("example")
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
    changes = {
        "status": "answered",
        "label": "",
        "answer": ["Ada Lovelace", "é ✓"],
        "confidence": 4,
        "score": 0.5,
        "submitted_at": now,
    }
    assert worker_sql.lock_response(first.pk, changes) == (True, False)
    assert worker_sql.lock_response(first.pk, {**changes, "answer": ["changed"]}) == (False, False)
    first.refresh_from_db()
    assert (first.status, first.answer, first.confidence, first.score, first.submitted_at) == (
        "answered",
        ["Ada Lovelace", "é ✓"],
        4,
        0.5,
        now,
    )


def test_the_lock_stores_the_spans_and_marks_the_next_item_shown_in_the_same_write(ner_task):
    from annotation.models import AnswerSpan

    _, rows = _laid_out(ner_task)
    first, second = rows[0], rows[1]
    now = timezone.now()
    changes = {"status": "answered", "answer": ["Ada", "Lovelace 😀"], "confidence": 3, "submitted_at": now}
    spans = [
        AnswerSpan(response=first, start=0, end=3, text="Ada"),
        AnswerSpan(response=first, start=4, end=14, text="Lovelace 😀"),
    ]
    assert worker_sql.lock_response(first.pk, changes, spans=spans, show=(second.pk, now)) == (True, True)
    assert list(AnswerSpan.objects.filter(response=first).order_by("start").values_list("start", "end", "text")) == [
        (0, 3, "Ada"),
        (4, 14, "Lovelace 😀"),
    ]
    second.refresh_from_db()
    assert second.shown_at == second.last_seen_at == now


def test_a_lost_lock_stores_no_spans_and_marks_nothing_shown(ner_task):
    from annotation.models import AnswerSpan

    _, rows = _laid_out(ner_task)
    first, second = rows[0], rows[1]
    Response.objects.filter(pk=first.pk).update(status="skipped", submitted_at=timezone.now(), answer=[])
    spans = [AnswerSpan(response=first, start=0, end=3, text="Ada")]
    result = worker_sql.lock_response(
        first.pk, {"status": "answered", "submitted_at": timezone.now()}, spans=spans, show=(second.pk, timezone.now())
    )
    assert result == (False, False)
    assert not AnswerSpan.objects.filter(response=first).exists()
    assert Response.objects.get(pk=second.pk).shown_at is None


def test_an_item_already_shown_keeps_its_first_time_when_the_lock_would_mark_it(ner_task):
    _, rows = _laid_out(ner_task)
    first, second = rows[0], rows[1]
    earlier = timezone.now() - timedelta(seconds=30)
    assert worker_sql.mark_response_shown(second.pk, earlier) is True
    result = worker_sql.lock_response(
        first.pk, {"status": "skipped", "answer": [], "submitted_at": timezone.now()}, show=(second.pk, timezone.now())
    )
    assert result == (True, False)
    assert Response.objects.get(pk=second.pk).shown_at == earlier


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
    worker_sql.insert_spans(
        [
            AnswerSpan(response=response, start=0, end=3, text="Ada"),
            AnswerSpan(response=response, start=4, end=12, text="Lovelace"),
        ]
    )
    worker_sql.insert_spans([])
    assert list(AnswerSpan.objects.filter(response=response).values_list("start", "end", "text")) == [
        (0, 3, "Ada"),
        (4, 12, "Lovelace"),
    ]


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


@pytest.mark.postgres
def test_the_lock_finds_its_row_by_primary_key_whatever_the_statistics_say(db):
    """With statistics taken while the table was empty, the generic plan PostgreSQL caches for the prepared
    lock walked the partial index of pending rows (every worker's) filtering by id; it must probe the key."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_response")  # empty now: a database analysed before its studies opened
    task = make_task_with_items(slug="many", test=[(f"Text number {i}.", []) for i in range(600)])
    p = make_participation(task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    row = Response.objects.filter(participation=p).order_by("position").first()
    statements = []

    def capture(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        assert worker_sql.lock_response(row.pk, {"status": "skipped", "answer": [], "submitted_at": timezone.now()})
    sql, params = statements[-1]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")  # the plan reused after 5 executions
        if sql.startswith("EXECUTE"):  # client-side binding: the module prepared the statement itself
            cursor.execute("EXPLAIN " + sql, params)
        else:  # server-side binding: psycopg prepares this very text; explain it prepared, with these values
            import re

            import psycopg

            assert sql.startswith(("UPDATE", "WITH locked AS (UPDATE"))
            numbered = iter(range(1, sql.count("%s") + 1))
            cursor.execute("PREPARE lock_probe AS " + re.sub("%s", lambda _: f"${next(numbered)}", sql))
            with psycopg.ClientCursor(connection.connection) as client:
                explain = client.mogrify(f"EXPLAIN EXECUTE lock_probe ({', '.join(['%s'] * len(params))})", params)
            cursor.execute(explain)
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert "response_pending" not in plan and "annotation_response_pkey" in plan, plan
