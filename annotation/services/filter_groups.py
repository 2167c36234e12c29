"""The relative training filter, decided per group: a worker is compared with the others of the condition.

The paper filters annotators "whose performance is very low compared to average annotators in the
group". Comparing each worker with those who happened to finish training before them made the first
always pass and let the order decide, so the relative rule is decided for the group instead:

- A worker who finishes training goes on to the test at once (a *pending* FilterDecision): nobody is
  made to wait for the others.
- The group's verdicts are given once all the condition's slots have finished training (every holder
  in the test step or done), or ``study.filter_group_timeout_minutes`` after the oldest pending
  worker finished training, with the group so far. The end of training (``step_end``) asks after
  each commit; the periodic sweep (Celery beat, ``decide_training_filter``) catches timeouts and released slots.
- Each pending worker is compared with the mean (or median, ``study.filter_reference``) training S1
  of the *others* in the group, all figures read before anyone is excluded, so the order of the
  verdicts does not matter. Passing means training S1 >= reference - threshold.
- A failing worker is excluded (from the test step, or after completing it): their answers leave the
  tables, they keep their completion code and pay, and the slot reopens. A replacement is judged
  against the group in turn; verdicts already given are final (an admin may override them).

Every verdict is a FilterDecision with the group's figures (the others' training S1, the reference).
"""

from __future__ import annotations

import logging
import statistics
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, Min, OuterRef, QuerySet
from django.utils import timezone

from annotation.models import Condition, FilterDecision, Participation, Study
from annotation.services import lifecycle, slots, training_s1
from tasks_app import scoring

logger = logging.getLogger(__name__)

State = Participation.State
# The group: the condition's workers past training who are still in the study.
GROUP_STATES = (State.TEST, State.COMPLETED)


def _pending(prefix: str = "") -> QuerySet[FilterDecision]:
    return FilterDecision.objects.filter(participation=OuterRef(f"{prefix}pk"), pending_group=True)


def undecided(condition: Condition) -> QuerySet[Participation]:
    """The group's workers whose relative verdict is still to be given (pending, nothing after it)."""
    final = FilterDecision.objects.filter(participation=OuterRef("pk"), pending_group=False)
    return (
        Participation.objects.filter(condition=condition, state__in=GROUP_STATES)
        .filter(Exists(_pending()))
        .exclude(Exists(final))
        .order_by("pk")
    )


def is_ready(condition: Condition, *, now: datetime) -> bool:
    """All slots past training, or the oldest pending verdict older than the study's timeout."""
    study = condition.study
    waiting = undecided(condition)
    if not waiting.exists():
        return False
    in_training = condition.participations.filter(state__in=[State.CLAIMED, State.TRAINING]).exists()
    if not in_training and condition.participations.filter(state__in=GROUP_STATES).count() >= (
        study.workers_per_condition
    ):
        return True
    oldest = FilterDecision.objects.filter(participation__in=waiting, pending_group=True).aggregate(at=Min("at"))["at"]
    return oldest is not None and oldest <= now - timedelta(minutes=study.filter_group_timeout_minutes)


def _reference(values: list[float], kind: str) -> float:
    return statistics.median(values) if kind == Study.FilterReference.MEDIAN else scoring.mean(values)


def decide(condition: Condition, *, now: datetime | None = None, force: bool = False) -> list[FilterDecision]:
    """Give the group's pending verdicts if it is ready (``force``: now, with the group so far)."""
    now = now or timezone.now()
    with transaction.atomic():
        slots.lock_study(condition.study_id)  # the entry's lock order; serialises deciders of one study
        condition = Condition.objects.select_related("study").get(pk=condition.pk)
        study = condition.study
        if study.filter_rule != Study.FilterRule.RELATIVE or not (force or is_ready(condition, now=now)):
            return []
        waiting = list(undecided(condition))
        members = list(condition.participations.filter(state__in=GROUP_STATES).values_list("pk", flat=True))
        scores = training_s1.by_participation(members)
        decisions = [_verdict(p, study=study, members=members, scores=scores, now=now) for p in waiting]
        for participation, decision in zip(waiting, decisions, strict=True):
            if not decision.passed:
                lifecycle.exclude(participation, reason=f"failed training filter: {decision.reason}", at=now)
    return decisions


def _verdict(
    participation: Participation,
    *,
    study: Study,
    members: list[int],
    scores: dict[int, float | None],
    now: datetime,
) -> FilterDecision:
    s1 = scores.get(participation.pk)
    others = [v for pk in members if pk != participation.pk and (v := scores.get(pk)) is not None]
    kind, threshold = study.filter_reference, study.filter_threshold
    reference = None
    figures = f"group of {len(members)}; others' training S1 {', '.join(f'{v:.3f}' for v in others) or 'none'}"
    if s1 is None:
        passed, reason = True, "no scored training item: no training S1 to filter on"
    elif not others:
        passed, reason = True, f"training S1 {s1:.3f}; nobody else in the group has a training S1 ({figures})"
    else:
        reference = _reference(others, kind)
        floor = reference - threshold
        passed = s1 >= floor
        reason = (
            f"training S1 {s1:.3f} {'>=' if passed else '<'} {floor:.3f} "
            f"(others' {kind} {reference:.3f} - {threshold:.3f}; {figures})"
        )
    decision = FilterDecision.objects.create(
        participation=participation,
        training_s1=s1,
        rule=study.filter_rule,
        threshold=threshold,
        reference=kind,
        reference_mean=reference,
        group_training_s1=others,
        passed=passed,
        reason=reason[:500],
        at=now,
    )
    logger.info(
        "training filter (relative, group) participation %s in condition %s: %s; %s",
        participation.pk,
        participation.condition_id,
        "passed" if passed else "excluded",
        reason,
    )
    return decision


def decide_due(*, now: datetime | None = None, study: Study | None = None, force: bool = False) -> list[FilterDecision]:
    """Every ready group of every relative-rule study (or of one study): what the periodic sweep runs."""
    now = now or timezone.now()
    conditions = Condition.objects.filter(study__filter_rule=Study.FilterRule.RELATIVE).filter(
        Exists(FilterDecision.objects.filter(participation__condition=OuterRef("pk"), pending_group=True))
    )
    if study is not None:
        conditions = conditions.filter(study=study)
    decisions: list[FilterDecision] = []
    for condition in conditions.select_related("study").order_by("pk"):
        decisions += decide(condition, now=now, force=force)
    return decisions


def decide_after_commit(condition_id: int) -> None:
    """Ask once the worker's transaction has committed (the group's verdicts take the study's locks)."""

    def run() -> None:
        condition = Condition.objects.filter(pk=condition_id).first()
        if condition is not None:
            decide(condition)

    transaction.on_commit(run, robust=True)  # a failure here is the sweep's to retry, never the worker's
