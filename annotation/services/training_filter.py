"""The training filter: after the training step, does a worker go on to the test?

Rules (set on the study), on the worker's training S1 (``training_s1.of``):
- none: everyone passes.
- absolute: pass when training S1 >= threshold.
- relative: pass when training S1 >= (mean training S1 of the condition's other
  workers who finished training so far) - threshold. The first worker of a
  condition has no reference and passes.

A worker without a training S1 (no scored training item) passes whatever the
rule: there is nothing to judge. Zero-shot workers never reach the filter
(claimed goes straight to test); an admin's override of one records no
training S1.

A failing worker is excluded before the test step (the slot reopens for a
fresh worker; they stay ineligible for the task and are paid for their time).
Admins can override either way, readmitting into a free slot under the slot
service's locks; every verdict is a FilterDecision with its reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import FilterDecision, Participation, Response, Study
from annotation.services import lifecycle, slots, training_s1
from tasks_app import scoring

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

State = Participation.State


def _reference_mean(participation: Participation) -> float | None:
    """The mean training S1 of the condition's other workers past training; None if none has one."""
    others = (
        Participation.objects.filter(
            condition=participation.condition, state__in=[State.TEST, State.COMPLETED, State.EXCLUDED]
        )
        .exclude(pk=participation.pk)
        .annotate(s1=training_s1.aggregate("responses__"))
        .values_list("s1", flat=True)
    )
    values = [v for v in others if v is not None]
    return scoring.mean(values) if values else None


def evaluate(participation: Participation) -> FilterDecision:
    """Apply the study's rule to a worker who has just finished training."""
    study = participation.study
    s1 = training_s1.of(participation)
    reference = None
    if s1 is None:
        passed, reason = True, "no scored training item: no training S1 to filter on"
    elif study.filter_rule == Study.FilterRule.ABSOLUTE:
        passed = s1 >= study.filter_threshold
        reason = f"training S1 {s1:.3f} {'>=' if passed else '<'} minimum {study.filter_threshold:.3f}"
    elif study.filter_rule == Study.FilterRule.RELATIVE:
        reference = _reference_mean(participation)
        if reference is None:
            passed, reason = True, f"training S1 {s1:.3f}; first worker of the condition, no reference yet"
        else:
            floor = reference - study.filter_threshold
            passed = s1 >= floor
            reason = (
                f"training S1 {s1:.3f} {'>=' if passed else '<'} {floor:.3f} "
                f"(others' mean {reference:.3f} - {study.filter_threshold:.3f})"
            )
    else:
        passed, reason = True, f"training S1 {s1:.3f}; no filter"
    return FilterDecision.objects.create(
        participation=participation,
        training_s1=s1,
        rule=study.filter_rule,
        threshold=study.filter_threshold,
        reference_mean=reference,
        passed=passed,
        reason=reason,
        at=timezone.now(),
    )


def finish_training(participation: Participation) -> FilterDecision:
    """All training items are locked: filter the worker into the test step or out of the study."""
    with transaction.atomic():
        decision = evaluate(participation)
        if decision.passed:
            lifecycle.transition(
                participation, to_state=State.TEST, reason=f"passed training filter: {decision.reason}"
            )
        else:
            lifecycle.exclude(
                participation,
                reason=f"failed training filter: {decision.reason}",
                kind=Participation.ExclusionKind.TRAINING_FILTER,
            )
    return decision


def _slot_for_readmission(locked: Participation) -> int:
    """The slot a readmitted worker takes (``slots.slot_for_return``); refused when the condition is full.

    Called under ``slots.lock_study``, so no entry can take the slot between
    this choice and the update.
    """
    slot = slots.slot_for_return(locked, slots=locked.study.workers_per_condition)
    if slot is None:
        raise lifecycle.InvalidTransition(
            "the worker's slot has been given to another worker meanwhile and the condition is full; cannot readmit"
        )
    return slot


def steps_left(participation: Participation) -> bool:
    """Whether the participation has a test item still to answer."""
    return Response.all_objects.filter(
        participation=participation, phase=Response.Phase.TEST, status=Response.Status.PENDING
    ).exists()


def override(participation: Participation, *, admit: bool, reason: str, actor: User | None) -> FilterDecision:
    """An admin's verdict over the filter's: readmit an excluded worker, or exclude one.

    An excluded worker's slot may have gone to a fresh worker meanwhile: the
    readmitted worker then takes another free slot of the condition, and is
    refused when it is full (never more than N; the database's
    one-active-per-slot constraint has the last word).
    """
    if not reason.strip():
        raise ValueError("an override needs a reason")
    with transaction.atomic():
        # The entry's lock order (study, its conditions by id), then the participation: no deadlock.
        slots.lock_study(participation.study_id)
        locked = Participation.all_objects.select_for_update().select_related("study").get(pk=participation.pk)
        why = f"admin override: {reason}"
        try:
            if admit:
                if State.TEST not in lifecycle.ALLOWED_TRANSITIONS.get(locked.state, set()):
                    raise lifecycle.InvalidTransition(f"cannot go from {locked.state} to {State.TEST}")
                if locked.state == State.EXCLUDED:
                    slot = _slot_for_readmission(locked)
                    if slot != locked.slot_index:
                        Participation.all_objects.filter(pk=locked.pk).update(slot_index=slot)
                        why += f" (slot {locked.slot_index} was taken meanwhile: now slot {slot})"
                        locked.slot_index = slot
                after_test = locked.exclusion_kind == Participation.ExclusionKind.ATTENTION
                lifecycle.transition(locked, to_state=State.TEST, reason=why, actor=actor)
                if after_test and not steps_left(locked):
                    # Excluded by the attention rule after their last test item: readmitted, they are done.
                    lifecycle.finish_test(locked)
            else:
                lifecycle.exclude(locked, reason=why, actor=actor, kind=Participation.ExclusionKind.ADMIN)
        except IntegrityError:
            raise lifecycle.InvalidTransition(
                "the worker's slot has been given to another worker meanwhile; cannot readmit"
            ) from None
        decision = FilterDecision.objects.create(
            participation=locked,
            training_s1=training_s1.of(locked),
            rule=locked.study.filter_rule,
            threshold=locked.study.filter_threshold,
            passed=admit,
            is_override=True,
            reason=reason,
            decided_by=actor,
            at=timezone.now(),
        )
    participation.refresh_from_db()
    return decision
