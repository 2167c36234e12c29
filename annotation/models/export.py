"""Export jobs (run by Celery, downloaded from the admin) and model predictions."""

from django.conf import settings
from django.db import models

from annotation.models.jobs import BackgroundJob
from tasks_app.models import Task


class ExportJob(BackgroundJob):
    kind = models.CharField(max_length=40, help_text="What to export, e.g. table-csv, annotations-jsonl, payments-csv.")
    params = models.JSONField(default=dict, blank=True, help_text="Study ids and metric options.")
    file = models.FileField(upload_to="exports/", blank=True)
    provenance = models.JSONField(
        null=True,
        blank=True,
        help_text="The reproducibility header and notes of the file; a CSV's only copy (CSV files carry none).",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    stale_since = models.DateTimeField(
        null=True, blank=True, help_text="A participant withdrew after it was made: export again."
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} ({self.status}{', stale' if self.stale_since else ''})"


class ModelRun(models.Model):
    """A model's predictions on a task's test set, scored by the same S1 code as the humans."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="model_runs")
    name = models.CharField(max_length=200)
    shots = models.PositiveSmallIntegerField(null=True, blank=True)
    predictions = models.JSONField(help_text="Test example id -> list of answer strings.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "name"]

    def __str__(self) -> str:
        return f"{self.name} on {self.task}"
