"""Retention: platform identifiers are kept IDENTIFIER_RETENTION_DAYS after a study is over, then pseudonymised.

A study is over when it is closed and every Prolific operation on it is done (no action uncertain,
failed or set up but unpaid, no Prolific job queued or running): until then the identifiers are what
Prolific needs to review and pay. The clock starts at the latest thing that happened to it (a
participation's last activity, an action's last update, a job's creation). A worker is pseudonymised only
once every study they took part in (or declined) is past its retention, so no open study loses the
identifier it still needs. Run by Celery beat (``annotation.pseudonymise_expired_identifiers``)."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.models import ConsentDecline, Participation, ProlificAction, ProlificJob, Study, Worker
from annotation.models.jobs import BackgroundJob
from annotation.services.rights import scrub
from annotation.services.state import pseudonyms


def over_since(study: Study) -> datetime | None:
    """When the study was last touched, if it is closed with every Prolific operation done; else None."""
    if study.status != Study.Status.CLOSED:
        return None
    actions = ProlificAction.objects.filter(participation__study=study)
    if actions.exclude(status=ProlificAction.Status.DONE).exists():
        return None
    jobs = ProlificJob.objects.filter(study=study)
    if jobs.filter(status__in=[BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING]).exists():
        return None
    times = [
        Participation.all_objects.filter(study=study).aggregate(t=Max("last_activity_at"))["t"],
        ConsentDecline.objects.filter(study=study).aggregate(t=Max("at"))["t"],
        actions.aggregate(t=Max("updated_at"))["t"],
        jobs.aggregate(t=Max("created_at"))["t"],
    ]
    return max((t for t in times if t is not None), default=None) or study.created_at


def pseudonymise_expired(*, now: datetime | None = None) -> int:
    """Pseudonymise every worker whose studies are all past retention; returns how many."""
    now = now or timezone.now()
    keep = timedelta(days=settings.IDENTIFIER_RETENTION_DAYS)
    expired = set()
    for study in Study.objects.all():
        since = over_since(study)
        if since is not None and since + keep <= now:
            expired.add(study.pk)
    done = 0
    workers = Worker.objects.exclude(external_id__startswith=pseudonyms.PREFIX).exclude(
        platform=Worker.Platform.PREVIEW
    )
    for worker in workers:
        studies = set(Participation.all_objects.filter(worker=worker, is_preview=False).values_list("study", flat=True))
        studies |= set(ConsentDecline.objects.filter(worker=worker).values_list("study", flat=True))
        if studies and studies <= expired:
            with transaction.atomic():
                alias = pseudonyms.pseudonym(platform=worker.platform, external_id=worker.external_id)
                scrub.replace_everywhere(worker.external_id, alias)
            done += 1
    return done
