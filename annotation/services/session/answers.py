"""Validating and locking a worker's answer to their current item.

``submit`` and ``skip`` are the only writers of an answer. The lock is a
conditional UPDATE from ``pending``, so whatever arrives twice (a double
click, a replay, a reload) is answered with ``AlreadyLocked`` carrying the
stored answer and changes nothing; there is no update or delete.

Every rejection raises an ``AnswerError`` with a stable ``code`` and an HTTP
``status``, before anything is written; a study whose grace period after
closing is over raises ``closing.StudyClosed`` (409 ``study_closed``) first,
from the study loaded with the participation (no query of its own). The happy path runs a fixed number of
queries whatever the size of the study. Given the request's ``WorkerState``
(``known``: the current and next item, the task's label words) it reads
nothing more and writes once: the lock, its spans and, in the test step,
marking the next item shown (the response carries it, so the page needs no
second request per item) are one statement on PostgreSQL, three in a
transaction elsewhere. The activity touch (at most every 10 s) and the end of
a step add their own statements.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.errors import ServiceError
from annotation.models import AnswerSpan, Participation, Response
from annotation.protocol import offsets
from annotation.services.admission import closing
from annotation.services.session import signals, steps, timing, worker_sql
from annotation.services.session.steps import Progress
from annotation.services.session.worker_sql import StepHead, WorkerState
from annotation.services.state import lifecycle
from annotation.services.verdicts import step_end
from tasks_app import scoring
from tasks_app.models import Label

Status = Response.Status
OFFSET_UNITS = ("codepoint", "utf16")
# Spans per answer: a fixed ceiling, and no more than the context has words (twice that where spans may
# nest). Without it an answer could store about n²/2 spans of an n-character context.
MAX_SPANS = 50


class AnswerError(ServiceError):
    """A submission that is refused; nothing was stored."""

    status = 400

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


class InvalidAnswer(AnswerError):
    status = 400


class NotYourItem(AnswerError):
    status = 403


class NotCurrentItem(AnswerError):
    status = 409


class NotInStep(AnswerError):
    status = 409


class SkipNotAllowed(AnswerError):
    status = 409


class AlreadyLocked(AnswerError):
    """The item was answered before: ``stored`` is the answer that stands."""

    status = 409

    def __init__(self, stored: dict):
        super().__init__("already_locked", "this item's answer is already locked and cannot be changed")
        self.stored = stored

    def extra(self) -> dict[str, Any]:
        return {"answer": self.stored}


@dataclass(frozen=True)
class ValidSpan:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class NextItem:
    """The test step's next item, already marked shown, and the progress at it."""

    response: Response
    progress: Progress


@dataclass
class SubmitResult:
    response: Response
    spans: list[AnswerSpan] = field(default_factory=list)
    step_finished: bool = False
    state: str = ""
    next: NextItem | None = None  # in the test step, the item that follows the locked one


# --- Reading back ---------------------------------------------------------------


def span_dict(context: str, start: int, end: int, text: str) -> dict:
    """A span for JSON: Python indices and the same offsets in UTF-16 units for browsers."""
    return {
        "start": start,
        "end": end,
        "text": text,
        "utf16_start": offsets.index_to_utf16(context, start),
        "utf16_end": offsets.index_to_utf16(context, end),
    }


def stored_answer(response: Response, spans: list[AnswerSpan] | None = None) -> dict:
    """The worker's own locked answer (never the gold)."""
    if spans is None:
        spans = list(response.spans.all())
    context = response.example.context_text
    return {
        "item": response.pk,
        "phase": response.phase,
        "status": response.status,
        "label": response.label,
        "answer": list(response.answer),
        "spans": [span_dict(context, s.start, s.end, s.text) for s in sorted(spans, key=lambda s: (s.start, s.end))],
        "confidence": response.confidence,
        "submitted_at": response.submitted_at.isoformat() if response.submitted_at else None,
    }


# --- Validation (pure apart from the label lookup) -------------------------------


