"""The training filter: after the training step, does a worker go on to the test?

Rules (set on the study), on the worker's training S1 (``training_s1.of``):
- none: everyone passes.
- absolute: pass when training S1 >= threshold.
- relative: pass when training S1 >= (mean or median training S1 of the other
  workers of the condition's group) - threshold. The worker goes on to the
  test at once with a pending verdict; the group is judged once it has
  trained (``filter_groups``, which says how and why).

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
from annotation.services import filter_groups, lifecycle, slots, training_s1

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

State = Participation.State


def evaluate(participation: Participation) -> FilterDecision:
    """Apply the study's rule to a worker who has just finished training."""
    study = participation.study
    s1 = training_s1.of(participation)
    pending = False
    if s1 is None:
        passed, reason = True, "no scored training item: no training S1 to filter on"
    elif study.filter_rule == Study.FilterRule.ABSOLUTE:
        passed = s1 >= study.filter_threshold
        reason = f"training S1 {s1:.3f} {'>=' if passed else '<'} minimum {study.filter_threshold:.3f}"
    elif study.filter_rule == Study.FilterRule.RELATIVE:
        passed, pending = True, True
        reason = f"training S1 {s1:.3f}; goes on to the test, judged against the group once it has trained"
    else:
        passed, reason = True, f"training S1 {s1:.3f}; no filter"
    return FilterDecision.objects.create(
        participation=participation,
        training_s1=s1,
        rule=study.filter_rule,
        threshold=study.filter_threshold,
        reference=study.filter_reference if pending else "",
        pending_group=pending,
        passed=passed,
        reason=reason,
        at=timezone.now(),
    )


def finish_training(participation: Participation) -> FilterDecision:
    """All training items are locked: filter the worker into the test step or out of the study."""
    with transaction.atomic():
        decision = evaluate(participation)
        if decision.pending_group:
            lifecycle.transition(participation, to_state=State.TEST, reason=f"training filter: {decision.reason}")
            filter_groups.decide_after_commit(participation.condition_id)
        elif decision.passed:
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


def _test_done(participation: Participation) -> bool:
    # all_objects: the attention checks are test items the worker answers too.
    test = Response.all_objects.filter(participation=participation, phase=Response.Phase.TEST)
    return test.exists() and not test.filter(status=Response.Status.PENDING).exists()


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
                lifecycle.transition(locked, to_state=State.TEST, reason=why, actor=actor)
                if _test_done(locked):  # excluded (group verdict, attention rule) after finishing the test
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
