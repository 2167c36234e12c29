"""Celery entry points of reporting: take ids, call one service."""

import logging

from celery import shared_task

from annotation.reporting.exports import export_job_run

logger = logging.getLogger(__name__)


@shared_task(name="annotation.run_export")
def run_export(job_id: int) -> str:
    # The service logs why a job failed; this says which job a worker ran, for matching with Celery's own logs.
    logger.debug("running export job %s", job_id)
    status = export_job_run(job_id=job_id).status
    logger.debug("export job %s: %s", job_id, status)
    return status
