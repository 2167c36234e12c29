"""The hand-written reads of the worker's hot path give exactly what the ORM gives (SQLite and PostgreSQL)."""

import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Model
from django.test import Client
from django.utils import timezone

from annotation.models import AnswerSpan, Participation, Response
from annotation.services.session import steps, worker_sql
from tests.factories import make_classification_task
from tests.worker.conftest import login, make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State


def fields(instance: Model) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def read(participation_id: int) -> worker_sql.WorkerState | None:
    return steps.read_worker_state(participation_id)


def test_a_participation_is_read_with_every_field_and_its_relations_as_the_orm_reads_it(ner_task):
    p = make_participation(ner_task, state=State.TEST, test_order="shuffled")
    Participation.objects.filter(pk=p.pk).update(
        platform_data={"assignmentId": "A1", "nested": [1, "é"]},
        test_seed=2**61 + 7,
        finished_at=timezone.now() - timedelta(days=1),
    )
    expected = Participation.objects.select_related("condition__study", "study", "task", "worker").get(pk=p.pk)
    state = read(p.pk)
    participation = state.participation
    assert fields(participation) == fields(expected)
    for relation in ("condition", "study", "task", "worker"):
        assert fields(getattr(participation, relation)) == fields(getattr(expected, relation))
    assert fields(participation.condition.study) == fields(expected.study)
    assert isinstance(participation.platform_data, dict) and isinstance(participation.task.question_types, list)
    assert vars(participation).keys() == vars(expected).keys()  # nothing added to the instance


