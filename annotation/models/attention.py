"""Attention checks: items whose answer the item itself states, mixed into a study's test step."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.participation import Participation
from annotation.models.study import Study
from tasks_app.models import Example


class AttentionCheck(models.Model):
    """One attention check of a study, shown as item number ``position`` of every worker's test step.

    The worker sees it as an ordinary item: it is served through a Response row like any test item, so
    the page and the session API need nothing of their own. What the row points at is ``example``, an
    Example of the study's task that belongs to this check alone (``source_id`` ``attention-check:...``,
    in no example set, so never in a training or test set nor in the test set's hash), holding the
    check's text and its expected answer as gold. ``annotation.services.verdicts.attention`` creates and
    validates both; never write them by hand.
    """

    class Source(models.TextChoices):
        RESEARCHER = "researcher", "Written by the researcher"
        TEMPLATE = "template", "Generated from a template"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="attention_checks")
    position = models.PositiveIntegerField(help_text="1-based number of the item in the worker's test step.")
    context = models.TextField(help_text="The text the worker reads; for a span check it contains the target.")
    question = models.TextField(help_text="What the worker is asked, stating the answer expected.")
    expected_label = models.CharField(max_length=50, blank=True, help_text="Classification: the label to choose.")
    expected_spans = models.JSONField(default=list, blank=True, help_text="Span tasks: the words to select.")
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.RESEARCHER)
    example = models.OneToOneField(Example, on_delete=models.PROTECT, related_name="attention_check", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "position"], name="attention_check_unique_position"),
            models.CheckConstraint(condition=Q(position__gte=1), name="attention_check_position_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}: attention check at item {self.position}"

    @property
    def expected(self) -> list[str]:
        """The expected answer set, as the worker's answer is stored (label word or span texts)."""
        return [self.expected_label] if self.expected_label else list(self.expected_spans)


class AttentionDecision(models.Model):
    """The attention rule's verdict on a worker at the end of their test step, kept as FilterDecision is."""

    class Decision(models.TextChoices):
        PASSED = "passed", "Passed (within the rule)"
        REVIEW = "review", "Flagged for review"
        EXCLUDED = "excluded", "Excluded"

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="attention_decisions")
    checks = models.PositiveIntegerField()
    passed_count = models.PositiveIntegerField()
    failed_count = models.PositiveIntegerField()
    fail_limit = models.PositiveSmallIntegerField(help_text="The study's attention_fail_limit then (0: no rule).")
    action = models.CharField(max_length=10, blank=True, help_text="The study's attention_action then.")
    decision = models.CharField(max_length=10, choices=Decision.choices)
    reason = models.CharField(max_length=300)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["participation", "at", "id"]

    def __str__(self) -> str:
        return f"{self.participation_id}: {self.decision} ({self.failed_count} of {self.checks} failed)"
