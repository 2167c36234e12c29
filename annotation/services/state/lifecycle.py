"""The slot lifecycle: every state change of a participation goes through here.

    claimed ──▶ training ──▶ test ──▶ completed
       │           │  └──▶ excluded ◀──┘ (training filter; an admin may readmit)
       ├───────────┴──────────┴──▶ abandoned (no activity for the study's timeout)
       ├──▶ excluded (failed the comprehension check twice: screened out before training)
       └──▶ declined (said no to the study's consent text; the slot is free again)

The relative training filter judges a condition's group once it has trained, so a worker may be
excluded from the test step or after completing it (``filter_groups``).

Zero-shot participations go from claimed straight to test. Each change is a
conditional UPDATE from the expected state, so two racing requests cannot both
move the same slot, and each change is recorded as a ParticipationEvent with
its timestamp (pay is computed from these).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from annotation.errors import ServiceError
from annotation.models import Participation, ParticipationEvent
from annotation.services.state import outcomes

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

State = Participation.State

# Called with the participation whenever a slot is taken or freed. The bottom capability knows no
# platform: a higher one that follows slots (the Prolific places) registers here, once, at start-up
# (AnnotationConfig.ready); see docs/development.md, "Capabilities".
_slot_listeners: list[Callable[[Participation], None]] = []


def on_slot_change(listener: Callable[[Participation], None]) -> None:
    """Register ``listener`` to hear of every slot taken or freed (idempotent)."""
    if listener not in _slot_listeners:
        _slot_listeners.append(listener)


def _slot_changed(participation: Participation) -> None:
    for listener in _slot_listeners:
        listener(participation)


# Called with the participation whenever it completes, or a completed one is excluded (a readmission then
# completes it again): what the analyses of the completed workers read changed. Reporting registers here.
_finished_listeners: list[Callable[[Participation], None]] = []


def on_finished_change(listener: Callable[[Participation], None]) -> None:
    """Register ``listener`` to hear of every change to or from the completed state (idempotent)."""
    if listener not in _finished_listeners:
        _finished_listeners.append(listener)


ALLOWED_TRANSITIONS: dict[str, set[str]] = {
    # claimed -> excluded: screened out by the comprehension check, before any step (services.admission.comprehension)
    State.CLAIMED: {State.TRAINING, State.TEST, State.ABANDONED, State.DECLINED, State.EXCLUDED},
    State.TRAINING: {State.TEST, State.EXCLUDED, State.ABANDONED},
    State.TEST: {State.COMPLETED, State.ABANDONED, State.EXCLUDED},
    State.EXCLUDED: {State.TEST},  # an admin's override readmits a filtered worker
    # The relative training filter judges a group once it has trained: a fast worker may have finished.
    State.COMPLETED: {State.EXCLUDED},
    State.ABANDONED: set(),
    State.DECLINED: set(),
}
TERMINAL_STATES = {State.COMPLETED, State.ABANDONED, State.EXCLUDED, State.DECLINED}


class InvalidTransition(ServiceError):
    """The participation is not in a state from which this change is allowed."""

    code = "invalid_transition"
    status = 409


EVENT_REASON_LENGTH = ParticipationEvent._meta.get_field("reason").max_length or 300


def clip_reason(reason: str) -> str:
    """An event's reason within its column (an admin's override reason is longer; FilterDecision keeps it whole)."""
    if len(reason) <= EVENT_REASON_LENGTH:
        return reason
    return reason[: EVENT_REASON_LENGTH - 1] + "…"


def transition(
    participation: Participation,
    *,
    to_state: str,
    reason: str = "",
    actor: User | None = None,
    at: datetime | None = None,
    exclusion_kind: str = "",
) -> ParticipationEvent:
    """Move ``participation`` to ``to_state`` and record the event.

    ``exclusion_kind`` (``Participation.ExclusionKind``) is stored when the change excludes, and cleared
    when it readmits, so that why a worker is excluded can be asked of the row itself.

    Raises InvalidTransition if the change is not allowed from the state the
    row has *in the database* (a stale in-memory object cannot win a race).
    The in-memory object is updated on success.
    """
    at = at or timezone.now()
    from_state = participation.state
    if to_state not in ALLOWED_TRANSITIONS.get(from_state, set()):
        raise InvalidTransition(f"cannot go from {from_state} to {to_state}")
    changes: dict[str, object] = {"state": to_state, "last_activity_at": at}
    if to_state == State.EXCLUDED or from_state == State.EXCLUDED:
        changes["exclusion_kind"] = exclusion_kind if to_state == State.EXCLUDED else ""
    if to_state in TERMINAL_STATES:
        changes["finished_at"] = at
    elif from_state in TERMINAL_STATES:
        changes["finished_at"] = None
    with transaction.atomic():
        updated = Participation.all_objects.filter(pk=participation.pk, state=from_state).update(**changes)
        if not updated:
            current = Participation.all_objects.filter(pk=participation.pk).values_list("state", flat=True).first()
            raise InvalidTransition(f"participation is {current}, not {from_state}")
        event = ParticipationEvent.objects.create(
            participation=participation,
            from_state=from_state,
            to_state=to_state,
            at=at,
            reason=clip_reason(reason),
            actor=actor,
        )
    for field, value in changes.items():
        setattr(participation, field, value)
    if (from_state in Participation.HOLDING_STATES) != (to_state in Participation.HOLDING_STATES):
        _slot_changed(participation)  # a slot taken or freed: the Prolific places may follow
    if State.COMPLETED in (from_state, to_state):
        for listener in _finished_listeners:
            listener(participation)
    return event


def record_claim(participation: Participation, *, at: datetime | None = None) -> ParticipationEvent:
    """The first event of a participation (its creation as claimed)."""
    _slot_changed(participation)
    return ParticipationEvent.objects.create(
        participation=participation,
        from_state="",
        to_state=State.CLAIMED,
        at=at or participation.created_at,
        reason="joined",
    )


def begin(participation: Participation, *, at: datetime | None = None) -> None:
    """The worker has read the description: start training (few-shot) or the test step (zero-shot)."""
    if participation.state != State.CLAIMED:
        return
    first = State.TRAINING if participation.condition.is_few_shot else State.TEST
    transition(participation, to_state=first, reason="started", at=at)


def give_completion_code(participation: Participation) -> str:
    """The code the worker enters on their platform: the study's code for the participation's outcome."""
    return outcomes.give_code(participation)


def finish_test(participation: Participation, *, at: datetime | None = None) -> None:
    """Complete the participation and give its completion code: the bare state change, called by
    ``step_end.end_step`` only (which applies the attention rule first)."""
    transition(participation, to_state=State.COMPLETED, reason="finished the test step", at=at)
    give_completion_code(participation)


def exclude(
    participation: Participation,
    *,
    reason: str,
    kind: str,
    actor: User | None = None,
    at: datetime | None = None,
) -> ParticipationEvent:
    """Take the worker out of the study (training filter or an admin). Their slot reopens, and they get
    a completion code all the same: an excluded worker is paid for the time spent, which on the
    platforms means submitting with a code (MTurk cannot even pay a bonus on an unsubmitted assignment).
    ``kind`` says why (``Participation.ExclusionKind``); every caller names it, so no verdict is
    recorded as an admin's by default."""
    event = transition(participation, to_state=State.EXCLUDED, reason=reason, actor=actor, at=at, exclusion_kind=kind)
    give_completion_code(participation)
    return event


# Activity is written at most this often per participation: the abandonment timeout is at least a
# minute, so a later write by a few seconds changes no decision, and most requests write nothing.
TOUCH_INTERVAL = timedelta(seconds=10)


def touch_due(participation: Participation, at: datetime) -> bool:
    """Whether ``touch`` at ``at`` writes (activity is recorded at most every TOUCH_INTERVAL)."""
    last = participation.last_activity_at
    return last is None or not timedelta(0) <= at - last < TOUCH_INTERVAL


def touch(participation: Participation, *, at: datetime | None = None) -> None:
    """Record activity, so that a working participant is not released as abandoned."""
    at = at or timezone.now()
    if not touch_due(participation, at):
        return
    Participation.all_objects.filter(pk=participation.pk).update(last_activity_at=at)
    participation.last_activity_at = at
