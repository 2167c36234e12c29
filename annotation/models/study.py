"""Studies and their conditions (the cohorts of 0/10/20/30 shots)."""

import math
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.protocol import comprehension, roles
from annotation.protocol.checklist import checklist_answers_errors
from annotation.protocol.languages import study_language_choices
from annotation.protocol.outcomes import validate_codes
from annotation.protocol.survey import validate_definition
from annotation.protocol.translations import validate_translations
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

    class AttentionAction(models.TextChoices):
        REVIEW = "review", "Flag the worker for review"
        EXCLUDE = "exclude", "Exclude the worker"

    class EthicsReview(models.TextChoices):
        APPROVED = "approved", "Approved by an ethics board"
        EXEMPT = "exempt", "Exempt from review"

    class FilterRule(models.TextChoices):
        NONE = "none", "No training filter"
        ABSOLUTE = "absolute", "Training S1 at least a minimum"
        RELATIVE = "relative", "Training S1 at most a distance below the group's (the condition's other workers)"

    class Protocol(models.TextChoices):
        # Which published protocol the study follows: the platform's code reads the study's fields
        # (conditions, samples), never this name; it is recorded for the reports and the statement.
        CLUES = "clues", "CLUES: 0/10/20/30-shot conditions on a training split, the whole test set"
        FEWCLUE_PAPER = "fewclue-paper", "FewCLUE paper (6.1): training on development items, a test sample"
        FEWCLUE_README = (
            "fewclue-readme",
            "FewCLUE README: training on training items, a sample of the validation set, majority vote",
        )

    class FilterReference(models.TextChoices):
        MEAN = "mean", "Mean of the others in the group"
        MEDIAN = "median", "Median of the others in the group"

    slug = models.SlugField(unique=True, help_text="Used in the workers' entry link, e.g. /join/sst2-pilot/.")
    name = models.CharField(max_length=200)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="studies")
    split_number = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(5)], help_text="Training split 1..5."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    workers_per_condition = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1)])
    # A pilot launch (docs/studies.md, "A pilot launch"): opened with this share of each condition's slots, the
    # rest opened later (services.studies.studies.change_status); services.state.slots.open_slots reads them.
    pilot_workers_per_condition = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The pilot's share: how many workers per condition may take part while the study runs as a "
        "pilot (opened with “Open as pilot”), at most the workers per condition; the rest of the slots open with "
        "“Open the rest”. Empty: no pilot.",
    )
    pilot_opened_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When the study was opened as a pilot (empty: it was not)."
    )
    rest_opened_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When the rest of a pilot study's slots were opened."
    )
    hourly_rate = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("12.00"))
    currency = models.CharField(max_length=3, default="USD")
    prolific_sync_places = models.BooleanField(
        default=False,
        help_text="With the Prolific operations on: after each slot taken or freed, grow the Prolific study's "
        "places for the excluded workers' replacements, and pause it while every slot is held (docs/prolific.md).",
    )
    base_reward = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        default=None,
        help_text="Fixed reward posted per participant on the platform; empty until set (no bonus is computed "
        "while it is empty), 0 only if none was posted (paid by the hour, all of it as a bonus). "
        "Effective hourly pay is this reward over the time spent; a bonus tops it up to the hourly rate. "
        "With Prolific operations on, the bonus uses the reward read from the Prolific study instead.",
    )
    platform_minimum_hourly = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="The recruiting platform's minimum hourly pay, in the study's currency, when the study ran "
        "(empty: not recorded). The statement sets the effective hourly pay against it.",
    )
    platform_recommended_hourly = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="The platform's recommended hourly pay, in the study's currency (empty: not recorded).",
    )
    ethics_review = models.CharField(
        max_length=10,
        choices=EthicsReview.choices,
        blank=True,
        default="",
        help_text="Approved by a research ethics board, or exempt from review (empty: not recorded).",
    )
    ethics_board = models.CharField(
        max_length=200, blank=True, help_text="The board that approved the study or granted the exemption."
    )
    ethics_reference = models.CharField(max_length=100, blank=True, help_text="The approval's reference number.")
    preregistration = models.CharField(
        max_length=500,
        blank=True,
        help_text="Where the study's design was publicly pre-registered before it ran (a URL or a registry's "
        "reference, e.g. https://osf.io/abcd1); empty: not pre-registered. The statement and the checklist say it.",
    )
    ai_instruction = models.TextField(
        blank=True,
        help_text="What workers are told about AI tools (e.g. not to use AI assistants), shown with the task's "
        "instructions on every page that shows them; per language in translations (ai_instruction). Empty: "
        "nothing is said. The statement records it beside the integrity signals.",
    )
    checklist_answers = models.JSONField(
        default=dict,
        blank=True,
        help_text="The authors' answers to the human-baselines checklist items only they can answer (the paper, "
        'author baseliners, the model\'s interface...): {"0.1": "Title", ...}, numbered as the checklist.',
    )
    data_licence = models.CharField(
        max_length=200,
        blank=True,
        help_text="The licence of the human data release (manage.py release_study), e.g. CC BY 4.0; the data "
        "card says it is not stated while empty.",
    )
    test_order = models.CharField(max_length=10, choices=TestOrder.choices, default=TestOrder.FIXED)
    protocol = models.CharField(
        max_length=20,
        choices=Protocol.choices,
        default=Protocol.CLUES,
        editable=False,
        help_text="The published protocol the study's design follows (docs/studies.md); set at creation.",
    )
    test_sample_size = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        editable=False,
        help_text="K: each condition's workers answer one seeded sample of K test items, drawn once and recorded "
        "on the condition (FewCLUE). Empty: the whole test set (CLUES). Set at creation.",
    )
    abandon_after_minutes = models.PositiveIntegerField(
        default=60, validators=[MinValueValidator(1)], help_text="A slot with no activity for this long is released."
    )
    filter_rule = models.CharField(max_length=10, choices=FilterRule.choices, default=FilterRule.NONE)
    filter_threshold = models.FloatField(
        default=0.0,
        help_text="Absolute rule: the minimum training S1 (0..1). Relative rule: the largest allowed distance "
        "below the mean (or median) training S1 of the other workers of the condition's group.",
    )
    filter_reference = models.CharField(
        max_length=10,
        choices=FilterReference.choices,
        default=FilterReference.MEAN,
        help_text="Relative rule: compare each worker with the mean or the median of the others in the group.",
    )
    filter_group_timeout_minutes = models.PositiveIntegerField(
        default=120,
        validators=[MinValueValidator(1)],
        help_text="Relative rule: the group is judged once all its slots have finished training, or this long "
        "after its first undecided worker finished training, with the group so far. Workers go on to the "
        "test meanwhile.",
    )
    attention_fail_limit = models.PositiveSmallIntegerField(
        default=0,
        help_text="A worker who fails this many attention checks or more is flagged for review or excluded "
        "at the end of the test step (attention_action); 0: no rule, failures are only reported.",
    )
    attention_action = models.CharField(max_length=10, choices=AttentionAction.choices, default=AttentionAction.REVIEW)
    # The integrity rule (services.verdicts.integrity): each limit is off while empty; no limit set, no rule.
    integrity_max_copies = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Integrity rule: a worker who copied text of more test items than this is flagged "
        "(integrity_action). Empty: no limit.",
    )
    integrity_max_fast_share = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Integrity rule: the largest share (0..1) of answered test items answered faster than their "
        "reading-time estimate. Empty: no limit.",
    )
    integrity_max_hidden_share = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Integrity rule: the largest share (0..1) of test items during which the page was away "
        "(unfocused or hidden) for more than integrity_hidden_seconds in total. Empty: no limit.",
    )
    integrity_hidden_seconds = models.PositiveIntegerField(
        default=30, validators=[MinValueValidator(1)], help_text="Integrity rule: what counts as a long time away."
    )
    integrity_action = models.CharField(max_length=10, choices=AttentionAction.choices, default=AttentionAction.REVIEW)

    class SurveyPlacement(models.TextChoices):
        BEFORE_TRAINING = "before_training", "Before the training step"
        AFTER_TEST = "after_test", "After the test step"

    outcome_codes = models.JSONField(
        default=dict,
        blank=True,
        help_text='Per outcome, the code and an optional redirect URL: {"completed": {"code": "ABC123", "url": ""}, '
        "...}. Outcomes: completed, screened_out, attention_failed, declined, full, already_took_part. "
        "Missing codes are generated when the study is saved (annotation.services.state.outcomes).",
    )
    worker_title = models.CharField(
        max_length=120,
        blank=True,
        help_text="The title workers see (empty: the task's worker title). Never the dataset's name.",
    )
    worker_description = models.TextField(
        blank=True, help_text="The description workers see at the top of every page (empty: the task's)."
    )
    consent_required = models.BooleanField(
        default=False,
        help_text="Workers must agree to the consent text right after entry, before anything else; "
        "declining ends their participation.",
    )
    consent_text = models.TextField(
        blank=True, help_text="The consent form (plain text or Markdown); required when consent is required."
    )
    survey = models.JSONField(
        default=list,
        blank=True,
        help_text='A short survey: a list of questions {"key", "type": single|multiple|number|text, "label", '
        '"options": [...], "required": bool, "min", "max", "demographic": bool}. Empty: no survey. '
        "demographic: the statement summarises its answers as counts.",
    )
    survey_placement = models.CharField(
        max_length=20, choices=SurveyPlacement.choices, default=SurveyPlacement.AFTER_TEST
    )
    comprehension = models.JSONField(
        default=list,
        blank=True,
        help_text="A comprehension check on the instructions, answered before training: a list of questions "
        '{"key", "label", "options": [...], "correct": [...], "multiple": bool}. A worker who fails it gets a '
        "second attempt; failing that too screens them out (paid). Empty: no check.",
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
    translations = models.JSONField(
        default=dict,
        blank=True,
        help_text='The worker texts of this study in other languages: {"de": {"worker_title": "...", '
        '"worker_description": "...", "consent_text": "...", "survey": {"<key>": {"label": "...", '
        '"options": [...]}}}}. Any text left out is shown as written above (docs/studies.md, Languages).',
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        permissions = roles.STUDY_PERMISSIONS  # the team's rights (annotation.services.roles)
        constraints = [
            models.CheckConstraint(condition=Q(split_number__gte=1, split_number__lte=5), name="study_split_1_to_5"),
            models.CheckConstraint(condition=Q(workers_per_condition__gte=1), name="study_at_least_one_worker"),
            models.CheckConstraint(
                condition=Q(pilot_workers_per_condition__isnull=True)
                | Q(
                    pilot_workers_per_condition__gte=1,
                    pilot_workers_per_condition__lte=models.F("workers_per_condition"),
                ),
                name="study_pilot_share_within_design",
            ),
            # A piloted study keeps its share: cleared while running it would open every slot without "open the
            # rest", and afterwards the statement reports it.
            models.CheckConstraint(
                condition=Q(pilot_opened_at__isnull=True) | Q(pilot_workers_per_condition__isnull=False),
                name="study_piloted_has_a_share",
            ),
            models.CheckConstraint(condition=Q(hourly_rate__gte=0), name="study_rate_not_negative"),
            models.CheckConstraint(
                condition=Q(test_sample_size__isnull=True) | Q(test_sample_size__gte=1),
                name="study_test_sample_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # Every problem at once, each on its field: a form shows the survey's and the comprehension check's
        # errors together with the others, and a negative rate beside the rate (not the database constraint's
        # name once the row is written).
        errors: dict[str, list[str]] = {}
        if problems := checklist_answers_errors(self.checklist_answers):
            errors["checklist_answers"] = problems
        # Training S1 lies in 0..1, and so do its minimum and any distance below a mean: a threshold
        # outside that range would silently let everyone through or nobody.
        threshold = self.filter_threshold
        if threshold is not None and (not math.isfinite(threshold) or not 0.0 <= threshold <= 1.0):
            errors["filter_threshold"] = [
                f"The training filter's threshold is an S1 value from 0 to 1; got {threshold}."
            ]
        if self.ethics_review == self.EthicsReview.APPROVED and not self.ethics_board.strip():
            errors["ethics_board"] = ["Name the board that approved the study."]
        for rate in ("hourly_rate", "platform_minimum_hourly", "platform_recommended_hourly"):
            if (getattr(self, rate) or 0) < 0:
                errors[rate] = ["An hourly rate is not negative."]
        pilot = self.pilot_workers_per_condition
        if pilot is not None and self.workers_per_condition is not None and pilot > self.workers_per_condition:
            errors["pilot_workers_per_condition"] = [
                f"The pilot's share is part of the design: at most the {self.workers_per_condition} workers per "
                f"condition; got {pilot}."
            ]
        elif pilot is None and self.pilot_opened_at is not None:
            errors["pilot_workers_per_condition"] = [
                "The study was opened as a pilot: it keeps its share (to open every slot, manage.py check_study "
                f"{self.slug} --open-rest)."
            ]
        if self.consent_required and not (self.consent_text or "").strip():
            errors["consent_text"] = ["Consent is required: write the consent text workers agree to."]
        checks = (
            ("survey", validate_definition),
            ("comprehension", comprehension.validate_definition),
            ("outcome_codes", validate_codes),
        )
        for field, check in checks:
            try:
                check(getattr(self, field))
            except ValidationError as exc:
                errors[field] = exc.messages
        if "survey" not in errors:
            try:
                validate_translations(self.translations, survey=self.survey)
            except ValidationError as exc:
                errors["translations"] = exc.messages
        if errors:
            raise ValidationError(errors)

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN

    @property
    def in_pilot(self) -> bool:
        """Opened as a pilot, the rest not opened yet (whatever the status: a paused pilot is still one)."""
        return self.pilot_opened_at is not None and self.rest_opened_at is None


class Condition(models.Model):
    """One cohort of a study: a shot level and its training set (none for 0 shots)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    shots = models.PositiveSmallIntegerField(help_text="0 for zero-shot, else 10/20/30.")
    training_set = models.ForeignKey(
        ExampleSet, on_delete=models.PROTECT, null=True, blank=True, related_name="conditions"
    )
    # A condition may draw its items from its sets instead of taking them whole (FewCLUE: N training items
    # of the development set, K test items). The draw happens once, when the condition is made, with a
    # recorded seed (annotation.services.session.samples), so every worker of the condition, a replacement included,
    # gets the same items, and a report can name and reproduce them.
    sample_seed = models.BigIntegerField(
        null=True, blank=True, help_text="The seed the condition's samples were drawn with (empty: no sample)."
    )
    training_sample = models.JSONField(
        default=list,
        blank=True,
        help_text="Example ids of the training step, drawn from the training set, in its order (empty: all of it).",
    )
    test_set = models.ForeignKey(
        ExampleSet,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="test_conditions",
        help_text="The set the test sample was drawn from (empty: the task's test set).",
    )
    test_sample = models.JSONField(
        default=list,
        blank=True,
        help_text="Example ids of the test step, drawn from the test set, in its order (empty: all of it).",
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

    @property
    def has_test_sample(self) -> bool:
        return bool(self.test_sample)
