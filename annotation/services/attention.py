"""Attention checks: define them, mix them into a worker's test step, score them and apply the rule.

A check is an item whose answer the item itself states ("To show you are reading, choose 'negative'";
"Select the word 'orange' in this sentence: ..."). It appears as item number ``position`` of every
worker's test step, whatever the study's test order (a shuffled order moves the test items only), and
looks like any other item: it is served through a Response row pointing at the check's own Example
(in no example set, so never in the test set or its hash) with ``Response.attention_check`` set.
``Response.objects`` leaves such rows out, so S1, the tables, the agreement and the exports never see
them; this module reads them through ``Response.all_objects``.

A check is passed when the worker's answer scores S1 = 1 against the expected answer (a skip, or any
other answer, fails). At the end of the test step (``step_end``) ``judge`` logs an ``AttentionDecision`` for a
worker who had checks and applies the study's rule: with ``attention_fail_limit`` N > 0, a worker with
N failures or more is flagged for review (still completed) or excluded (state excluded with
``exclusion_kind = "attention"``, paid and given a code as any excluded worker).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Count, Q

from annotation.errors import ServiceError
from annotation.models import AttentionCheck, AttentionDecision, Participation, Response, Study
from annotation.services import offsets
from tasks_app.models import Example, ExampleSet, ExampleSetItem, Label

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

SOURCE_PREFIX = "attention-check:"  # the source_id of a check's own Example
REASON_PREFIX = "attention: "  # the reason of the exclusion event (exclusion_kind says it too)
MAX_TEXT = 5000


class AttentionCheckError(ServiceError, ValueError):
    """A check's definition is invalid; ``field`` names the input at fault (as a form or serializer would)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message

    @property
    def fields(self) -> dict[str, list[str]]:
        return {self.field: [self.message]}


# --- Definitions ----------------------------------------------------------------------------


def test_set_size(study: Study) -> int:
    """How many items a worker's test step has (the positions a check may take: 1..this): the task's test set,
    or the study's test sample."""
    test_set = ExampleSet.objects.filter(task_id=study.task_id, role=ExampleSet.Role.TEST).first()
    size = ExampleSetItem.objects.filter(example_set=test_set).count() if test_set else 0
    return min(size, study.test_sample_size) if study.test_sample_size else size


def _located(context: str, word: str) -> dict | None:
    """The first occurrence of ``word`` in ``context`` as a whole-word span, or None."""
    start = context.find(word)
    while start != -1:
        end = start + len(word)
        before = context[start - 1] if start else " "
        after = context[end] if end < len(context) else " "
        if not before.isalnum() and not after.isalnum():
            try:
                offsets.check_span_boundaries(context, start, end)
            except offsets.OffsetError:
                pass
            else:
                return {"text": word, "start": start, "end": end}
        start = context.find(word, start + 1)
    return None


