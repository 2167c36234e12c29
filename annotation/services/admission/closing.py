"""What closing a study means for the workers already in it.

Closing stops new entries at once (the entry link answers 410) and sets the
study's ``closes_at``: now plus a grace period (``DEFAULT_GRACE_MINUTES``
unless the admin gives another, 0 for none). Until then the workers already
in go on as before, and their page tells them when the study closes. From
then on ``check_can_work``, the one check that starting, submitting,
skipping and the worker page all make, refuses their work and closes their
participation out:

- a worker who had started (training or test step) is *excluded* with the
  reason ``CLOSED_REASON`` and gets a completion code, as a worker the
  training filter stops does: they did work in good faith and are paid for
  the time they spent (pay runs to the close-out, dated at their last
  activity), and on the platforms being paid means submitting with a code. Their answers stay stored; like every
  unfinished participation they are not in the human-performance table.
- a worker who had not started (claimed) is *abandoned* with the reason
  ``CLOSED_BEFORE_START_REASON``: they did no work, get no code and are asked
  to return the study on their platform.

The check reads only the study as loaded with the participation (the worker
request's one read, ``worker_sql.worker_state``): it adds no query to the
worker's requests; only a close-out writes. Pausing is not closing: a paused
study refuses new entries only, and its workers carry on.

Workers who never come back after the deadline are closed out the same way by
the periodic sweep (``close_out_expired``), so that one who did work still
finds their code when they return, rather than a slot released for inactivity.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from annotation.errors import ServiceError
from annotation.models import AuditEntry, Participation, ParticipationEvent, Study
from annotation.protocol.outcomes import CLOSED_BEFORE_START_REASON, CLOSED_REASON
from annotation.services import audit
from annotation.services.money import pay
from annotation.services.state import lifecycle

logger = logging.getLogger(__name__)

State = Participation.State

DEFAULT_GRACE_MINUTES = 60
MAX_GRACE_MINUTES = 7 * 24 * 60  # a week: a longer "closing" is a study left open


class StudyClosed(ServiceError):
    """The study closed and its grace period is over: the worker's request did nothing."""

    code = "study_closed"
    status = 409

    def __init__(self, study: Study):
        # In the language of the request (the session API activates the study's).
        if study.closes_at:
            self.detail = gettext(
                "This study closed at %(time)s: no more answers are taken. Reload the page: if you had started, "
                "it shows your completion code."
            ) % {"time": format_deadline(study.closes_at)}
        else:
            self.detail = gettext(
                "This study has closed: no more answers are taken. Reload the page: if you had started, it shows "
                "your completion code."
            )
        super().__init__(self.detail)


def format_deadline(at: datetime) -> str:
    """``HH:MM UTC`` (with the date when it is not today, in UTC)."""
    utc = at.astimezone(UTC)
    if utc.date() == timezone.now().astimezone(UTC).date():
        return utc.strftime("%H:%M UTC")
    return utc.strftime("%Y-%m-%d %H:%M UTC")


def grace_deadline(study: Study) -> datetime | None:
    """When the workers already in a closed study must have finished; None unless the study is closed
    with a deadline still to come or past (a study closed before deadlines existed has none)."""
    return study.closes_at if study.status == Study.Status.CLOSED else None


def is_over(study: Study, *, now: datetime | None = None) -> bool:
    """Whether the study is closed and its grace period over (a closed study without a deadline is)."""
    if study.status != Study.Status.CLOSED:
        return False
    return study.closes_at is None or (now or timezone.now()) >= study.closes_at


CLOSE_OUT_ACTOR = "system: close-out after the grace period"
_AUDITED = ("state", "exclusion_kind")


def close_out(participation: Participation, *, at: datetime | None = None) -> None:
    """End an active participation of a study that has closed (see the module's docstring).

    The close-out is dated at the worker's last act as the pay rule reads it (``pay.work_ends``: their last
    activity, locked answer, comprehension attempt or step; never after ``at``, default now): pay runs to the
    end of the work they did, not to whenever the sweep or their next request noticed the deadline.
    """
    now = at or timezone.now()
    # The pay rule's end of the work so far, not the last activity alone: activity is written at most every
    # TOUCH_INTERVAL (lifecycle.touch), so a locked answer or a comprehension attempt may be later than it.
    at = min(pay.work_ends([participation])[participation.pk], now)
    before = audit.snapshot(participation, _AUDITED)
    try:
        with transaction.atomic():
            if participation.state == State.CLAIMED:
                lifecycle.transition(participation, to_state=State.ABANDONED, reason=CLOSED_BEFORE_START_REASON, at=at)
            elif participation.state in (State.TRAINING, State.TEST):
                lifecycle.exclude(participation, reason=CLOSED_REASON, at=at, kind=Participation.ExclusionKind.CLOSED)
            else:
                return
            # The staff's close, carried out on this worker once the grace period is over.
            after = audit.snapshot(participation, _AUDITED)
            action = AuditEntry.Action.STUDY_CLOSE_OUT
            audit.record(actor=CLOSE_OUT_ACTOR, action=action, participation=participation, before=before, after=after)
    except lifecycle.InvalidTransition:
        participation.refresh_from_db()  # a racing request moved it first (a close-out, or its last answer)
        return
    logger.info("participation %s closed out: study %s has closed", participation.pk, participation.study_id)


def check_can_work(participation: Participation, *, now: datetime | None = None) -> None:
    """Raise StudyClosed, after closing the participation out, if it is still active (claimed, training,
    test) once its study's grace period is over. A finished participation (completed, excluded,
    abandoned) has no work left to refuse: its page stays what it was.

    Uses ``participation.study`` as loaded: no query unless it closes the participation out. A staff
    preview is never refused.
    """
    if participation.is_preview:  # staff may preview a closed study as if it were open
        return
    if participation.state not in Participation.ACTIVE_STATES or not is_over(participation.study, now=now):
        return
    close_out(participation, at=now)
    raise StudyClosed(participation.study)


def was_closed_out(participation: Participation) -> bool:
    """Whether the participation ended because its study closed (one query: its last event)."""
    if participation.state not in (State.EXCLUDED, State.ABANDONED):
        return False
    last = ParticipationEvent.objects.filter(participation=participation).order_by("-at", "-id").first()
    return last is not None and last.reason in (CLOSED_REASON, CLOSED_BEFORE_START_REASON)


def close_out_expired(*, now: datetime | None = None) -> int:
    """Close out the active participations of every closed study whose grace period is over; how many."""
    now = now or timezone.now()
    expired = Participation.objects.filter(
        Q(study__closes_at__isnull=True) | Q(study__closes_at__lte=now),
        state__in=Participation.ACTIVE_STATES,
        study__status=Study.Status.CLOSED,
    )
    count = 0
    for participation in expired.select_related("study").order_by("id"):
        before = participation.state
        close_out(participation, at=now)
        count += participation.state != before
    return count
