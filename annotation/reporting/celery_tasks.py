"""Celery entry points of reporting: take ids, call one service."""

import logging

from celery import shared_task

from annotation.reporting.exports import export_job_run, export_jobs_sweep
from annotation.reporting.rehearsal_jobs import rehearsal_job_run, rehearsal_jobs_sweep
from annotation.reporting.warming import warm

logger = logging.getLogger(__name__)


# acks_late (also the app's default): the message is acknowledged when the task ends, so a worker that dies
# mid-job leaves it to be delivered again. reject_on_worker_lost: when a prefork child dies, the message is
# requeued at once rather than acknowledged. Either delivery runs the job only if it is queued or stale
# (export_job_run's claim), so a job whose worker is alive is never run twice, and a job that kills its
# worker is started at most EXPORT_MAX_ATTEMPTS times (the sweep fails it then).
@shared_task(name="annotation.run_export", acks_late=True, reject_on_worker_lost=True)
def run_export(job_id: int) -> str:
    # The service logs why a job failed; this says which job a worker ran, for matching with Celery's own logs.
    logger.debug("running export job %s", job_id)
    status = export_job_run(job_id=job_id).status
    logger.debug("export job %s: %s", job_id, status)
    return status


@shared_task(name="annotation.sweep_export_jobs")
def sweep_export_jobs() -> dict[str, list[int]]:
    """Periodic (CELERY_BEAT_SCHEDULE): queue again, or fail, the export jobs whose worker died."""
    result = export_jobs_sweep()
    # Runs every minute or so: a sweep that found nothing is not worth a line at info.
    found = bool(result.requeued or result.failed)
    logger.log(
        logging.INFO if found else logging.DEBUG,
        "export sweep: %d requeued, %d failed",
        len(result.requeued),
        len(result.failed),
    )
    return {"requeued": result.requeued, "failed": result.failed}


# Like run_export: a redelivered message runs the job only if it is queued (a rehearsal is never taken over).
@shared_task(name="annotation.run_rehearsal", acks_late=True, reject_on_worker_lost=True)
def run_rehearsal(job_id: int) -> str:
    return rehearsal_job_run(job_id=job_id).status


@shared_task(name="annotation.sweep_rehearsal_jobs")
def sweep_rehearsal_jobs() -> dict[str, list[int]]:
    """Periodic (CELERY_BEAT_SCHEDULE): fail the rehearsals whose worker died."""
    result = rehearsal_jobs_sweep()
    if result.failed:
        logger.info("rehearsal sweep: %d failed", len(result.failed))
    return {"requeued": result.requeued, "failed": result.failed}


@shared_task(name="annotation.warm_study_figures")  # warming.WARM_TASK
def warm_study_figures(study_id: int) -> bool:
    """After a completed worker's data changed (``warming.on_finished_change``): keep the study page's figures."""
    return warm(study_id)