def validate(
    *,
    study: Study,
    position: object,
    context: object,
    question: object,
    expected_label: object = "",
    expected_spans: object = (),
    exclude_pk: int | None = None,
) -> tuple[int, str, str, str, list[str], list[dict]]:
    """Check a definition against the study's task and test set.

    Returns (position, context, question, label, span texts, located spans); raises AttentionCheckError.
    """
    if isinstance(position, bool) or not isinstance(position, int):
        raise AttentionCheckError("position", "the position must be a whole number (1 = the first test item)")
    size = test_set_size(study)
    if size == 0:
        raise AttentionCheckError("position", f"the task {study.task.slug} has no test set to put checks into")
    if not 1 <= position <= size:
        raise AttentionCheckError(
            "position", f"position {position} is beyond the test set: it has {size} items (positions 1..{size})"
        )
    taken = AttentionCheck.objects.filter(study=study, position=position)
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise AttentionCheckError("position", f"the study already has an attention check at position {position}")
    for name, value in (("context", context), ("question", question)):
        if not isinstance(value, str) or not value.strip():
            raise AttentionCheckError(name, f"the {name} must be a non-empty text")
        if len(value) > MAX_TEXT:
            raise AttentionCheckError(name, f"the {name} is longer than {MAX_TEXT} characters")
        if "\x00" in value:  # PostgreSQL stores no NUL in text
            raise AttentionCheckError(name, f"the {name} contains a NUL character")
    assert isinstance(context, str) and isinstance(question, str)
    label = expected_label or ""
    expected_spans = [] if expected_spans is None else expected_spans
    if isinstance(expected_spans, str) or not isinstance(expected_spans, list | tuple):
        raise AttentionCheckError("expected_spans", "the words to select must be a list of strings")
    spans: list[object] = list(expected_spans)
    task = study.task
    if task.is_classification:
        if spans:
            raise AttentionCheckError("expected_spans", f"{task.name} is a classification task: give a label")
        names = list(Label.objects.filter(task=task).values_list("name", flat=True))
        if not isinstance(label, str) or label not in names:
            raise AttentionCheckError(
                "expected_label", f"{label!r} is not a label of {task.name} (its labels: {', '.join(names)})"
            )
        return position, context, question, label, [], []
    if label:
        raise AttentionCheckError("expected_label", f"{task.name} is a span task: give the words to select")
    if not spans or not all(isinstance(s, str) and s.strip() for s in spans):
        raise AttentionCheckError("expected_spans", "give at least one word of the context to select")
    if len(spans) > 1 and not task.multiple_spans:
        raise AttentionCheckError("expected_spans", f"{task.name} takes one span per answer: give one word")
    located = []
    words = [str(s) for s in spans]
    for word in words:
        where = _located(context, word)
        if where is None:
            raise AttentionCheckError("expected_spans", f"the target {word!r} is not a word of the check's text")
        located.append(where)
    return position, context, question, "", list(dict.fromkeys(words)), located


def _example_for(study: Study, context: str, question: str, gold: list[str], spans: list[dict]) -> Example:
    key = uuid.uuid4().hex
    return Example.objects.create(
        task_id=study.task_id,
        source_id=f"{SOURCE_PREFIX}{key}",
        fingerprint=hashlib.sha256(f"{SOURCE_PREFIX}{key}".encode()).hexdigest(),
        context=context,
        question=question,
        gold_answers=gold,
        gold_spans=spans,
        extra={"attention_check": True},
    )


def create_check(
    *,
    study: Study,
    position: object,
    context: object,
    question: object,
    expected_label: object = "",
    expected_spans: object = (),
    source: str = AttentionCheck.Source.RESEARCHER,
) -> AttentionCheck:
    """Add a check to the study (validated; nothing is stored if it is invalid)."""
    pos, text, ask, label, words, located = validate(
        study=study,
        position=position,
        context=context,
        question=question,
        expected_label=expected_label,
        expected_spans=expected_spans,
    )
    with transaction.atomic():
        gold = [label] if label else words
        example = _example_for(study, text, ask, gold, located)
        return AttentionCheck.objects.create(
            study=study,
            position=pos,
            context=text,
            question=ask,
            expected_label=label,
            expected_spans=words,
            source=source,
            example=example,
        )


def update_check(check: AttentionCheck, **fields: object) -> AttentionCheck:
    """Change a check nobody has been given yet (validated as a new one)."""
    if in_use(check):
        raise AttentionCheckError("position", "workers already have this check in their test step: add a new one")
    values = {
        "position": check.position,
        "context": check.context,
        "question": check.question,
        "expected_label": check.expected_label,
        "expected_spans": check.expected_spans,
        **fields,
    }
    pos, text, ask, label, words, located = validate(study=check.study, exclude_pk=check.pk, **values)
    with transaction.atomic():
        gold = [label] if label else words
        Example.objects.filter(pk=check.example_id).update(
            context=text, question=ask, gold_answers=gold, gold_spans=located
        )
        check.position, check.context, check.question = pos, text, ask
        check.expected_label, check.expected_spans = label, words
        check.save()
    return check


def in_use(check: AttentionCheck) -> bool:
    """Whether a crowd worker's test step holds the check (a preview's does not count)."""
    return Response.all_objects.filter(attention_check=check, participation__is_preview=False).exists()


