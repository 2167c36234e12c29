"""Time on an item and its audit trail, measured on the server.

``active_ms`` runs from when the item was first shown (``shown_at``) to its
submission. The page sends a heartbeat every 15 seconds while the worker is
active (input in the last minute and the page visible), and focus/blur events.
Time is added gap by gap between two consecutive signals (shown, heartbeats,
focus/blur, submit); a gap longer than ``IDLE_CAP_MS`` (60 s) counts as 60 s,
so a worker who walks away, or a laptop that sleeps, does not inflate the time.
Only pending items accumulate time; a locked item's figures are final.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import F
from django.utils import timezone

from annotation.models import Participation, Response
from annotation.services.session import worker_sql
from annotation.services.state import lifecycle

IDLE_CAP_MS = 60_000
HEARTBEAT_SECONDS = 15

EVENT_KINDS = ("heartbeat", "focus", "blur")


def capped_gap_ms(since: datetime | None, now: datetime) -> int:
    """Milliseconds from ``since`` to ``now``, at most IDLE_CAP_MS (0 without a start or for a clock step back)."""
    if since is None:
        return 0
    ms = int((now - since).total_seconds() * 1000)
    return max(0, min(ms, IDLE_CAP_MS))


def active_ms_at(response: Response, now: datetime) -> int:
    """The item's active time if it were submitted at ``now``."""
    return response.active_ms + capped_gap_ms(response.last_seen_at or response.shown_at, now)


def mark_shown(response: Response, *, now: datetime | None = None) -> None:
    """Record the first time the item is shown (later calls change nothing)."""
    if response.shown_at is not None or response.is_locked:
        return
    now = now or timezone.now()
    if worker_sql.mark_response_shown(response.pk, now):
        response.shown_at = response.last_seen_at = now


def record_event(*, participation: Participation, response: Response, kind: str, now: datetime | None = None) -> bool:
    """Add the gap since the last signal to a pending item's time; count a blur. False if the item is locked."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    now = now or timezone.now()
    lifecycle.touch(participation, at=now)
    if response.is_locked:
        return False
    if response.shown_at is None:
        mark_shown(response, now=now)
        gap = 0
    else:
        gap = capped_gap_ms(response.last_seen_at or response.shown_at, now)
    changes = {"active_ms": F("active_ms") + gap, "last_seen_at": now}
    if kind == "blur":
        changes["blur_count"] = F("blur_count") + 1
    return bool(Response.all_objects.filter(pk=response.pk, status=Response.Status.PENDING).update(**changes))
