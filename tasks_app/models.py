"""The task catalog: what exists before any worker touches it.

Offsets convention, used everywhere in the project: a span is
``(start, end)`` with Python string indices into the example's context,
``start`` inclusive and ``end`` exclusive, so ``context[start:end] == text``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from tasks_app import reading_time
from tasks_app.texts import validate_translations


class Task(models.Model):
    class Kind(models.TextChoices):
        CLASSIFICATION = "classification", "Label classification"
        SPAN = "span", "Span extraction from the context"

    class Group(models.TextChoices):
        SENTENCE_CLASSIFICATION = "sentence_classification", "Sentence Classification"
        NER = "ner", "Named Entity Recognition"
        MRC = "mrc", "Machine Reading Comprehension"
        OTHER = "other", "Other"

    slug = models.SlugField(unique=True, help_text="Short stable identifier, e.g. sst2, conll03.")
    name = models.CharField(max_length=100, help_text="Display name, e.g. SST-2.")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    group = models.CharField(max_length=30, choices=Group.choices, default=Group.OTHER)
    description = models.TextField(help_text="Shown to workers at the top of every page.")
    instructions = models.TextField(blank=True, help_text="Short instructions shown beside each item.")
    multiple_spans = models.BooleanField(
        default=False,
        help_text="Span tasks: may an answer have several spans (NER, and SQuAD as in the CLUES paper) or at most one?",
    )
    empty_answer_allowed = models.BooleanField(
        default=True,
        help_text="Span tasks: may a worker answer that there is no answer? Off for a task whose gold is never "
        "empty (ReCoRD): the worker page then offers no 'No answer' button and the server refuses one. "
        "A test item can still be skipped.",
    )
    overlapping_spans = models.BooleanField(
        default=False,
        help_text="Span tasks with several spans: may they overlap (a nested name such as New York inside "
        "New York City)? The same span twice is refused either way.",
    )
    question_types = models.JSONField(
        default=list,
        blank=True,
        help_text='Question types as a list of {"code", "name", "question"}, e.g. PER/ORG/LOC for NER.',
    )
    translations = models.JSONField(
        default=dict,
        blank=True,
        help_text="The worker-facing texts per language, each optional (the task's own texts otherwise): "
        '{"de": {"description": "...", "instructions": "...", "question_types": {"PER": "..."}, '
        '"labels": {"positive": {"definition": "...", "example": "..."}}}} (docs/studies.md, Languages).',
    )
    segment_titles = models.JSONField(
        default=list,
        blank=True,
        help_text="Classification tasks whose context is a list of texts: the title the worker page shows above "
        'each part, in order, e.g. ["Headline", "Keywords"] (empty: "Sentence 1", "Sentence 2", ...).',
    )
    display_order = models.PositiveSmallIntegerField(default=100)
    worker_title = models.CharField(
        max_length=120,
        blank=True,
        help_text='The neutral title workers see, e.g. "Movie review sentiment" (never the dataset name; empty: '
        '"Language task"). A study may override it.',
    )
    worker_question = models.TextField(
        blank=True,
        help_text="Question text shown to workers instead of each example's own (empty: the example's). "
        "The stored examples keep the release's text.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["display_order", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_classification(self) -> bool:
        return self.kind == self.Kind.CLASSIFICATION

    def clean(self) -> None:
        if self.segment_titles is None:  # an emptied admin field: no titles
            self.segment_titles = []
        titles = self.segment_titles
        if not isinstance(titles, list) or not all(isinstance(t, str) for t in titles):
            raise ValidationError({"segment_titles": 'A list of titles, one per part, e.g. ["Headline", "Keywords"].'})
        validate_translations(
            self.translations,
            label_names=list(self.labels.values_list("name", flat=True)) if self.pk else None,
            question_type_codes=[qt.get("code", "") for qt in self.question_types or [] if isinstance(qt, dict)],
        )

    def question_type_for(self, question: str) -> str:
        """The code of the question type whose question text matches, or ''."""
        for qt in self.question_types or []:
            if qt.get("question") == question:
                return qt.get("code", "")
        return ""


class Label(models.Model):
    """One label of a classification task, with its help pop-up text."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="labels")
    name = models.CharField(max_length=50, help_text="The label word as it appears in the gold answers.")
    definition = models.CharField(max_length=300)
    example = models.TextField(help_text="One short example with this label.")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["task", "position", "name"]
        constraints = [models.UniqueConstraint(fields=["task", "name"], name="label_unique_per_task")]

    def __str__(self) -> str:
        return f"{self.task.slug}:{self.name}"