def delete_check(check: AttentionCheck) -> None:
    """Remove a check that no crowd worker has been given (previews holding it are restarted)."""
    if in_use(check):
        raise AttentionCheckError("position", "workers already have this check in their test step: keep it")
    with transaction.atomic():
        previews = Participation.all_objects.filter(is_preview=True, responses__attention_check=check)
        previews.distinct().delete()
        example_id = check.example_id
        check.delete()
        Example.objects.filter(pk=example_id).delete()


# --- Templates ------------------------------------------------------------------------------

_SPAN_SENTENCES = [
    ("orange", "The orange was left on the kitchen table next to a glass of water."),
    ("river", "They walked along the river until the sun went down behind the hills."),
    ("pencil", "She picked up a pencil and wrote the date at the top of the page."),
    ("window", "A bird sat outside the window for most of the morning."),
    ("garden", "The garden behind the house was full of tall yellow flowers."),
]


def template_definition(study: Study, index: int) -> dict:
    """The ``index``-th check of the task kind's template (labels and sentences taken in turn)."""
    task = study.task
    if task.is_classification:
        labels = list(Label.objects.filter(task=task).order_by("position", "name").values_list("name", flat=True))
        if not labels:
            raise AttentionCheckError("expected_label", f"{task.name} has no labels to build a check from")
        label = labels[index % len(labels)]
        return {
            "context": "This item checks that you are reading the instructions of each item carefully.",
            "question": f"To show you are reading, choose '{label}'.",
            "expected_label": label,
        }
    word, sentence = _SPAN_SENTENCES[index % len(_SPAN_SENTENCES)]
    return {
        "context": sentence,
        "question": f"To show you are reading, select the word '{word}' in this sentence (and nothing else).",
        "expected_spans": [word],
    }


def positions_every(study: Study, every: int) -> list[int]:
    """The positions of a check every ``every`` items (``every``, 2 x ``every``, ... within the test set)."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise AttentionCheckError("every", "the rate must be a whole number of items, at least 1")
    return list(range(every, test_set_size(study) + 1, every))


def generate(*, study: Study, positions: Sequence[int]) -> list[AttentionCheck]:
    """Add template checks at ``positions`` (all or none: any invalid position stores nothing)."""
    if not positions:
        raise AttentionCheckError("positions", "give at least one position (or a rate that fits the test set)")
    if len(set(positions)) != len(positions):
        raise AttentionCheckError("positions", "a position is given twice")
    start = AttentionCheck.objects.filter(study=study).count()
    with transaction.atomic():
        return [
            create_check(
                study=study, position=p, source=AttentionCheck.Source.TEMPLATE, **template_definition(study, start + i)
            )
            for i, p in enumerate(sorted(positions))
        ]


# --- The worker's test step -------------------------------------------------------------------


def interleave(test_ids: Sequence[int], checks: Iterable[tuple[int, int, int]]) -> list[tuple[int, int | None]]:
    """The test step's items as (example id, check id or None): ``checks`` are (position, example id, check
    id) and each takes item number ``position`` (one past the end at most, if checks were removed)."""
    items: list[tuple[int, int | None]] = [(example_id, None) for example_id in test_ids]
    for position, example_id, check_id in sorted(checks):
        items.insert(min(position - 1, len(items)), (example_id, check_id))
    return items


def checks_of(study_id: int) -> list[tuple[int, int, int]]:
    """(position, example id, check id) of the study's checks, for ``interleave``."""
    return list(AttentionCheck.objects.filter(study_id=study_id).values_list("position", "example_id", "id"))


@dataclass(frozen=True)
class Tally:
    checks: int
    passed: int
    failed: int
    pending: int


def _passed() -> Q:
    return Q(status=Response.Status.ANSWERED, score__gte=1.0)


def tallies(participation_ids: Iterable[int]) -> dict[int, Tally]:
    """Participation id -> its checks passed, failed and not yet answered (one query)."""
    rows = (
        Response.all_objects.filter(attention_check__isnull=False, participation_id__in=list(participation_ids))
        .values("participation_id")
        .annotate(
            n=Count("id"),
            passed=Count("id", filter=_passed()),
            pending=Count("id", filter=Q(status=Response.Status.PENDING)),
        )
        .order_by()
    )
    return {
        r["participation_id"]: Tally(r["n"], r["passed"], r["n"] - r["passed"] - r["pending"], r["pending"])
        for r in rows
    }


