"""A study's analysis plan, frozen when the study opens for its full launch (annotation.reporting.analysis_plan)."""

from django.db import models

from annotation.models.study import Study


class AnalysisPlan(models.Model):
    """The design, rules, metric options and aggregation a study was launched under, as canonical JSON with
    its SHA-256. Written once; the database refuses any later change of the row (migration 0035's trigger),
    so a rule edited after the launch shows as a deviation in the statement instead of moving the plan."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="analysis_plan")
    canonical = models.TextField(help_text="The plan as canonical JSON (sorted keys, no spaces): what is hashed.")
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the canonical JSON's UTF-8 bytes.")
    frozen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"analysis plan of study {self.study_id}: {self.sha256[:12]}"