class Example(models.Model):
    """One item: a context, a question and a gold answer that is a set of spans.

    ``context`` is a string, or a list of two strings for sentence pairs
    (MNLI's premise and hypothesis). ``gold_answers`` is the answer set as
    strings (label words, entity strings or answer texts; ``[]`` is the empty
    set). ``gold_spans`` locates each answer string in a string context:
    ``{"text", "start", "end"}`` for every occurrence, end exclusive; strings
    that cannot be found are simply not located (the importer reports them).
    ``extra`` keeps the remaining fields of the source line verbatim.

    Source ids are not unique in the real release (SST-2 numbers each file
    from 1), so an example is identified by a fingerprint of its content.
    """

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="examples")
    source_id = models.CharField(max_length=100, db_index=True)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the canonical source line.")
    context = models.JSONField()
    question = models.TextField()
    question_type = models.CharField(max_length=20, blank=True)
    gold_answers = models.JSONField(default=list)
    gold_spans = models.JSONField(default=list)
    alternative_answers = models.JSONField(
        default=list, blank=True, help_text="Each gold annotator's answer as its own set (SQuAD-style data)."
    )
    extra = models.JSONField(default=dict, blank=True)
    choices = models.JSONField(
        default=list,
        blank=True,
        help_text="The item's own options, in order (FewCLUE CHID's seven idioms): a classification task's "
        'label "i" then names choices[i]. Empty: the task\'s labels are the options.',
    )
    marks = models.JSONField(
        default=list,
        blank=True,
        help_text='Spans of a string context to show marked, as {"start", "end", "role", "text"} with '
        'context[start:end] == text (FewCLUE CLUEWSC\'s "span1" and "span2").',
    )
    reading_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        editable=False,
        help_text="Reading-time estimate of the question and context (tasks_app.reading_time), computed when written.",
    )

    class Meta:
        ordering = ["task", "id"]
        constraints = [
            models.UniqueConstraint(fields=["task", "fingerprint"], name="example_unique_content_per_task"),
        ]

    def __str__(self) -> str:
        return f"{self.task.slug}:{self.source_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The estimate follows the text: computed on every save (bulk writes set it themselves).
        self.reading_ms = reading_time.example_reading_ms(self.question, self.context)
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "reading_ms"}
        super().save(*args, **kwargs)

    @property
    def reading_estimate_ms(self) -> int:
        """The stored estimate; computed here only for a row written without it (a bulk write elsewhere)."""
        if self.reading_ms is not None:
            return self.reading_ms
        return reading_time.example_reading_ms(self.question, self.context)

    @property
    def context_text(self) -> str:
        """The context as one string (a sentence pair joined by a newline)."""
        if isinstance(self.context, list):
            return "\n".join(self.context)
        return self.context

    @property
    def is_sentence_pair(self) -> bool:
        return isinstance(self.context, list)


class TrainingSplit(models.Model):
    """One of the release's training splits (1..5) of a task."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="splits")
    number = models.PositiveSmallIntegerField()
    is_nested = models.BooleanField(
        default=False, help_text="Are the shot levels nested (10 within 20 within 30, per question type)?"
    )
    nested_built = models.BooleanField(
        default=False, help_text="Were the 10/20 sets rebuilt as prefixes of the 30-shot file at import?"
    )

    class Meta:
        ordering = ["task", "number"]
        constraints = [
            models.UniqueConstraint(fields=["task", "number"], name="split_unique_per_task"),
            models.CheckConstraint(condition=Q(number__gte=1), name="split_number_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.task.slug} split {self.number}"


class ExampleSet(models.Model):
    """An ordered list of examples: a task's test set, one shot level of a split, or a named set.

    A named set is one of a release's own sets outside the split x shots scheme, kept under the
    release's name (FewCLUE's ``train_0`` .. ``dev_few_all``); a test set may carry a name too.
    """

    class Role(models.TextChoices):
        TEST = "test", "Test set"
        TRAIN = "train", "Training set"
        NAMED = "named", "Named set of the release"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="example_sets")
    role = models.CharField(max_length=10, choices=Role.choices)
    split = models.ForeignKey(TrainingSplit, on_delete=models.CASCADE, null=True, blank=True, related_name="sets")
    shots = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Shots per question type (10/20/30); empty for the test set."
    )
    name = models.CharField(
        max_length=50, blank=True, help_text="The release's name of the set, e.g. dev_0 (FewCLUE); empty for CLUES."
    )
    source_file = models.CharField(max_length=300, blank=True)
    content_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 over the ordered examples.")
    examples: models.ManyToManyField[Example, ExampleSetItem] = models.ManyToManyField(
        Example, through="ExampleSetItem", related_name="in_sets"
    )

    class Meta:
        ordering = ["task", "role", "split__number", "shots"]
        constraints = [
            models.UniqueConstraint(fields=["task"], condition=Q(role="test"), name="one_test_set_per_task"),
            models.UniqueConstraint(fields=["split", "shots"], name="one_set_per_split_and_shots"),
            models.CheckConstraint(
                condition=(Q(role="test", split__isnull=True, shots__isnull=True))
                | Q(role="train", split__isnull=False, shots__isnull=False)
                | (Q(role="named", split__isnull=True, shots__isnull=True) & ~Q(name="")),
                name="example_set_role_matches_split",
            ),
            models.UniqueConstraint(fields=["task", "name"], condition=~Q(name=""), name="one_set_per_task_and_name"),
        ]

    def __str__(self) -> str:
        if self.role == self.Role.TEST:
            return f"{self.task.slug} test"
        if self.role == self.Role.NAMED:
            return f"{self.task.slug} {self.name}"
        assert self.split is not None  # a training set has a split (example_set_role_matches_split)
        return f"{self.task.slug} split {self.split.number} {self.shots}-shot"

    def ordered_examples(self) -> models.QuerySet[Example]:
        return Example.objects.filter(set_items__example_set=self).order_by("set_items__position")


class ExampleSetItem(models.Model):
    example_set = models.ForeignKey(ExampleSet, on_delete=models.CASCADE, related_name="items")
    example = models.ForeignKey(Example, on_delete=models.CASCADE, related_name="set_items")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["example_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["example_set", "position"], name="set_item_unique_position"),
            models.UniqueConstraint(fields=["example_set", "example"], name="set_item_unique_example"),
        ]

    def __str__(self) -> str:
        return f"{self.example_set_id}#{self.position}: example {self.example_id}"
