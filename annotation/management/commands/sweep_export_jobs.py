"""Recover the export jobs whose worker died, as Celery beat does every EXPORT_SWEEP_SECONDS.

manage.py sweep_export_jobs

A running job with no heartbeat for EXPORT_STALE_SECONDS is queued again, or failed with the reason
once it has been started EXPORT_MAX_ATTEMPTS times. Useful where no beat runs, e.g. from cron.
"""

from typing import Any

from annotation.reporting.exports import export_jobs_sweep
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Queue again, or fail after EXPORT_MAX_ATTEMPTS starts, the export jobs whose worker died."

    def handle(self, *args: Any, **options: Any) -> None:
        result = export_jobs_sweep()
        for label, ids in (("requeued", result.requeued), ("failed", result.failed)):
            listed = f" ({', '.join(f'#{pk}' for pk in ids)})" if ids else ""
            self.stdout.write(f"{label}: {len(ids)} export job(s){listed}")
