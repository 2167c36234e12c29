"""A rehearsal of a study run as a background job from the dashboard (annotation.reporting.rehearsal_jobs)."""

from django.conf import settings
from django.db import models

from annotation.models.jobs import BackgroundJob
from annotation.models.study import Study


class RehearsalJob(BackgroundJob):
    """One ``rehearse_study`` run: its inputs, what the engine said while it ran, and the report it wrote."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="rehearsal_jobs")
    workers_per_condition = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Instead of the study's own number (empty: the study's)."
    )
    seed = models.PositiveIntegerField(default=0, help_text="Fixes every simulated worker's draws.")
    log = models.TextField(blank=True, help_text="The last lines the rehearsal wrote while it ran.")
    passed = models.BooleanField(null=True, blank=True, help_text="Every invariant held (empty until done).")
    report_markdown = models.TextField(blank=True)
    report_json = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @property
    def last_line(self) -> str:
        return self.log.rsplit("\n", 1)[-1]

    def __str__(self) -> str:
        return f"rehearsal of study {self.study_id} ({self.status})"
