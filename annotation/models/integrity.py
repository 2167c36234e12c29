"""The integrity rule's verdict on a worker (services.verdicts.integrity), kept with its figures."""

from django.conf import settings
from django.db import models

from annotation.models.participation import Participation


class IntegrityDecision(models.Model):
    """One verdict at the end of a test step: the worker's signal figures, the rule then, and what it decided."""

    class Decision(models.TextChoices):
        PASSED = "passed", "Passed (within the rule, or no rule)"
        REVIEW = "review", "Flagged for review"
        EXCLUDED = "excluded", "Excluded"

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="integrity_decisions")
    items = models.PositiveIntegerField(help_text="Test items locked (answered, no answer or skipped).")
    answered = models.PositiveIntegerField(help_text="Of those, answered (an answer or 'no answer'; not skipped).")
    with_signals = models.PositiveIntegerField(help_text="Items whose page sent the integrity signals.")
    copied_items = models.PositiveIntegerField(help_text="Items of which text was copied.")
    fast_items = models.PositiveIntegerField(help_text="Answered items faster than their reading-time estimate.")
    hidden_items = models.PositiveIntegerField(help_text="Items with more than hidden_seconds away in total.")
    max_copies = models.PositiveIntegerField(null=True, blank=True, help_text="integrity_max_copies then.")
    max_fast_share = models.FloatField(null=True, blank=True, help_text="integrity_max_fast_share then.")
    max_hidden_share = models.FloatField(null=True, blank=True, help_text="integrity_max_hidden_share then.")
    hidden_seconds = models.PositiveIntegerField(help_text="integrity_hidden_seconds then.")
    action = models.CharField(max_length=10, blank=True, help_text="integrity_action then ('' without a rule).")
    decision = models.CharField(max_length=10, choices=Decision.choices)
    reason = models.CharField(max_length=300)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["participation", "at", "id"]

    def __str__(self) -> str:
        return f"{self.participation_id}: {self.decision} ({self.reason})"
