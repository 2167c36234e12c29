"""Polling, the fallback when Prolific cannot reach the app's webhook URL (no public address).

Reads a study's submissions on Prolific (``GET studies/{id}/submissions/``, for every Prolific study id
its workers came with, ``STUDY_ID``) and hands each RETURNED, TIMED-OUT or REJECTED one to
``webhooks.record_and_apply``, the same function as the webhook: the slot is freed once, whichever
hears of it first. Run by Celery beat (``PROLIFIC_POLL_SECONDS``) and ``manage.py prolific poll``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from annotation.models import Participation, ProlificEvent, Study, Worker
from annotation.services.prolific import places
from annotation.services.prolific import runs as operations
from annotation.services.prolific.client import CallRecord, ProlificClient, ProlificError
from annotation.services.prolific.webhooks import FREEING, SUBMISSION_EVENT, record_and_apply

logger = logging.getLogger(__name__)


@dataclass
class PollResult:
    study: str
    prolific_studies: list[str] = field(default_factory=list)
    submissions: int = 0
    events: list[ProlificEvent] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def freed(self) -> int:
        return sum(e.outcome.startswith("slot freed") for e in self.events)


def _prolific_participations(study: Study | None = None) -> QuerySet[Participation]:
    active = Participation.objects.filter(
        worker__platform=Worker.Platform.PROLIFIC, state__in=Participation.ACTIVE_STATES
    )
    return active if study is None else active.filter(study=study)


def prolific_study_ids(study: Study) -> list[str]:
    """The Prolific studies whose participants are still at work in ``study`` (only they can be freed)."""
    data = _prolific_participations(study).values_list("platform_data", flat=True)
    return sorted({str(d.get("STUDY_ID")) for d in data if isinstance(d, dict) and d.get("STUDY_ID")})


def studies_to_poll() -> list[Study]:
    ids = _prolific_participations().values_list("study_id", flat=True).distinct()
    return list(Study.objects.filter(pk__in=list(ids)).order_by("pk"))


def _log_failures(log: operations.CallLog) -> Callable[[CallRecord], None]:
    # A poll every few minutes would fill the call log with identical reads: only failures are kept.
    def on_call(record: CallRecord) -> None:
        if not record.ok:
            log(record)

    return on_call


def poll(*, study: Study, client: ProlificClient | None = None) -> PollResult:
    """Read the study's submissions on Prolific and free the slots of those who left. Raises ProlificDisabled."""
    client = client or operations.make_client()
    client.on_call = _log_failures(operations.CallLog())
    result = PollResult(study=study.slug, prolific_studies=prolific_study_ids(study))
    for prolific_study in result.prolific_studies:
        try:
            submissions = client.list_submissions(prolific_study)
        except ProlificError as exc:
            result.errors.append(f"{prolific_study}: {exc}")
            logger.warning("polling Prolific study %s failed: %s", prolific_study, exc)
            continue
        result.submissions += len(submissions)
        for sub in submissions:
            status = str(sub.get("status") or "").upper()
            if status not in FREEING or not sub.get("id"):
                continue
            payload = {
                "event_type": SUBMISSION_EVENT,
                "resource_id": str(sub["id"]),
                "participant_id": str(sub.get("participant_id") or sub.get("participant") or ""),
                "status": status,
            }
            # One event per submission and status: a later poll that reads the same status records nothing.
            event = record_and_apply(
                event_id=f"poll:{sub['id']}:{status}",
                source=ProlificEvent.Source.POLL,
                payload=payload,
                sent_at=timezone.now(),
                prolific_study=prolific_study,  # read by study: no need to ask which study it is of
            )
            if event is not None:
                result.events.append(event)
    return result


def poll_all() -> int:
    """Poll every study with Prolific workers at work (Celery beat); returns how many slots were freed. Then
    sync the places of the studies that opt in (``places.sync``), in case a sync after a change was missed."""
    if not operations.enabled():
        return 0
    freed = sum(poll(study=study).freed for study in studies_to_poll())
    # Open and paused studies, and those closed within a day: a sync lost to a race (or to Prolific being
    # away when ours was paused or closed) is caught here, and a paused or closed one's Prolific study paused.
    Status = Study.Status
    recent = Q(status=Status.CLOSED, closes_at__gte=timezone.now() - timedelta(days=1))
    synced = Study.objects.filter(Q(status__in=(Status.OPEN, Status.PAUSED)) | recent, prolific_sync_places=True)
    for study_id in synced.values_list("pk", flat=True):
        try:
            places.sync(study_id=study_id)
        except ProlificError as exc:
            logger.warning("syncing the Prolific places of study %s failed: %s", study_id, exc)
    return freed
