"""An admin's verdict over the training filter's or the attention rule's: readmit or exclude a worker.

A readmitted worker who had finished the test (excluded afterwards by the group filter, the attention
rule or an admin) ends the test step again through ``step_end.end_step``: the attention rule records
its decision there, and the admin's readmission has the last word over it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import AuditEntry, FilterDecision, Participation, Response
from annotation.services import audit
from annotation.services.state import lifecycle, slots
from annotation.services.verdicts import step_end, training_s1

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

State = Participation.State
# What an override changes, as the audit trail shows it before and after.
_AUDITED = ("state", "slot_index", "exclusion_kind")


def _test_done(participation: Participation) -> bool:
    # all_objects: the attention checks are test items the worker answers too.
    test = Response.all_objects.filter(participation=participation, phase=Response.Phase.TEST)
    return test.exists() and not test.filter(status=Response.Status.PENDING).exists()


def _slot_for_readmission(locked: Participation) -> int:
    """The slot a readmitted worker takes (``slots.slot_for_return``); refused when the condition is full.

    Called under ``slots.lock_study``, so no entry can take the slot between
    this choice and the update.
    """
    slot = slots.slot_for_return(locked, slots=slots.open_slots(locked.study))
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
        before = audit.snapshot(locked, _AUDITED)
        at = timezone.now()  # one moment: a test ended by the readmission ends when it is readmitted (pay)
        try:
            if admit:
                if State.TEST not in lifecycle.ALLOWED_TRANSITIONS.get(locked.state, set()):
                    raise lifecycle.InvalidTransition(f"cannot go from {locked.state} to {State.TEST}")
                # Screened out before training: readmitting to the test would skip the training it never did.
                if locked.exclusion_kind == Participation.ExclusionKind.COMPREHENSION:
                    raise lifecycle.InvalidTransition(
                        "a worker screened out by the comprehension check is not readmitted"
                    )
                if locked.state == State.EXCLUDED:
                    slot = _slot_for_readmission(locked)
                    if slot != locked.slot_index:
                        Participation.all_objects.filter(pk=locked.pk).update(slot_index=slot)
                        why += f" (slot {locked.slot_index} was taken meanwhile: now slot {slot})"
                        locked.slot_index = slot
                lifecycle.transition(locked, to_state=State.TEST, reason=why, actor=actor, at=at)
                if _test_done(locked):  # excluded (group verdict, attention rule) after finishing the test
                    step_end.end_step(locked, at=at, readmission=step_end.Readmission(actor=actor))
            else:
                lifecycle.exclude(locked, reason=why, actor=actor, kind=Participation.ExclusionKind.ADMIN, at=at)
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
            at=at,
        )
        after = audit.snapshot(Participation.all_objects.get(pk=locked.pk), _AUDITED)
        audit.record(
            actor=actor,
            action=AuditEntry.Action.READMIT if admit else AuditEntry.Action.EXCLUDE,
            participation=locked,
            before=before,
            after=after,
            detail={"reason": reason, "filter_decision": decision.pk},
            at=at,
        )
    participation.refresh_from_db()
    return decision
