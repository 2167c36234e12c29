"""The relative training filter, decided per group: a worker is compared with the others of the condition.

The paper filters annotators "whose performance is very low compared to average annotators in the
group". The rule is defined so that the same training scores give the same verdicts whatever the order
of arrival and the timing (rule version ``FilterDecision.RULE_VERSION``; docs/studies.md):

- A worker who finishes training goes on to the test at once (a *pending* FilterDecision): nobody is
  made to wait for the others.
- The group is **every worker of the condition who finished training**, excluded or not (a worker
  excluded by the filter, by an admin or for inattention keeps their training S1 in the group; a
  staff preview is never in it).
- The pending verdicts are given once the group is complete (at least ``workers_per_condition`` have
  trained and nobody of the condition is still in training), or ``study.filter_group_timeout_minutes``
  after the oldest pending worker finished training, with the group so far. the end of training
  (``step_end``) asks after each commit; the periodic sweep (Celery beat, ``decide_training_filter``) catches timeouts.
- **Never alone.** While only one worker has trained, nothing is decided, not even at the timeout or
  with ``force``: a comparison with nobody is no comparison, and passing such a worker would let the
  first arrival always pass. The verdict waits for a second worker to train (the worker is not held up:
  they are on the test already, and count as any worker until judged).
- Each pending worker is compared with the mean (or median, ``study.filter_reference``) training S1
  of the *others* in the group. Passing means training S1 >= reference - threshold.
- A failing worker is excluded (kind ``training_filter``; from the test step, or after completing it):
  their answers leave the tables, they keep their completion code and pay, and the slot reopens. A
  replacement is judged against the full group (the excluded worker included); verdicts already given
  are final (an admin may override them).

Every verdict is a FilterDecision with the group's figures (the others' training S1, the reference)
and the rule version that made it.
"""

from __future__ import annotations

import logging
import statistics
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, Min, OuterRef, QuerySet
from django.utils import timezone

from annotation.models import AuditEntry, Condition, FilterDecision, Participation, Study
from annotation.services import audit
from annotation.services.state import lifecycle, slots
from annotation.services.verdicts import training_s1
from tasks_app import scoring

logger = logging.getLogger(__name__)

State = Participation.State
# The workers whose pending verdict may be given: past training and still in the study.
GROUP_STATES = (State.TEST, State.COMPLETED)
RULE_VERSION = FilterDecision.RULE_VERSION


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


def trained(condition: Condition) -> QuerySet[Participation]:
    """The group: every worker of the condition who finished training (the filter's own decision on
    them exists), whatever became of them since; never a staff preview (``Participation.objects``)."""
    finished = FilterDecision.objects.filter(participation=OuterRef("pk"), is_override=False)
    return Participation.objects.filter(condition=condition).filter(Exists(finished)).order_by("pk")


def is_ready(condition: Condition, *, now: datetime, force: bool = False) -> bool:
    """Someone to judge and someone to compare them with; then the group complete, the oldest pending
    verdict older than the study's timeout, or ``force``."""
    study = condition.study
    waiting = undecided(condition)
    if not waiting.exists():
        return False
    group = trained(condition).count()
    if group < 2:
        return False  # never judged alone: wait for a second worker to train
    if force:
        return True
    in_training = condition.participations.filter(state__in=[State.CLAIMED, State.TRAINING]).exists()
    if not in_training and group >= study.workers_per_condition:
        return True
    oldest = FilterDecision.objects.filter(participation__in=waiting, pending_group=True).aggregate(at=Min("at"))["at"]
    return oldest is not None and oldest <= now - timedelta(minutes=study.filter_group_timeout_minutes)


def _reference(values: list[float], kind: str) -> float:
    return statistics.median(values) if kind == Study.FilterReference.MEDIAN else scoring.mean(values)


def decide(condition: Condition, *, now: datetime | None = None, force: bool = False) -> list[FilterDecision]:
    """Give the group's pending verdicts if it is ready (``force``: now, with the group so far, never alone)."""
    now = now or timezone.now()
    with transaction.atomic():
        slots.lock_study(condition.study_id)  # the entry's lock order; serialises deciders of one study
        condition = Condition.objects.select_related("study").get(pk=condition.pk)
        study = condition.study
        if study.filter_rule != Study.FilterRule.RELATIVE or not is_ready(condition, now=now, force=force):
            return []
        waiting = list(undecided(condition))
        members = list(trained(condition).values_list("pk", flat=True))
        scores = training_s1.by_participation(members)  # all read before anyone is excluded
        decisions = [_verdict(p, study=study, members=members, scores=scores, now=now) for p in waiting]
        for participation, decision in zip(waiting, decisions, strict=True):
            if not decision.passed:
                lifecycle.exclude(
                    participation,
                    reason=f"failed training filter: {decision.reason}",
                    kind=Participation.ExclusionKind.TRAINING_FILTER,
                    at=now,
                )
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
        rule_version=RULE_VERSION,
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


def decide_due(
    *, now: datetime | None = None, study: Study | None = None, force: bool = False, actor: audit.Actor = None
) -> list[FilterDecision]:
    """Every ready group of every relative-rule study (or of one study): what the periodic sweep runs.
    ``force`` (a person's ``decide_training_filter --now``) judges every pending group as it is, and the
    audit trail records it per study (the sweep's own verdicts are the rule's, not a staff action)."""
    now = now or timezone.now()
    conditions = Condition.objects.filter(study__filter_rule=Study.FilterRule.RELATIVE).filter(
        Exists(FilterDecision.objects.filter(participation__condition=OuterRef("pk"), pending_group=True))
    )
    if study is not None:
        conditions = conditions.filter(study=study)
    decisions: list[FilterDecision] = []
    for condition in conditions.select_related("study").order_by("pk"):
        made = decide(condition, now=now, force=force)
        decisions += made
        if force and made:
            audit.record(
                actor=actor,
                action=AuditEntry.Action.FILTER_FORCED,
                study=condition.study,
                after={"shots": condition.shots, "judged": len(made), "excluded": sum(not d.passed for d in made)},
                detail={"decisions": [d.pk for d in made]},
            )
    return decisions


def decide_after_commit(condition_id: int) -> None:
    """Ask once the worker's transaction has committed (the group's verdicts take the study's locks)."""

    def run() -> None:
        condition = Condition.objects.filter(pk=condition_id).first()
        if condition is not None:
            decide(condition)

    transaction.on_commit(run, robust=True)  # a failure here is the sweep's to retry, never the worker's