def _check_confidence(confidence: Any, *, required: bool) -> int | None:
    if confidence is None:
        if required:
            raise InvalidAnswer("confidence_required", gettext("rate your confidence from 1 (strongly disagree) to 5"))
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int):
        raise InvalidAnswer("confidence_out_of_range", gettext("confidence must be an integer from 1 to 5"))
    if not 1 <= confidence <= 5:
        raise InvalidAnswer(
            "confidence_out_of_range", gettext("confidence %(value)s is outside 1..5") % {"value": confidence}
        )
    return confidence


def _to_index(context: str, value: Any, unit: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidAnswer("invalid_span", f"the span's {name} must be an integer")
    if unit == "utf16":
        try:
            return offsets.utf16_to_index(context, value)
        except offsets.OffsetError as exc:
            raise InvalidAnswer(exc.code, str(exc)) from None
    if not 0 <= value <= len(context):
        raise InvalidAnswer("offset_out_of_range", f"the span's {name} {value} is outside 0..{len(context)}")
    return value


def span_limit(context: str, *, overlapping: bool = False) -> int:
    """The most spans one answer to this context may have (MAX_SPANS, or fewer for a short context)."""
    words = len(context.split())
    return max(1, min(MAX_SPANS, 2 * words if overlapping else words))


def validate_spans(
    *, context: str, spans: Any, unit: str, multiple: bool, overlapping: bool = False
) -> list[ValidSpan]:
    """Check raw spans ({start, end, text}) against the context; return them in Python indices.

    Several spans only where ``multiple``, at most ``span_limit`` of them; never twice the same span
    (the same offsets). Spans that differ by a character are different answers, as S1 compares exact
    strings (SQuAD's gold has both ``a "unit"`` and ``a "unit``); overlapping spans only where
    ``overlapping`` (nested names).
    """
    if unit not in OFFSET_UNITS:
        raise InvalidAnswer("invalid_offset_unit", f"offset_unit must be one of {', '.join(OFFSET_UNITS)}")
    if not isinstance(spans, list):
        raise InvalidAnswer("invalid_span", gettext("spans must be a list of {start, end, text}"))
    if len(spans) > 1 and not multiple:
        raise InvalidAnswer("too_many_spans", gettext("this task takes one span at most"))
    limit = span_limit(context, overlapping=overlapping)
    if len(spans) > limit:  # before any span is checked: the work stays bounded
        raise InvalidAnswer(
            "too_many_spans", gettext("an answer to this item takes %(limit)s spans at most") % {"limit": limit}
        )
    result: list[ValidSpan] = []
    seen: set[tuple[int, int]] = set()
    for raw in spans:
        if not isinstance(raw, dict) or not {"start", "end", "text"} <= raw.keys():
            raise InvalidAnswer("invalid_span", gettext("each span needs start, end and text"))
        if not isinstance(raw["text"], str):
            raise InvalidAnswer("invalid_span", gettext("a span's text must be a string"))
        start = _to_index(context, raw["start"], unit, "start")
        end = _to_index(context, raw["end"], unit, "end")
        if start >= end:
            raise InvalidAnswer(
                "empty_span",
                gettext("a span must have start < end (got %(start)s..%(end)s)") % {"start": start, "end": end},
            )
        text = context[start:end]
        if raw["text"] != text:
            raise InvalidAnswer("text_mismatch", f"the span's text {raw['text']!r} is not the context's {text!r}")
        if not text.strip():
            raise InvalidAnswer("blank_span", gettext("a span must contain more than white space"))
        try:
            offsets.check_span_boundaries(context, start, end)
        except offsets.OffsetError as exc:
            raise InvalidAnswer(exc.code, str(exc)) from None
        if (start, end) in seen:
            raise InvalidAnswer("duplicate_span", gettext("the span “%(text)s” is given twice") % {"text": text})
        seen.add((start, end))
        result.append(ValidSpan(start, end, text))
    result.sort(key=lambda s: (s.start, s.end))
    if not overlapping:
        for before, after in zip(result, result[1:], strict=False):
            if after.start < before.end:
                raise InvalidAnswer(
                    "overlapping_spans",
                    gettext("the spans “%(first)s” and “%(second)s” overlap: this task takes separate spans")
                    % {"first": before.text, "second": after.text},
                )
    return result


def _validate(
    *,
    response: Response,
    participation: Participation,
    label_names: frozenset[str] | None,
    label: Any,
    spans: Any,
    unit: str,
    no_answer: bool,
) -> tuple[str, str, list[str], list[ValidSpan]]:
    """(status, label, answer strings, spans) for a valid submission, else InvalidAnswer."""
    task = participation.task
    if task.is_classification:
        if spans:
            raise InvalidAnswer("spans_not_allowed", gettext("a classification item takes a label, not spans"))
        if no_answer:
            raise InvalidAnswer("no_answer_not_allowed", gettext("a classification item needs one of its labels"))
        if not isinstance(label, str) or not label:
            raise InvalidAnswer("label_required", gettext("choose one of the labels"))
        if label_names is not None:
            known = label in label_names
        else:
            known = Label.objects.filter(task_id=task.pk, name=label).exists()
        if not known:
            raise InvalidAnswer("unknown_label", gettext("“%(label)s” is not a label of this task") % {"label": label})
        return Status.ANSWERED, label, [label], []
    if label not in (None, ""):
        raise InvalidAnswer("label_not_allowed", gettext("a span item takes spans of the context, not a label"))
    spans = spans or []
    if no_answer and spans:
        raise InvalidAnswer("conflicting_answer", gettext("choose either spans or no answer, not both"))
    if no_answer:
        if not task.empty_answer_allowed:
            raise InvalidAnswer(
                "no_answer_not_allowed", gettext("every item of this task has an answer: select it (or skip the item)")
            )
        return Status.NO_ANSWER, "", [], []
    valid = validate_spans(
        context=response.example.context_text,
        spans=spans,
        unit=unit,
        multiple=task.multiple_spans,
        overlapping=task.overlapping_spans,
    )
    if not valid:
        raise InvalidAnswer("answer_required", gettext("select at least one span, or choose no answer"))
    texts = list(dict.fromkeys(s.text for s in valid))
    return Status.ANSWERED, "", texts, valid


# --- Locking --------------------------------------------------------------------


def _refuse_non_current(participation: Participation, item_id: int) -> AnswerError:
    response = Response.all_objects.select_related("example").filter(pk=item_id, participation=participation).first()
    if response is None:
        return NotYourItem("not_your_item", gettext("This item is not assigned to you."))
    if response.is_locked:
        return AlreadyLocked(stored_answer(response))
    if steps.phase_for(participation) is None:
        return NotInStep(
            "not_in_step", gettext("your participation is %(state)s, not in a step") % {"state": participation.state}
        )
    return NotCurrentItem("not_current_item", "answer the items in order: this is not your current item")


def _current(participation: Participation, item_id: Any, known: WorkerState | None) -> tuple[StepHead, Response]:
    """The head of the participation's step and its current item, if ``item_id`` names that item."""
    if isinstance(item_id, bool) or not isinstance(item_id, int):
        raise InvalidAnswer("invalid_item", gettext("item must be the integer id of your current item."))
    phase = steps.phase_for(participation)
    head = None
    if phase is not None:
        head = steps.step_head(participation=participation, phase=phase, known=known.step if known else None)
    if head is None or head.current is None or head.current.pk != item_id:
        raise _refuse_non_current(participation, item_id)
    return head, head.current


def _lock(
    *,
    participation: Participation,
    head: StepHead,
    response: Response,
    now: datetime,
    changes: Mapping[str, object],
    spans: list[ValidSpan],
) -> SubmitResult:
    """Lock ``response``, the current item of ``head``, with ``changes``."""
    following = head.next
    changes = {
        **changes,
        "submitted_at": now,
        "shown_at": response.shown_at or now,
        "last_seen_at": now,
        "active_ms": timing.active_ms_at(response, now),
        # Beside the page's observed time (signals), the example's estimate, computed once at import: same row,
        # same UPDATE, and no tokenising of the item's text per submission.
        "reading_ms": response.example.reading_estimate_ms,
    }
    if response.phase == Response.Phase.TRAINING:
        changes["revealed_at"] = now  # the submit response carries the reveal
    rows = [AnswerSpan(response=response, start=s.start, end=s.end, text=s.text) for s in spans]
    # The page shows the next test item as soon as this answer is saved: it travels in the same
    # response (one round trip per item), so it is marked shown with the lock. A training answer
    # is followed by its reveal instead.
    show = None
    if following is not None and response.phase == Response.Phase.TEST and following.shown_at is None:
        show = (following.pk, now)
    # Where the lock is one statement (PostgreSQL) and nothing else is written with it, that statement
    # is atomic by itself: no transaction saves the BEGIN and COMMIT round trips of most submissions.
    alone = worker_sql.lock_is_one_statement() and following is not None and not lifecycle.touch_due(participation, now)
    with nullcontext() if alone else transaction.atomic():
        locked, shown = worker_sql.lock_response(response.pk, changes, spans=rows, show=show)
        if not locked:  # the UPDATE found the row no longer pending
            raise _refuse_non_current(participation, response.pk)  # lost a race: now locked
        for name, value in changes.items():
            setattr(response, name, value)
        if shown and following is not None:  # only a following item is ever shown with the lock
            following.shown_at = following.last_seen_at = now
        lifecycle.touch(participation, at=now)
        if following is None:
            step_end.end_step(participation, at=now)  # a verdict that landed meanwhile stands; the lock too
    result = SubmitResult(response=response, spans=rows, step_finished=following is None, state=participation.state)
    if following is not None and response.phase == Response.Phase.TEST:
        assert head.size is not None  # read with the pending rows, of which ``response`` is one
        result.next = NextItem(following, steps.progress_at(following, head.size))
    return result


def submit(
    *,
    participation: Participation,
    item_id: int,
    label: str | None = None,
    spans: list[dict] | None = None,
    offset_unit: str = "codepoint",
    confidence: int | None = None,
    no_answer: bool = False,
    page_signals: Any = None,
    known: WorkerState | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Validate the worker's answer to their current item and lock it, scored with S1.

    ``page_signals`` is the page's integrity signals object (``services.session.signals``), stored with the lock.
    ``known`` is the request's read of this participation, made before any write: its step and the
    task's label words are used instead of reading them again.
    """
    now = now or timezone.now()
    closing.check_can_work(participation, now=now)
    head, response = _current(participation, item_id, known)
    if offset_unit not in OFFSET_UNITS:
        raise InvalidAnswer("invalid_offset_unit", f"offset_unit must be one of {', '.join(OFFSET_UNITS)}")
    if not isinstance(no_answer, bool):
        raise InvalidAnswer("invalid_payload", gettext("no_answer must be true or false"))
    status, label_word, answer, valid_spans = _validate(
        response=response,
        participation=participation,
        label_names=known.label_names if known else None,
        label=label,
        spans=spans,
        unit=offset_unit,
        no_answer=no_answer,
    )
    confidence = _check_confidence(confidence, required=True)
    changes = {
        **signals.parse(page_signals),
        "status": status,
        "label": label_word,
        "answer": answer,
        "confidence": confidence,
        "score": scoring.s1(answer, response.example.gold_answers),
    }
    return _lock(
        participation=participation,
        head=head,
        response=response,
        now=now,
        changes=changes,
        spans=valid_spans,
    )


def skip(
    *,
    participation: Participation,
    item_id: int,
    confidence: int | None = None,
    page_signals: Any = None,
    known: WorkerState | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Record a skip of the current test item; ``page_signals`` and ``known`` as for ``submit``.

    The stored score is the empty answer's (``scoring.stored_skip_score``); the reports apply the skip
    policy (by default a skip scores 0), so the stored data serve every policy.
    """
    now = now or timezone.now()
    closing.check_can_work(participation, now=now)
    head, response = _current(participation, item_id, known)
    if response.phase != Response.Phase.TEST:
        raise SkipNotAllowed("skip_not_allowed", gettext("training items cannot be skipped"))
    confidence = _check_confidence(confidence, required=False)
    changes: dict[str, object] = {
        **signals.parse(page_signals),
        "status": Status.SKIPPED,
        "label": "",
        "answer": [],
        "confidence": confidence,
        "score": scoring.stored_skip_score(response.example.gold_answers),
    }
    return _lock(
        participation=participation,
        head=head,
        response=response,
        now=now,
        changes=changes,
        spans=[],
    )
