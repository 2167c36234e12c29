"""Celery entry points of reporting: take ids, call one service."""

from celery import shared_task

from annotation.reporting.exports import export_job_run


@shared_task(name="annotation.run_export")
def run_export(job_id: int) -> str:
    return export_job_run(job_id=job_id).status
