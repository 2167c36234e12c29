"""Validating and locking answers (the services): every refusal stores nothing."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import AnswerSpan, Participation, Response
from annotation.services.session import answers, steps
from annotation.services.session.answers import (
    AlreadyLocked,
    InvalidAnswer,
    NotCurrentItem,
    NotYourItem,
    SkipNotAllowed,
)
from tasks_app.models import Task
from tests.worker.conftest import make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State


def snapshot(p: Participation):
    p.refresh_from_db()
    rows = list(Response.objects.filter(participation=p).order_by("pk").values())
    spans = list(AnswerSpan.objects.filter(response__participation=p).values())
    return p.state, p.completion_code, rows, spans


def current(p):
    return steps.current_item(participation=p)


@pytest.fixture
def ner_p(ner_task):
    p = make_participation(ner_task, state=State.TEST)
    steps.lay_out_current(participation=p)
    return p


@pytest.fixture
def sst_p(sst_task):
    p = make_participation(sst_task, state=State.TEST)
    steps.lay_out_current(participation=p)
    return p


def span(context, text, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(text, start + 1)
    return {"start": start, "end": start + len(text), "text": text}


# --- Locking ----------------------------------------------------------------------


def test_a_label_is_locked_with_its_answer_set_score_and_confidence(sst_p):
    item = current(sst_p)
    gold = item.example.gold_answers[0]
    result = answers.submit(participation=sst_p, item_id=item.pk, label=gold, confidence=4)
    row = Response.objects.get(pk=item.pk)
    assert (row.status, row.label, row.answer, row.score, row.confidence) == ("answered", gold, [gold], 1.0, 4)
    assert row.submitted_at is not None and row.shown_at is not None
    assert result.step_finished is False and current(sst_p).position == 1


def test_spans_are_stored_with_python_offsets_and_the_answer_is_their_texts(ner_p):
    item = current(ner_p)
    ctx = item.example.context
    answers.submit(
        participation=ner_p,
        item_id=item.pk,
        confidence=5,
        spans=[span(ctx, "Charles Babbage"), span(ctx, "Ada Lovelace")],
    )
    row = Response.objects.get(pk=item.pk)
    assert row.answer == ["Ada Lovelace", "Charles Babbage"] and row.score == 1.0
    assert [(s.start, s.end, s.text) for s in row.spans.all()] == [(0, 12, "Ada Lovelace"), (17, 32, "Charles Babbage")]


def test_nested_spans_are_allowed_where_the_task_allows_overlap(db):
    task = make_task_with_items(slug="nest", test=[("New York City is big .", ["New York City"])])
    task.overlapping_spans = True  # by default, overlapping spans are refused
    task.save()
    p = make_participation(task, state=State.TEST)
    item = current(p)
    ctx = item.example.context
    answers.submit(
        participation=p, item_id=item.pk, confidence=3, spans=[span(ctx, "New York"), span(ctx, "New York City")]
    )
    row = Response.objects.get(pk=item.pk)
    assert row.spans.count() == 2 and row.answer == ["New York", "New York City"]
    assert row.score == pytest.approx(2 / 3)


def test_utf16_offsets_from_a_browser_are_converted(db):
    task = make_task_with_items(slug="emo", test=[("😀👍🏽 Ada met 🇫🇷 Marie .", ["Marie"])])
    p = make_participation(task, state=State.TEST)
    item = current(p)
    ctx = item.example.context
    start = len(ctx[: ctx.index("Marie")].encode("utf-16-le")) // 2
    answers.submit(
        participation=p,
        item_id=item.pk,
        confidence=3,
        offset_unit="utf16",
        spans=[{"start": start, "end": start + 5, "text": "Marie"}],
    )
    stored = AnswerSpan.objects.get(response=item)
    assert ctx[stored.start : stored.end] == "Marie" and stored.start == ctx.index("Marie")


def test_no_answer_is_stored_as_the_empty_set_distinct_from_a_skip(ner_p):
    first = current(ner_p)
    answers.submit(participation=ner_p, item_id=first.pk, no_answer=True, confidence=2)
    second = current(ner_p)
    answers.skip(participation=ner_p, item_id=second.pk)
    rows = {r.pk: r for r in Response.objects.filter(pk__in=[first.pk, second.pk])}
    assert (rows[first.pk].status, rows[first.pk].answer, rows[first.pk].score) == ("no_answer", [], 0.0)
    assert (rows[second.pk].status, rows[second.pk].answer, rows[second.pk].confidence) == ("skipped", [], None)
    assert rows[second.pk].score == 1.0  # the second item's gold is the empty set: s1([], []) = 1


def test_the_last_test_item_completes_the_participation_with_its_code(sst_p):
    while (item := current(sst_p)) is not None:
        result = answers.submit(participation=sst_p, item_id=item.pk, label="positive", confidence=3)
    assert result.step_finished and result.state == State.COMPLETED
    sst_p.refresh_from_db()
    assert sst_p.state == State.COMPLETED and sst_p.completion_code == "C0DE1234"


def test_the_last_training_item_runs_the_training_filter(sst_task):
    p = make_participation(sst_task, shots=10, state=State.TRAINING, filter_rule="absolute", filter_threshold=0.9)
    while (item := current(p)) is not None:
        result = answers.submit(participation=p, item_id=item.pk, label="negative", confidence=3)
    assert result.state == State.EXCLUDED
    p.refresh_from_db()
    assert p.state == State.EXCLUDED and p.filter_decisions.get().passed is False
    assert p.exclusion_kind == "training_filter"  # the absolute rule's verdict, not an admin's


def test_passing_training_moves_on_to_the_test_step(sst_task):
    p = make_participation(sst_task, shots=10, state=State.TRAINING)
    while (item := current(p)) is not None and item.phase == "training":
        answers.submit(participation=p, item_id=item.pk, label=item.example.gold_answers[0], confidence=5)
    p.refresh_from_db()
    assert p.state == State.TEST
    assert current(p).phase == "test" and current(p).position == 0


def test_active_time_runs_from_shown_to_submit_with_idle_gaps_capped(sst_p):
    item = current(sst_p)
    shown = timezone.now() - timedelta(minutes=10)
    Response.objects.filter(pk=item.pk).update(
        shown_at=shown, last_seen_at=shown + timedelta(seconds=30), active_ms=30_000
    )
    answers.submit(participation=sst_p, item_id=item.pk, label="positive", confidence=3)
    assert Response.objects.get(pk=item.pk).active_ms == 30_000 + 60_000


# --- Refusals: each stores nothing -----------------------------------------------------


def refused(p, exc_type, code, **kwargs):
    before = snapshot(p)
    with pytest.raises(exc_type) as info:
        answers.submit(participation=p, **kwargs)
    assert info.value.code == code
    assert snapshot(p) == before
    return info.value


@pytest.mark.parametrize(
    "payload, code",
    [
        ({"spans": [{"start": 0, "end": 99, "text": "x"}]}, "offset_out_of_range"),
        ({"spans": [{"start": -1, "end": 3, "text": "Ada"}]}, "offset_out_of_range"),
        ({"spans": [{"start": 3, "end": 3, "text": ""}]}, "empty_span"),
        ({"spans": [{"start": 12, "end": 0, "text": "Ada Lovelace"}]}, "empty_span"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada  Lovelace"}]}, "text_mismatch"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}] * 2}, "duplicate_span"),
        ({"spans": [{"start": 12, "end": 13, "text": " "}]}, "blank_span"),
        ({"spans": [{"start": "0", "end": 12, "text": "Ada Lovelace"}]}, "invalid_span"),
        ({"spans": [{"start": 0, "end": 12}]}, "invalid_span"),
        ({"spans": "Ada"}, "invalid_span"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}], "offset_unit": "bytes"}, "invalid_offset_unit"),
        ({"spans": []}, "answer_required"),
        ({}, "answer_required"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}], "no_answer": True}, "conflicting_answer"),
        ({"label": "PER"}, "label_not_allowed"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}], "confidence": None}, "confidence_required"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}], "confidence": 0}, "confidence_out_of_range"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}], "confidence": 6}, "confidence_out_of_range"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}], "confidence": 4.5}, "confidence_out_of_range"),
        ({"spans": [{"start": 0, "end": 12, "text": "Ada Lovelace"}], "confidence": True}, "confidence_out_of_range"),
    ],
)
def test_invalid_span_submissions_are_refused_and_store_nothing(ner_p, payload, code):
    payload = {"confidence": 3, **payload}
    refused(ner_p, InvalidAnswer, code, item_id=current(ner_p).pk, **payload)


@pytest.mark.parametrize(
    "payload, code",
    [
        ({"label": "neutral"}, "unknown_label"),
        ({"label": "Positive"}, "unknown_label"),
        ({}, "label_required"),
        ({"label": ""}, "label_required"),
        ({"label": "positive", "spans": [{"start": 0, "end": 8, "text": "Sentence"}]}, "spans_not_allowed"),
        ({"label": "positive", "no_answer": True}, "no_answer_not_allowed"),
        ({"label": "positive", "confidence": None}, "confidence_required"),
    ],
)
def test_invalid_label_submissions_are_refused_and_store_nothing(sst_p, payload, code):
    payload = {"confidence": 3, **payload}
    refused(sst_p, InvalidAnswer, code, item_id=current(sst_p).pk, **payload)


def test_more_than_one_span_is_refused_where_the_task_takes_one(db):
    task = make_task_with_items(slug="squad", multiple_spans=False, test=[("Paris is in France .", ["Paris"])])
    p = make_participation(task, state=State.TEST)
    ctx = current(p).example.context
    refused(
        p,
        InvalidAnswer,
        "too_many_spans",
        item_id=current(p).pk,
        confidence=3,
        spans=[span(ctx, "Paris"), span(ctx, "France")],
    )


@pytest.mark.parametrize(
    "context, cut",
    [
        ("Jose\u0301 is here", (0, 4)),
        ("🇫🇷 flag", (0, 1)),
        ("👨\u200d👩\u200d👧 family", (0, 2)),
        ("❤\ufe0f love", (0, 1)),
    ],
)
def test_a_span_cutting_a_user_perceived_character_is_refused(db, context, cut):
    task = make_task_with_items(slug="cut", test=[(context, [])])
    p = make_participation(task, state=State.TEST)
    start, end = cut
    refused(
        p,
        InvalidAnswer,
        "cuts_character",
        item_id=current(p).pk,
        confidence=3,
        spans=[{"start": start, "end": end, "text": context[start:end]}],
    )


def test_a_utf16_offset_inside_a_surrogate_pair_is_refused(db):
    task = make_task_with_items(slug="sur", test=[("😀 Ada", ["Ada"])])
    p = make_participation(task, state=State.TEST)
    refused(
        p,
        InvalidAnswer,
        "cuts_character",
        item_id=current(p).pk,
        confidence=3,
        offset_unit="utf16",
        spans=[{"start": 1, "end": 6, "text": "\ude00 Ada"}],
    )


def test_an_item_of_another_worker_is_refused(ner_task, ner_p):
    other = make_participation(ner_task, state=State.TEST)
    their_item = current(other)
    refused(ner_p, NotYourItem, "not_your_item", item_id=their_item.pk, no_answer=True, confidence=3)
    assert snapshot(other)[2][0]["status"] == "pending"


def test_an_item_that_is_not_the_current_one_is_refused(ner_p):
    later = Response.objects.get(participation=ner_p, position=2)
    refused(ner_p, NotCurrentItem, "not_current_item", item_id=later.pk, no_answer=True, confidence=3)


def test_a_repeated_submission_returns_the_stored_answer_and_changes_nothing(ner_p):
    item = current(ner_p)
    ctx = item.example.context
    answers.submit(participation=ner_p, item_id=item.pk, spans=[span(ctx, "Ada Lovelace")], confidence=2)
    error = refused(ner_p, AlreadyLocked, "already_locked", item_id=item.pk, no_answer=True, confidence=5)
    assert error.status == 409
    assert error.stored["answer"] == ["Ada Lovelace"] and error.stored["confidence"] == 2
    assert error.stored["spans"][0]["text"] == "Ada Lovelace"


def test_a_repeated_submission_after_completion_still_returns_the_stored_answer(sst_p):
    while (item := current(sst_p)) is not None:
        answers.submit(participation=sst_p, item_id=item.pk, label="negative", confidence=3)
    last = Response.objects.filter(participation=sst_p).order_by("position").last()
    error = refused(sst_p, AlreadyLocked, "already_locked", item_id=last.pk, label="positive", confidence=5)
    assert error.stored["label"] == "negative"


def test_skip_is_refused_in_the_training_step(sst_task):
    p = make_participation(sst_task, shots=10, state=State.TRAINING)
    item = current(p)
    before = snapshot(p)
    with pytest.raises(SkipNotAllowed):
        answers.skip(participation=p, item_id=item.pk)
    assert snapshot(p) == before


def test_a_non_integer_item_id_is_refused(sst_p):
    refused(sst_p, InvalidAnswer, "invalid_item", item_id="1", label="positive", confidence=3)


def test_a_worker_outside_a_step_cannot_submit(sst_task):
    p = make_participation(sst_task, state=State.TEST)
    item = current(p)
    Participation.objects.filter(pk=p.pk).update(state=State.ABANDONED)
    p.refresh_from_db()
    refused(p, answers.NotInStep, "not_in_step", item_id=item.pk, label="positive", confidence=3)


def test_a_submission_runs_a_fixed_number_of_queries_whatever_the_study_size(db):
    from tests.factories import make_classification_task

    counts = []
    for n_test in (5, 60):
        task = make_classification_task(slug=f"size{n_test}", n_test=n_test)
        p = make_participation(task, state=State.TEST)
        first = current(p)
        second = Response.objects.get(participation=p, position=1)
        answers.submit(participation=p, item_id=first.pk, label="positive", confidence=3)
        with CaptureQueriesContext(connection) as ctx:
            answers.submit(participation=p, item_id=second.pk, label="positive", confidence=3)
        counts.append(len([q for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]))
    assert counts[0] == counts[1] <= 5, counts


def test_a_span_item_without_spans_or_no_answer_is_refused(ner_p):
    assert ner_p.task.kind == Task.Kind.SPAN
    refused(ner_p, InvalidAnswer, "answer_required", item_id=current(ner_p).pk, spans=None, confidence=3)
