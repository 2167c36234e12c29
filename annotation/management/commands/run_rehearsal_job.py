"""Run one queued rehearsal job (annotation.reporting.rehearsal_jobs) in this process.

The dashboard starts it, one process per job, where no Celery worker runs (Celery eager, e.g. the demo), so
that its Rehearse button returns at once: ``manage.py run_rehearsal_job 12``. A job that is not queued is left
as it is (the same rule as the Celery task's).
"""

from typing import Any

from django.core.management.base import CommandParser

from annotation.reporting.rehearsal_jobs import rehearsal_job_run
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Run a queued rehearsal job (the dashboard's Rehearse button, without a Celery worker)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("job_id", type=int)

    def handle(self, *args: Any, job_id: int, **options: Any) -> None:
        job = rehearsal_job_run(job_id=job_id)
        self.stdout.write(f"rehearsal job {job.pk}: {job.status}{' ' + job.error if job.error else ''}")
