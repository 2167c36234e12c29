"""The study admin's forms: the study itself, its attention checks, the standard design, the action bar.

Each checks what the services would refuse (annotation.services.studies.studies and
annotation.services.verdicts.attention) so that the page shows the reason beside the field.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError

from annotation.admin.widgets import ComprehensionField, OutcomeCodesWidget, SurveyField, TranslationsField
from annotation.models import AttentionCheck, Study
from annotation.protocol.languages import study_language_choices
from annotation.services.admission import closing
from annotation.services.studies import studies
from annotation.services.verdicts import attention
from tasks_app.models import ExampleSet, Task

SHOT_CHOICES = [(s, f"{s}-shot") for s in studies.STANDARD_SHOTS]


class StudyActionForm(ActionForm):
    """The changelist's action bar, with the grace period the close action gives workers already in.

    Text here, checked by the close action: an invalid number in an action form would only make the admin
    say "No action selected".
    """

    grace_minutes = forms.CharField(
        required=False,
        label="Grace (minutes, when closing):",
        widget=forms.NumberInput(
            attrs={
                "min": 0,
                "max": closing.MAX_GRACE_MINUTES,
                "placeholder": str(closing.DEFAULT_GRACE_MINUTES),
                "style": "width: 5em",
            }
        ),
    )

    attention_every = forms.CharField(
        required=False,
        label="Attention check every (items):",
        widget=forms.NumberInput(attrs={"min": 1, "placeholder": "10", "style": "width: 5em"}),
    )


GRACE_FIELD = forms.IntegerField(required=False, min_value=0, max_value=closing.MAX_GRACE_MINUTES)


class StudyForm(forms.ModelForm):
    # Lines and fields, not JSON (annotation.admin.widgets).
    survey = SurveyField()
    comprehension = ComprehensionField(label="Comprehension check")
    translations = TranslationsField(label="Texts in other languages")

    condition_shots = forms.TypedMultipleChoiceField(
        label="Conditions",
        choices=SHOT_CHOICES,
        coerce=int,
        initial=list(studies.STANDARD_SHOTS),
        widget=forms.CheckboxSelectMultiple,
        help_text="Each few-shot condition uses the split's training set of that size. Fixed once workers have joined.",
    )

    class Meta:
        model = Study
        # Status changes go through the status actions (services.studies.studies.change_status), never this form.
        fields = ["slug", "task", "split_number", *studies.EDITABLE_FIELDS]
        widgets = {"outcome_codes": OutcomeCodesWidget()}
        help_texts = {
            "outcome_codes": "Per outcome, the code the worker gets and an optional return URL; a code left "
            "empty is generated when the study is saved (annotation.services.state.outcomes)."
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "survey_placement" not in self.fields:  # a role that may only view: the model's fields are read-only
            return
        # Any shot level a split has (a task imported in the unified format may have others than 10/20/30).
        trained = ExampleSet.objects.filter(role=ExampleSet.Role.TRAIN).values_list("shots", flat=True).distinct()
        levels = set(studies.STANDARD_SHOTS) | {shots for shots in trained if shots is not None}
        shot_field = self.fields["condition_shots"]
        assert isinstance(shot_field, forms.TypedMultipleChoiceField)
        shot_field.choices = [(s, f"{s}-shot") for s in sorted(levels)]
        # Optional on the form (forms posted before these fields existed keep working): empty is the default.
        for name in ("attention_fail_limit", "attention_action", "integrity_hidden_seconds", "integrity_action"):
            if name in self.fields:
                self.fields[name].required = False
        if self.instance.pk:
            self.fields["condition_shots"].initial = list(self.instance.conditions.values_list("shots", flat=True))
        # Optional in the form: the model's defaults apply (no survey; codes generated on save).
        self.fields["survey_placement"].required = False
        for name in ("outcome_codes", "survey", "comprehension"):
            self.fields[name].required = False
            self.fields[name].widget.attrs.update(rows=6, cols=80)

    def clean_outcome_codes(self) -> dict[str, Any]:
        return self.cleaned_data.get("outcome_codes") or {}

    def clean_survey(self) -> list[Any]:
        return self.cleaned_data.get("survey") or []

    def clean_comprehension(self) -> list[Any]:
        return self.cleaned_data.get("comprehension") or []

    def clean_translations(self) -> dict[str, Any]:
        return self.cleaned_data.get("translations") or {}

    def clean_survey_placement(self) -> str:
        return self.cleaned_data.get("survey_placement") or Study.SurveyPlacement.AFTER_TEST

    def clean_attention_fail_limit(self) -> int:
        value = self.cleaned_data.get("attention_fail_limit")
        return 0 if value is None else value

    def clean_attention_action(self) -> str:
        return self.cleaned_data.get("attention_action") or Study.AttentionAction.REVIEW

    def clean_integrity_hidden_seconds(self) -> int:
        value = self.cleaned_data.get("integrity_hidden_seconds")
        return 30 if value is None else value

    def clean_integrity_action(self) -> str:
        return self.cleaned_data.get("integrity_action") or Study.AttentionAction.REVIEW

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        task = self.instance.task if self.instance.pk else cleaned.get("task")
        split, shots = cleaned.get("split_number"), cleaned.get("condition_shots")
        if task is None or split is None or shots is None:
            return cleaned
        try:
            if self.instance.pk:
                studies.validate_change(
                    study=self.instance,
                    split_number=split,
                    shots=shots,
                    workers_per_condition=cleaned.get("workers_per_condition"),
                    test_order=cleaned.get("test_order"),
                    pilot_workers_per_condition=cleaned.get("pilot_workers_per_condition"),
                )
            studies.validate_design(task=task, split_number=split, shots=shots)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                self.add_error(field if field in self.fields else "condition_shots", errors)
        return cleaned


class SpanWordsField(forms.Field):
    """The words a span check asks for, one per line (stored as the JSON list the model keeps)."""

    widget = forms.Textarea(attrs={"rows": 2, "cols": 30})

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, list):
            return "\n".join(str(word) for word in value)
        return "" if value is None else str(value)

    def to_python(self, value: Any) -> list[str]:
        text = value if isinstance(value, str) else ""
        return [line.strip() for line in text.splitlines() if line.strip()]


class AttentionCheckForm(forms.ModelForm):
    """A researcher's check, validated by annotation.services.verdicts.attention (the span must be in the text, the
    label one of the task's, the position within the test set). Plain fields, no JSON: the label is chosen from
    the task's, the words to select are lines."""

    expected_label = forms.ChoiceField(required=False, choices=[("", "---------")], label="Expected label")
    expected_spans = SpanWordsField(
        required=False, label="Words to select", help_text="Span tasks: one word (or phrase) of the text per line."
    )

    class Meta:
        model = AttentionCheck
        fields = ["position", "context", "question", "expected_label", "expected_spans"]
        widgets = {
            "context": forms.Textarea(attrs={"rows": 2, "cols": 60}),
            "question": forms.Textarea(attrs={"rows": 2, "cols": 60}),
        }

    def __init__(self, *args: Any, study: Study | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study  # the inline's study, passed by AttentionCheckFormSet
        label_field = self.fields["expected_label"]
        assert isinstance(label_field, forms.ChoiceField)
        if study is not None and study.task_id:
            names = study.task.labels.order_by("position", "name").values_list("name", flat=True)
            label_field.choices = [("", "---------"), *((name, name) for name in names)]
            if not study.task.is_classification:
                label_field.help_text = "Span tasks: leave empty and give the words to select."

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        study = self.study
        if study is None or self.errors:
            return cleaned
        try:
            if self.instance.pk and attention.definitions.in_use(self.instance) and self.has_changed():
                raise attention.definitions.AttentionCheckError(
                    "position", "workers already have this check: add a new one"
                )
            attention.definitions.validate(
                study=study,
                position=cleaned.get("position"),
                context=cleaned.get("context"),
                question=cleaned.get("question"),
                expected_label=cleaned.get("expected_label") or "",
                expected_spans=cleaned.get("expected_spans") or [],
                exclude_pk=self.instance.pk,
            )
        except attention.definitions.AttentionCheckError as exc:
            self.add_error(exc.field if exc.field in self.fields else None, exc.message)
        return cleaned


class AttentionCheckFormSet(forms.BaseInlineFormSet):
    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        return {**super().get_form_kwargs(index), "study": self.instance}


class StandardDesignForm(forms.Form):
    task = forms.ModelChoiceField(queryset=Task.objects.all())
    split_number = forms.TypedChoiceField(choices=[(n, n) for n in range(1, 6)], coerce=int, initial=1)
    workers_per_condition = forms.IntegerField(min_value=1, initial=studies.STANDARD_WORKERS)
    slug = forms.SlugField(required=False, help_text="Default: <task>-split<N>.")
    language = forms.ChoiceField(
        choices=study_language_choices,
        required=False,
        initial="",
        help_text="The language of the worker pages (empty: the worker's browser language).",
    )
    open_now = forms.BooleanField(
        required=False,
        label="Open the study right away",
        help_text="Only if its launch check names no blocker (a new study has no posted reward yet).",
    )
    filter_rule = forms.ChoiceField(choices=Study.FilterRule.choices, initial=Study.FilterRule.NONE, required=False)
    filter_threshold = forms.FloatField(
        initial=0.0,
        required=False,
        help_text="Absolute: the minimum training S1 (0..1). Relative: the largest distance below the group.",
    )
    filter_reference = forms.ChoiceField(
        choices=Study.FilterReference.choices, initial=Study.FilterReference.MEAN, required=False
    )
