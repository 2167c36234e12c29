"""The fields every long job shares, whatever it does (annotation.services.jobs runs them)."""

from django.db import models


class BackgroundJob(models.Model):
    """A job a Celery worker runs: queued → running → done / failed; stale (worker dead) → queued again or failed.

    A model of a kind of job adds what it needs (its input, its result) to these fields.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the worker running it (see EXPORT_STALE_SECONDS)."
    )
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="How many times a worker has started it (at most EXPORT_MAX_ATTEMPTS)."
    )
    progress = models.JSONField(
        null=True, blank=True, help_text="What the running job last reported: {done, total} (total may be null)."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