def judge(
    participation: Participation,
    *,
    at: datetime,
    readmitted: bool = False,
    readmitted_by: User | None = None,
) -> AttentionDecision | None:
    """All test items are locked: the attention rule's decision on the worker, recorded; None without checks.

    ``step_end.end_step`` acts on it (completes, or excludes on ``EXCLUDED``). An admin's readmission
    (``readmitted``) has the last word: a worker the rule would exclude is flagged for review instead.
    """
    tally = tallies([participation.pk]).get(participation.pk)
    if tally is None:
        return None
    study = participation.study
    limit = study.attention_fail_limit
    flagged = limit > 0 and tally.failed >= limit
    summary = f"failed {tally.failed} of {tally.checks} attention checks"
    decided_by = None
    if not flagged:
        decision = AttentionDecision.Decision.PASSED
        reason = f"{summary} (limit {limit})" if limit else f"{summary} (no rule)"
    elif study.attention_action == Study.AttentionAction.EXCLUDE and not readmitted:
        decision, reason = AttentionDecision.Decision.EXCLUDED, f"{summary} (limit {limit}): excluded"
    elif study.attention_action == Study.AttentionAction.EXCLUDE:
        decision, reason = AttentionDecision.Decision.REVIEW, f"{summary} (limit {limit}): readmitted by an admin"
        decided_by = readmitted_by
    else:
        decision, reason = AttentionDecision.Decision.REVIEW, f"{summary} (limit {limit}): flagged for review"
    return AttentionDecision.objects.create(
        participation=participation,
        checks=tally.checks,
        passed_count=tally.passed,
        failed_count=tally.failed,
        fail_limit=limit,
        action=study.attention_action if limit else "",
        decision=decision,
        reason=reason,
        decided_by=decided_by,
        at=at,
    )


def failed_attention(participation: Participation) -> bool:
    """Whether the worker was excluded by the attention rule (the ``attention_failed`` outcome)."""
    return (
        participation.state == Participation.State.EXCLUDED
        and participation.exclusion_kind == Participation.ExclusionKind.ATTENTION
    )


# --- The report -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerReport:
    participation_id: int
    worker: str
    platform: str
    shots: int
    state: str
    checks: int
    passed: int
    failed: int
    pending: int
    decision: str  # the last AttentionDecision's, "" before the end of the test step

    def as_dict(self) -> dict:
        return {
            "participation": self.participation_id,
            "worker": self.worker,
            "platform": self.platform,
            "shots": self.shots,
            "state": self.state,
            "checks": self.checks,
            "passed": self.passed,
            "failed": self.failed,
            "pending": self.pending,
            "decision": self.decision,
        }


REPORT_FIELDS = [
    "participation",
    "worker",
    "platform",
    "shots",
    "state",
    "checks",
    "passed",
    "failed",
    "pending",
    "decision",
]


def report(study: Study) -> list[WorkerReport]:
    """Per crowd worker of the study who has been given checks: passed / failed, and the rule's decision."""
    participations = list(
        Participation.objects.filter(study=study)
        .select_related("worker", "condition")
        .order_by("condition__shots", "slot_index", "id")
    )
    counts = tallies(p.pk for p in participations)
    decisions: dict[int, str] = {}
    for pid, decision in AttentionDecision.objects.filter(participation__in=participations).values_list(
        "participation_id", "decision"
    ):
        decisions[pid] = decision  # ordered by time: the last one stays
    return [
        WorkerReport(
            participation_id=p.pk,
            worker=p.worker.external_id,
            platform=p.worker.platform,
            shots=p.condition.shots,
            state=p.state,
            checks=t.checks,
            passed=t.passed,
            failed=t.failed,
            pending=t.pending,
            decision=decisions.get(p.pk, ""),
        )
        for p in participations
        if (t := counts.get(p.pk)) is not None
    ]
