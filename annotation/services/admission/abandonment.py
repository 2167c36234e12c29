"""Releasing the slots of workers who went away.

An active participation (``Participation.ACTIVE_STATES``: claimed, training or
test) with no activity for its study's ``abandon_after_minutes`` becomes
*abandoned*: it no longer holds its slot (see ``annotation.services.state.slots``),
so a fresh worker can take it, and the worker stays ineligible for the task
(the one-participation-per-worker-and-task row remains). Run periodically by
the Celery task ``annotation.release_abandoned_slots``, and by an entry that
finds its study full (then under that entry's ``slots.lock_study``).

``abandon`` is the one way a participation ends as abandoned, whoever decides it: this sweep, or the
crowd platform saying the worker returned the study or timed out there
(``annotation.services.prolific.webhooks``).

The periodic sweep needs no study lock: it only frees slots, and an entry that
counted the slot as held a moment too early at worst answers "full".
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from annotation.models import Participation, Study
from annotation.services.state import lifecycle

logger = logging.getLogger(__name__)


def abandon(participation: Participation, *, reason: str, at: datetime | None = None) -> bool:
    """End an active participation as abandoned: its slot is free at once, and the worker stays ineligible
    for the task. False (and nothing written) if it is no longer active (it moved on meanwhile)."""
    try:
        lifecycle.transition(participation, to_state=Participation.State.ABANDONED, at=at, reason=reason)
    except lifecycle.InvalidTransition:
        return False
    return True


def release_abandoned(*, now: datetime | None = None, study: Study | None = None) -> int:
    """Abandon every idle active participation (of ``study`` only, if given); returns how many slots
    were released."""
    now = now or timezone.now()
    active = Participation.objects.filter(state__in=Participation.ACTIVE_STATES)
    if study is not None:
        active = active.filter(study=study)
    timeouts = active.values_list("study__abandon_after_minutes", flat=True).distinct()
    released = 0
    for minutes in sorted(set(timeouts)):
        cutoff = now - timedelta(minutes=minutes)
        with transaction.atomic():
            # skip_locked: a row locked by a request of that worker is in use, hence not idle.
            idle = list(
                active.filter(study__abandon_after_minutes=minutes, last_activity_at__lt=cutoff)
                .select_for_update(skip_locked=True, of=("self",))
                .order_by("id")
            )
            reason = f"no activity for {minutes} minute{'' if minutes == 1 else 's'}"
            freed = [p for p in idle if abandon(p, reason=reason, at=now)]
        for participation in freed:  # once the block succeeded: only what was really released
            logger.info(
                "released the slot of participation %s (study %s): idle for %d min",
                participation.pk,
                participation.study_id,
                minutes,
            )
        released += len(freed)
    return released
