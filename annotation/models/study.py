"""Studies and their conditions (the cohorts of 0/10/20/30 shots)."""

import math
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.services.languages import study_language_choices
from tasks_app.models import ExampleSet, Task


class Study(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class TestOrder(models.TextChoices):
        FIXED = "fixed", "Fixed (the test file's order)"
        SHUFFLED = "shuffled", "Shuffled per worker (seed recorded)"

    class FilterRule(models.TextChoices):
        NONE = "none", "No training filter"
        ABSOLUTE = "absolute", "Training S1 at least a minimum"
        RELATIVE = "relative", "Training S1 at most a distance below the condition's mean so far"

    slug = models.SlugField(unique=True, help_text="Used in the workers' entry link, e.g. /join/sst2-pilot/.")
    name = models.CharField(max_length=200)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="studies")
    split_number = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(5)], help_text="Training split 1..5."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    workers_per_condition = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1)])
    hourly_rate = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("12.00"))
    currency = models.CharField(max_length=3, default="USD")
    base_reward = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("0.00"),
        help_text="Fixed reward posted per participant on the platform (0: paid by the hour only). "
        "Effective hourly pay is this reward over the time spent; a bonus tops it up to the hourly rate.",
    )
    test_order = models.CharField(max_length=10, choices=TestOrder.choices, default=TestOrder.FIXED)
    abandon_after_minutes = models.PositiveIntegerField(
        default=60, validators=[MinValueValidator(1)], help_text="A slot with no activity for this long is released."
    )
    filter_rule = models.CharField(max_length=10, choices=FilterRule.choices, default=FilterRule.NONE)
    filter_threshold = models.FloatField(
        default=0.0,
        help_text="Absolute rule: the minimum training S1 (0..1). Relative rule: the largest allowed distance "
        "below the mean training S1 of the condition's other workers so far.",
    )
    completion_code = models.CharField(max_length=64, blank=True, help_text="Shown to workers who finish.")
    prolific_completion_url = models.URLField(
        blank=True,
        help_text="Where Prolific workers are sent on completion, e.g. https://app.prolific.com/submissions/complete?cc=XXXX",
    )
    closes_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="Set when the study is closed: workers already in may go on until then, not after. "
        "Empty on a study that is not closed (and on one closed before this existed: it ends at once).",
    )
    language = models.CharField(
        max_length=10,
        blank=True,
        default="",
        choices=study_language_choices,
        help_text="The language of the worker pages: a fixed one, or (empty) the worker's browser language "
        "among those the site ships. Task texts given in that language are shown (the task's translations).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(condition=Q(split_number__gte=1, split_number__lte=5), name="study_split_1_to_5"),
            models.CheckConstraint(condition=Q(workers_per_condition__gte=1), name="study_at_least_one_worker"),
            models.CheckConstraint(condition=Q(hourly_rate__gte=0), name="study_rate_not_negative"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # Training S1 lies in 0..1, and so do its minimum and any distance below a mean: a threshold
        # outside that range would silently let everyone through or nobody.
        threshold = self.filter_threshold
        if threshold is not None and (not math.isfinite(threshold) or not 0.0 <= threshold <= 1.0):
            raise ValidationError(
                {"filter_threshold": f"The training filter's threshold is an S1 value from 0 to 1; got {threshold}."}
            )

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN


class Condition(models.Model):
    """One cohort of a study: a shot level and its training set (none for 0 shots)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    shots = models.PositiveSmallIntegerField(help_text="0 for zero-shot, else 10/20/30.")
    training_set = models.ForeignKey(
        ExampleSet, on_delete=models.PROTECT, null=True, blank=True, related_name="conditions"
    )

    class Meta:
        ordering = ["study", "shots"]
        constraints = [
            models.UniqueConstraint(fields=["study", "shots"], name="condition_unique_shots_per_study"),
            models.CheckConstraint(
                condition=Q(shots=0, training_set__isnull=True) | Q(shots__gt=0, training_set__isnull=False),
                name="condition_training_set_iff_few_shot",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}: {self.shots}-shot"

    @property
    def is_few_shot(self) -> bool:
        return self.shots > 0