def test_instances_read_by_hand_save_like_orm_instances(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    participation = read(p.pk).participation
    assert (participation._state.adding, participation._state.db) == (False, "default")
    participation.platform_data = {"k": "v"}
    participation.save(update_fields=["platform_data"])
    assert Participation.objects.get(pk=p.pk).platform_data == {"k": "v"} and Participation.objects.count() == 1


def test_the_participation_comes_with_its_current_and_next_item_and_the_tasks_label_words(sst_task, ner_task):
    p = make_participation(sst_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    Response.objects.filter(participation=p, position=0).update(status="skipped", submitted_at=timezone.now())
    state = read(p.pk)
    step = state.step
    assert step.phase == "test" and (step.current.position, step.next.position) == (1, 2)
    expected = worker_sql.step_head(p.pk, "test")
    assert step == expected  # instances compare by primary key: the fields are compared below
    for item, other in ((step.current, expected.current), (step.next, expected.next)):
        assert fields(item) == fields(other) and fields(item.example) == fields(other.example)
    assert step.size == expected.size == Response.objects.filter(participation=p).count()
    assert state.label_names == set(sst_task.labels.values_list("name", flat=True)) and state.label_names
    # The labels in their order, with the texts the help pop-ups show.
    assert [(x.name, x.definition, x.example) for x in state.labels] == list(
        sst_task.labels.order_by("position", "name").values_list("name", "definition", "example")
    )
    assert read(make_participation(ner_task, state=State.TEST).pk).label_names == frozenset()


def test_outside_a_step_there_is_no_step_and_once_it_is_done_nothing_is_pending(ner_task):
    claimed = make_participation(ner_task, state=State.CLAIMED)
    assert read(claimed.pk).step is None
    done = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=done, phase=Response.Phase.TEST)
    Response.objects.filter(participation=done).update(status="skipped", submitted_at=timezone.now())
    assert read(done.pk).step == worker_sql.StepHead(phase="test")


def test_the_last_pending_item_has_no_next_one(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    Response.objects.filter(participation=p, position__lt=2).update(status="skipped", submitted_at=timezone.now())
    step = read(p.pk).step
    assert (step.current.position, step.next, step.size) == (2, None, 3)


def test_the_step_read_with_the_participation_is_used_until_the_request_writes(ner_task, django_assert_num_queries):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    state = read(p.pk)
    participation = state.participation
    with django_assert_num_queries(0):
        head = steps.step_head(participation=participation, phase="test", known=state.step)
        assert head.current.position == 0
    Response.objects.filter(participation=p, position=0).update(status="skipped", submitted_at=timezone.now())
    with django_assert_num_queries(1):  # after a write: read from the database
        assert steps.step_head(participation=participation, phase="test").current.position == 1
    with django_assert_num_queries(1):  # another phase than the one read
        assert steps.step_head(participation=participation, phase="training", known=state.step).current is None


def test_reading_the_relations_runs_no_further_query(ner_task, django_assert_num_queries):
    p = make_participation(ner_task, shots=10, state=State.TRAINING)
    with django_assert_num_queries(1):
        participation = read(p.pk).participation
        _ = (
            participation.condition.shots,
            participation.condition.study.slug,
            participation.study.slug,
            participation.task.slug,
            participation.worker.platform,
        )


def test_an_unknown_participation_reads_as_none(db):
    assert read(123456) is None


def test_a_step_head_is_its_first_pending_items_in_order_with_examples_and_the_step_size(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    first = Response.objects.get(participation=p, phase="test", position=0)
    Response.objects.filter(pk=first.pk).update(status="skipped", submitted_at=timezone.now(), answer=[])
    head = worker_sql.step_head(p.pk, "test")
    expected = list(
        Response.objects.filter(participation=p, phase="test", status="pending")
        .select_related("example")
        .order_by("position")[:2]
    )
    assert [fields(head.current), fields(head.next)] == [fields(r) for r in expected]
    assert [fields(head.current.example), fields(head.next.example)] == [fields(r.example) for r in expected]
    assert head.size == 3
    assert steps.progress_at(head.current, head.size).as_dict()["text"] == "Item 2 of 3"


def test_no_pending_items_once_the_step_is_done_or_for_another_phase(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    assert worker_sql.step_head(p.pk, "training") == worker_sql.StepHead(phase="training")
    Response.objects.filter(participation=p).update(status="skipped", submitted_at=timezone.now())
    assert worker_sql.step_head(p.pk, "test") == worker_sql.StepHead(phase="test")


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


# --- PostgreSQL: the driver prepares the statements ------------------------------------


def _threshold() -> int | None:
    return connection.settings_dict["OPTIONS"].get("prepare_threshold")


def _captured(fn) -> list[str]:
    """The SQL of the statements ``fn`` runs, as Django hands it to the driver (with %s placeholders)."""
    statements = []

    def capture(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        fn()
    return statements


def _prepared(sql: str) -> list[tuple[str, int]]:
    """(name, parameter count) of each statement this session has prepared for ``sql`` (the driver
    numbers the placeholders, and prepares a statement again for other parameter types)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, statement, cardinality(parameter_types) FROM pg_prepared_statements")
        return [(name, n) for name, statement, n in cursor.fetchall() if re.sub(r"\$\d+", "%s", statement) == sql]


@pytest.mark.postgres
def test_the_driver_prepares_the_read_and_the_write_of_a_submission(db):
    """psycopg prepares a statement on the server once the connection has run it prepare_threshold times;
    DB_PREPARE_THRESHOLD=none turns that off, and the hot path runs all the same."""
    p = make_participation(make_classification_task(slug="prepared", n_test=(_threshold() or 0) + 5), state=State.TEST)
    client = login(Client(), p)
    assert client.get("/api/session/current/").status_code == 200  # lays the step out
    (read_sql,) = _captured(lambda: steps.read_worker_state(p.pk))

    def submit():
        item = client.get("/api/session/current/").json()["item"]["item"]
        reply = client.post(
            "/api/session/submit/",
            data=json.dumps({"item": item, "label": "positive", "confidence": 3}),
            content_type="application/json",
        )
        assert reply.status_code == 200, reply.content

    lock_sql = [sql for sql in _captured(submit) if sql.startswith("WITH locked AS")]
    assert len(lock_sql) == 1
    for _ in range((_threshold() or 0) + 1):
        submit()
    for sql in (read_sql, lock_sql[0]):
        assert bool(_prepared(sql)) == (_threshold() is not None), sql


@pytest.mark.postgres
def test_the_hot_path_runs_on_after_the_session_drops_its_prepared_statements(ner_task):
    p, _ = _laid_out(ner_task)
    for _ in range((_threshold() or 0) + 2):
        assert steps.read_worker_state(p.pk).participation.pk == p.pk
    with connection.cursor() as cursor:  # what a pooler's reset of a server session does
        cursor.execute("DEALLOCATE ALL")
    for _ in range((_threshold() or 0) + 2):
        assert steps.read_worker_state(p.pk).step.current.position == 0
        assert worker_sql.step_head(p.pk, "test").next.position == 1


@pytest.mark.postgres
def test_the_lock_finds_its_row_by_primary_key_whatever_the_statistics_say(db):
    """With statistics taken while the table was empty, the generic plan PostgreSQL caches for the prepared
    lock walked the partial index of pending rows (every worker's) filtering by id; it must probe the key."""
    if _threshold() is None:
        pytest.skip("statements are not prepared (DB_PREPARE_THRESHOLD=none): no generic plan is cached")
    with connection.cursor() as cursor:
        # A database analysed before its studies opened: an empty table with no pages. Earlier tests leave
        # dead rows' pages behind (their transactions rolled back), which would make a sequential scan look
        # cheap; TRUNCATE gives the table a new, empty file, and is undone with the test's transaction.
        cursor.execute("TRUNCATE annotation_response CASCADE")
        cursor.execute("ANALYZE annotation_response")
    task = make_task_with_items(slug="many", test=[(f"Text number {i}.", []) for i in range(600)])
    p = make_participation(task, state=State.TEST)
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    rows = Response.objects.filter(participation=p).order_by("position")[: _threshold() + 2]

    def lock_each():
        for row in rows:
            changes = {"status": "skipped", "answer": [], "submitted_at": timezone.now()}
            assert worker_sql.lock_response(row.pk, changes) == (True, False)

    sql = _captured(lock_each)[-1]
    prepared = _prepared(sql)
    assert prepared
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")  # the plan reused after 5 executions
        for name, n in prepared:  # a generic plan does not depend on the values: NULLs will do
            cursor.execute(f"EXPLAIN EXECUTE {connection.ops.quote_name(name)} ({', '.join(['NULL'] * n)})")
            plan = "\n".join(line for (line,) in cursor.fetchall())
            assert "response_pending" not in plan and "annotation_response_pkey" in plan, plan
