"""A Prolific run started from the dashboard or the admin, as a background job (annotation.services.jobs).

The page stores a queued ``ProlificJob`` (``prolific_job_create``) and shows its progress; a Celery worker runs
it (``prolific_job_run``), so no web request waits for Prolific's answers (nor, on SQLite, holds the write turn
meanwhile). The run is ``operations.run``; each participant done is the job's progress, and the report is
stored with the job. A run whose worker died is not started again (PROLIFIC_JOB_MAX_ATTEMPTS = 1): run it
again from the page, which does only what is still to do.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction

from annotation.errors import ServiceError
from annotation.models import AuditEntry, ProlificJob, Study
from annotation.services import audit, jobs
from annotation.services.prolific import operations
from annotation.services.roles.operations import check_job, prolific_operation

logger = logging.getLogger(__name__)
Status = ProlificJob.Status

PROLIFIC_JOBS = jobs.JobKind(
    model=ProlificJob,
    task="annotation.run_prolific_job",
    noun="Prolific job",
    logger=logger,
    tag=lambda job: f"{job.operation}, study {job.study_id}",
    settings_prefix="PROLIFIC_JOB",
)


class ProlificJobBusy(ServiceError):
    code = "prolific_job_busy"
    status = 409


def prolific_job_create(*, study: Study, operation: str, user: User | AnonymousUser | None = None) -> ProlificJob:
    """Store a queued run of ``operation`` on ``study`` and queue its task after commit. One run at a time per
    study: two runs of one study would only wait on each other's claims."""
    if operation not in operations.OPERATIONS:
        raise operations.UnknownOperation(
            f"Unknown operation {operation!r}; one of {', '.join(operations.OPERATIONS)}."
        )
    if not operations.enabled():
        raise operations.ProlificDisabled(operations.OFF_MESSAGE)
    busy = ProlificJob.objects.filter(study=study, status__in=[Status.QUEUED, Status.RUNNING]).first()
    if busy is not None:
        raise ProlificJobBusy(f"a Prolific {busy.operation} of {study.slug} is already {busy.status} (#{busy.pk})")
    with transaction.atomic():
        job = ProlificJob.objects.create(
            study=study, operation=operation, created_by=user if user and user.pk else None
        )
        audit.record(
            actor=user,
            action=AuditEntry.Action.PROLIFIC_QUEUED,
            study=study,
            detail={"operation": operation, "job": job.pk},
        )
    logger.info("Prolific job %s queued: %s of study %s", job.pk, operation, study.slug)
    jobs.queue(PROLIFIC_JOBS, job.pk)
    return job


def _work(job: ProlificJob, progress: jobs.Progress) -> jobs.Finished:
    # Its requester must hold the operation's right when it runs (paying: the PI's); else nothing is done.
    check_job(job.created_by, prolific_operation(job.operation))
    study = Study.objects.select_related("task").filter(pk=job.study_id).first()
    if study is None:
        raise ServiceError("the study was deleted before the run started")
    # The run is the act of whoever queued it.
    actor = job.created_by or f"Prolific job {job.pk}"
    report = operations.run(operation=job.operation, study=study, progress=progress, actor=actor)
    counts = ", ".join(f"{n} {state}" for state, n in sorted(report.counts.items())) or "nobody"
    return jobs.Finished(fields={"report": report.as_dict()}, note=counts)


def prolific_job_run(*, job_id: int) -> ProlificJob:
    """Run a queued job; on any error it is failed with the reason (annotation.services.jobs)."""
    job: ProlificJob = jobs.run(PROLIFIC_JOBS, job_id, _work)
    return job


def prolific_jobs_sweep(*, now: datetime | None = None) -> jobs.SweepResult:
    """Fail the runs whose worker died. Periodic."""
    return jobs.sweep(PROLIFIC_JOBS, now=now)


def job_status(job: ProlificJob) -> dict[str, Any]:
    """What the job's page shows while it runs."""
    return {
        "id": job.pk,
        "study": job.study.slug,
        "operation": job.operation,
        "status": job.status,
        "progress": job.progress,
        "error": job.error,
        "done": job.status == Status.DONE,
        "report": job.report,
    }
