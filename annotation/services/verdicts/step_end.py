"""The end of a step: ``end_step`` is the only way a worker's training or test step ends.

Every entry point calls it once a step has no pending item left: the last submit or skip
(``answers``), ``GET /api/session/current/`` after an interrupted last submit (``api.session``), and
an admin's readmission of a worker who had finished the test (``overrides``). The rules it applies:

- training ends through the training filter (``training_filter.evaluate``): on to the test step, or
  excluded; under a relative rule the worker goes on and the group is judged once it has trained
  (``filter_groups``);
- the test ends through the attention rule (``attention.rule.judge``) and the integrity rule
  (``integrity.judge``), both recorded: completed, or excluded by the attention rule, else by the
  integrity rule. ``lifecycle.finish_test`` (the bare state change) is called from here only.

A verdict may land between the lock of the last answer and this call (the group filter or an admin
excludes the worker). The verdict wins: nothing of the step's end is kept (its own savepoint), the
caller's lock of the answer stands, and the participation is returned in its new state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from annotation.models import AttentionDecision, FilterDecision, IntegrityDecision, Participation
from annotation.services.state import lifecycle
from annotation.services.verdicts import attention, filter_groups, integrity, training_filter

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

State = Participation.State


@dataclass(frozen=True)
class Readmission:
    """The test step ends because an admin readmitted the worker (``overrides.override``)."""

    actor: User | None


@dataclass(frozen=True)
class StepEnd:
    """What ending the step decided; ``superseded`` when a concurrent verdict had moved the worker first."""

    filter_decision: FilterDecision | None = None
    attention_decision: AttentionDecision | None = None
    integrity_decision: IntegrityDecision | None = None
    superseded: bool = False


def end_step(
    participation: Participation, *, at: datetime | None = None, readmission: Readmission | None = None
) -> StepEnd:
    """End the participation's current step, all of whose items are locked. Nothing to do outside a step."""
    at = at or timezone.now()
    try:
        with transaction.atomic():
            if participation.state == State.TRAINING:
                return StepEnd(filter_decision=_end_training(participation, at))
            if participation.state == State.TEST:
                attention_decision, integrity_decision = _end_test(participation, at, readmission)
                return StepEnd(attention_decision=attention_decision, integrity_decision=integrity_decision)
    except lifecycle.InvalidTransition:
        participation.refresh_from_db()  # a verdict moved it first; it stands
        return StepEnd(superseded=True)
    return StepEnd()


def _end_training(participation: Participation, at: datetime) -> FilterDecision:
    decision = training_filter.evaluate(participation)
    if decision.pending_group:
        lifecycle.transition(participation, to_state=State.TEST, reason=f"training filter: {decision.reason}", at=at)
        filter_groups.decide_after_commit(participation.condition_id)
    elif decision.passed:
        lifecycle.transition(
            participation, to_state=State.TEST, reason=f"passed training filter: {decision.reason}", at=at
        )
    else:
        lifecycle.exclude(
            participation,
            reason=f"failed training filter: {decision.reason}",
            kind=Participation.ExclusionKind.TRAINING_FILTER,
            at=at,
        )
    return decision


def _end_test(
    participation: Participation, at: datetime, readmission: Readmission | None
) -> tuple[AttentionDecision | None, IntegrityDecision]:
    actor = readmission.actor if readmission else None
    readmitted = readmission is not None
    decision = attention.rule.judge(participation, at=at, readmitted_by=actor, readmitted=readmitted)
    verdict = integrity.judge(participation, at=at, readmitted_by=actor, readmitted=readmitted)
    if decision is not None and decision.decision == AttentionDecision.Decision.EXCLUDED:
        lifecycle.exclude(
            participation,
            reason=attention.rule.REASON_PREFIX + decision.reason,
            kind=Participation.ExclusionKind.ATTENTION,
            at=at,
        )
    elif verdict.decision == IntegrityDecision.Decision.EXCLUDED:
        lifecycle.exclude(
            participation,
            reason=integrity.REASON_PREFIX + verdict.reason,
            kind=Participation.ExclusionKind.INTEGRITY,
            at=at,
        )
    else:
        lifecycle.finish_test(participation, at=at)
    return decision, verdict
