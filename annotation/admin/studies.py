"""Admin for studies, conditions, workers and participations.

Every change that has rules goes through the services: status changes, the
conditions of a study, the standard CLUES design, blocking a worker and the
training-filter overrides (each with a logged reason).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.options import InlineModelAdmin
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Count, Model, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotation.admin.prolific import ProlificStudyActions
from annotation.admin.widgets import OutcomeCodesWidget, SurveyField
from annotation.models import (
    AttentionCheck,
    AttentionDecision,
    Condition,
    FilterDecision,
    Participation,
    ParticipationEvent,
    Study,
    SurveyResponse,
    Worker,
)
from annotation.protocol.languages import study_language_choices
from annotation.services import (
    attention,
    blocklist,
    closing,
    lifecycle,
    outcomes,
    overrides,
    platforms,
    preview,
    slots,
    studies,
)
from tasks_app.models import ExampleSet, Task

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class _SlotCounts(TypedDict):  # what StudyAdmin.get_queryset annotates
    _filled: int
    _conditions: int


class _ParticipationCount(TypedDict):  # what WorkerAdmin.get_queryset annotates
    _participations: int


SHOT_CHOICES = [(s, f"{s}-shot") for s in studies.STANDARD_SHOTS]


def _error_text(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


def _staff(request: HttpRequest) -> User:
    """The user of an admin page (admin_view lets only logged-in staff through)."""
    assert isinstance(request.user, User)
    return request.user


def _short(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, the whole of it in the tooltip."""
    if len(text) <= limit:
        return text
    return format_html('<span title="{}">{}…</span>', text, text[: limit - 1])


# --- Study -----------------------------------------------------------------------------------


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

# The buttons a study's page offers in each status (studies.change_status has the rules).
STATUS_BUTTONS: dict[str, list[tuple[str, str]]] = {
    Study.Status.DRAFT: [(Study.Status.OPEN, "Open the study")],
    Study.Status.OPEN: [(Study.Status.PAUSED, "Pause (no new workers)"), (Study.Status.CLOSED, "Close")],
    Study.Status.PAUSED: [(Study.Status.OPEN, "Open the study"), (Study.Status.CLOSED, "Close")],
}


class StudyForm(forms.ModelForm):
    condition_shots = forms.TypedMultipleChoiceField(
        label="Conditions",
        choices=SHOT_CHOICES,
        coerce=int,
        initial=list(studies.STANDARD_SHOTS),
        widget=forms.CheckboxSelectMultiple,
        help_text="Each few-shot condition uses the split's training set of that size. Fixed once workers have joined.",
    )

    survey = SurveyField()  # lines, not JSON (annotation.admin.widgets)

    class Meta:
        model = Study
        # Status changes go through the status actions (services.studies.change_status), never this form.
        fields = ["slug", "task", "split_number", *studies.EDITABLE_FIELDS]
        widgets = {"outcome_codes": OutcomeCodesWidget()}
        help_texts = {
            "outcome_codes": "Per outcome, the code the worker gets and an optional return URL; a code left "
            "empty is generated when the study is saved (annotation.services.outcomes)."
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Any shot level a split has (a task imported in the unified format may have others than 10/20/30).
        trained = ExampleSet.objects.filter(role=ExampleSet.Role.TRAIN).values_list("shots", flat=True).distinct()
        levels = set(studies.STANDARD_SHOTS) | {shots for shots in trained if shots is not None}
        shot_field = self.fields["condition_shots"]
        assert isinstance(shot_field, forms.TypedMultipleChoiceField)
        shot_field.choices = [(s, f"{s}-shot") for s in sorted(levels)]
        # Optional on the form (forms posted before these fields existed keep working): empty is the default.
        for name in ("attention_fail_limit", "attention_action"):
            if name in self.fields:
                self.fields[name].required = False
        if self.instance.pk:
            self.fields["condition_shots"].initial = list(self.instance.conditions.values_list("shots", flat=True))
        # Optional in the form: the model's defaults apply (no survey; codes generated on save).
        self.fields["survey_placement"].required = False
        for name in ("outcome_codes", "survey"):
            self.fields[name].required = False
            self.fields[name].widget.attrs.update(rows=6, cols=80)

    def clean_outcome_codes(self) -> dict[str, Any]:
        return self.cleaned_data.get("outcome_codes") or {}

    def clean_survey(self) -> list[Any]:
        return self.cleaned_data.get("survey") or []

    def clean_survey_placement(self) -> str:
        return self.cleaned_data.get("survey_placement") or Study.SurveyPlacement.AFTER_TEST

    def clean_attention_fail_limit(self) -> int:
        value = self.cleaned_data.get("attention_fail_limit")
        return 0 if value is None else value

    def clean_attention_action(self) -> str:
        return self.cleaned_data.get("attention_action") or Study.AttentionAction.REVIEW

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
                )
            studies.validate_design(task=task, split_number=split, shots=shots)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                self.add_error(field if field in self.fields else "condition_shots", errors)
        return cleaned


class ConditionInline(admin.TabularInline):
    model = Condition
    fields = readonly_fields = ("shots", "training_set")
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class AttentionCheckForm(forms.ModelForm):
    """A researcher's check, validated by annotation.services.attention (the span must be in the text, the
    label one of the task's, the position within the test set)."""

    expected_spans = forms.JSONField(
        required=False, initial=list, help_text='Span tasks: the words to select, e.g. ["orange"].'
    )

    class Meta:
        model = AttentionCheck
        fields = ["position", "context", "question", "expected_label", "expected_spans"]
        widgets = {"context": forms.Textarea(attrs={"rows": 2}), "question": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: Any, study: Study | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study  # the inline's study, passed by AttentionCheckFormSet

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        study = self.study
        if study is None or self.errors:
            return cleaned
        try:
            if self.instance.pk and attention.in_use(self.instance) and self.has_changed():
                raise attention.AttentionCheckError("position", "workers already have this check: add a new one")
            attention.validate(
                study=study,
                position=cleaned.get("position"),
                context=cleaned.get("context"),
                question=cleaned.get("question"),
                expected_label=cleaned.get("expected_label") or "",
                expected_spans=cleaned.get("expected_spans") or [],
                exclude_pk=self.instance.pk,
            )
        except attention.AttentionCheckError as exc:
            self.add_error(exc.field if exc.field in self.fields else None, exc.message)
        return cleaned


class AttentionCheckFormSet(forms.BaseInlineFormSet):
    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        return {**super().get_form_kwargs(index), "study": self.instance}


class AttentionCheckInline(admin.TabularInline):
    """Checks written by the researcher; saved through the service (each with its own example)."""

    model = AttentionCheck
    form = AttentionCheckForm
    formset = AttentionCheckFormSet
    fields = ["position", "context", "question", "expected_label", "expected_spans", "source"]
    readonly_fields = ["source"]
    extra = 0


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
    open_now = forms.BooleanField(required=False, label="Open the study right away")
    filter_rule = forms.ChoiceField(choices=Study.FilterRule.choices, initial=Study.FilterRule.NONE, required=False)
    filter_threshold = forms.FloatField(
        initial=0.0,
        required=False,
        help_text="Absolute: the minimum training S1 (0..1). Relative: the largest distance below the group.",
    )
    filter_reference = forms.ChoiceField(
        choices=Study.FilterReference.choices, initial=Study.FilterReference.MEAN, required=False
    )


@admin.register(Study)
class StudyAdmin(ProlificStudyActions, admin.ModelAdmin):
    form = StudyForm
    list_display = ["name", "slug", "task", "split_number", "status", "slots_filled", "created_at"]
    list_filter = ["status", "task"]
    search_fields = ["slug", "name"]
    readonly_fields = ["status", "closes_at", "cohorts", "past_participants", "outcome_table"]
    inlines = [ConditionInline, AttentionCheckInline]
    actions = [
        "open_studies",
        "pause_studies",
        "close_studies",
        "add_template_attention_checks",
        *ProlificStudyActions.prolific_actions,
    ]
    action_form = StudyActionForm
    change_form_template = "admin/annotation/study/change_form.html"
    change_list_template = "admin/annotation/study/change_list.html"
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "name",
                    "slug",
                    "task",
                    "split_number",
                    "condition_shots",
                    "workers_per_condition",
                    "status",
                    "closes_at",
                ]
            },
        ),
        ("Cohorts", {"fields": ["cohorts", "past_participants"], "classes": ["collapse"]}),
        (
            "Protocol",
            {
                "fields": [
                    "language",
                    "test_order",
                    "abandon_after_minutes",
                    "filter_rule",
                    "filter_threshold",
                    "filter_reference",
                    "filter_group_timeout_minutes",
                ],
                "classes": ["collapse"],
            },
        ),
        ("Attention checks", {"fields": ["attention_fail_limit", "attention_action"], "classes": ["collapse"]}),
        (
            "Pay and completion",
            {
                "fields": [
                    "hourly_rate",
                    "currency",
                    *[f for f in ("base_reward",) if f in studies.EDITABLE_FIELDS],
                    "outcome_codes",
                    "outcome_table",
                ],
                "classes": ["collapse"],
            },
        ),
        (
            "What workers see",
            {
                "fields": ["worker_title", "worker_description", "consent_required", "consent_text"],
                "classes": ["collapse"],
            },
        ),
        # Study.translations: a JSON textarea of the documented shape (annotation.services.study_texts).
        ("Texts in other languages", {"fields": ["translations"], "classes": ["collapse"]}),
        ("Survey", {"fields": ["survey", "survey_placement"], "classes": ["collapse"]}),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Study]:
        return (
            super()
            .get_queryset(request)
            .select_related("task")
            .annotate(
                _filled=Count(
                    "participations",
                    filter=slots.holding("participations__") & Q(participations__is_preview=False),
                    distinct=True,
                ),
                _conditions=Count("conditions", distinct=True),
            )
        )

    @admin.display(description="slots filled")
    def slots_filled(self, study: WithAnnotations[Study, _SlotCounts]) -> str:
        total = study._conditions * study.workers_per_condition
        return f"{study._filled} / {total}"

    @admin.display(description="per condition")
    def cohorts(self, study: Study) -> SafeString | str:
        if not study.pk:
            return "-"
        rows = slots.condition_counts([study])[study.pk]
        head = format_html(
            "<tr>{}</tr>",
            format_html_join(
                "",
                "<th>{}</th>",
                (
                    (h,)
                    for h in (
                        "shots",
                        "filled",
                        "free",
                        "claimed",
                        "in training",
                        "in test",
                        "completed",
                        "excluded",
                        "abandoned",
                        "declined",
                    )
                ),
            ),
        )
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    r.shots,
                    r.filled,
                    r.slots,
                    r.free,
                    r.claimed,
                    r.in_training,
                    r.in_test,
                    r.completed,
                    r.excluded,
                    r.abandoned,
                    r.declined,
                )
                for r in rows
            ),
        )
        return format_html('<table class="cohorts">{}{}</table>', head, body)

    @admin.display(description="codes per outcome")
    def outcome_table(self, study: Study) -> SafeString | str:
        if not study.pk:
            return "Generated when the study is saved."
        rows = []
        for outcome in outcomes.Outcome:
            code, _ = outcomes.code_for(study, outcome)
            prolific = outcomes.target_for(study=study, outcome=outcome, platform="prolific", platform_data={}).url
            rows.append((outcome.value, code, prolific))
        return format_html(
            '<table class="outcome-codes"><tr><th>outcome</th><th>code</th><th>Prolific is sent to</th></tr>{}</table>'
            "<p>MTurk workers post the HIT with the code and the outcome; in-house workers are shown the code.</p>",
            format_html_join("", "<tr><td>{}</td><td><code>{}</code></td><td>{}</td></tr>", rows),
        )

    @admin.display(description="past participants of the task")
    def past_participants(self, study: Study) -> SafeString | str:
        if not study.pk:
            return "-"
        links = [
            (reverse("admin:annotation_study_participants", args=[study.task_id, fmt]), label)
            for fmt, label in (("prolific", "Prolific blocklist (.txt)"), ("mturk", "MTurk qualification (.csv)"))
        ]
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    def get_readonly_fields(self, request: HttpRequest, obj: Study | None = None) -> list[str] | tuple[str, ...]:
        return [*self.readonly_fields, "slug", "task"] if obj else self.readonly_fields

    def get_inlines(self, request: HttpRequest, obj: Study | None) -> list[type[InlineModelAdmin[Any, Any]]]:
        return [*self.inlines] if obj else [ConditionInline]  # checks need the study's task and test set

    def save_formset(
        self,
        request: HttpRequest,
        form: forms.ModelForm[Study],
        formset: forms.BaseModelFormSet[Any, Any],
        change: bool,
    ) -> None:
        if formset.model is not AttentionCheck:
            return super().save_formset(request, form, formset, change)
        for sub in formset.deleted_forms:
            if sub.instance.pk:
                attention.delete_check(sub.instance)
        for sub in formset.forms:
            if sub in formset.deleted_forms or not sub.has_changed() or not sub.cleaned_data:
                continue
            data = {k: sub.cleaned_data.get(k) for k in AttentionCheckForm.Meta.fields}
            data["expected_label"] = data["expected_label"] or ""
            data["expected_spans"] = data["expected_spans"] or []
            if sub.instance.pk:
                attention.update_check(sub.instance, **data)
            else:
                attention.create_check(study=form.instance, **data)
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []  # for the log message
        return None

    @admin.action(description="Add template attention checks (one every N test items)")
    def add_template_attention_checks(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        raw = request.POST.get("attention_every", "").strip() or "10"
        if not raw.isdigit() or int(raw) < 1:
            self.message_user(request, f"No checks added: {raw!r} is not a number of items.", messages.ERROR)
            return
        every = int(raw)
        for study in queryset:
            try:
                taken = set(study.attention_checks.values_list("position", flat=True))
                wanted = [p for p in attention.positions_every(study, every) if p not in taken]
                made = attention.generate(study=study, positions=wanted)
            except attention.AttentionCheckError as exc:
                self.message_user(request, f"{study.slug}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"{study.slug}: added {len(made)} attention check(s).", messages.SUCCESS)

    def save_model(self, request: HttpRequest, obj: Study, form: forms.ModelForm[Study], change: bool) -> None:
        if change:  # never write back the status read with the form: actions and the API change it
            fields = [f.name for f in Study._meta.concrete_fields if f.name not in ("id", "status")]
            studies.study_save(study=obj, update_fields=fields)
        else:
            studies.study_save(study=obj)
        studies.set_conditions(study=obj, shots=form.cleaned_data["condition_shots"])

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        study = self.get_object(request, object_id)
        extra_context = extra_context or {}
        if study is not None:
            join_url = request.build_absolute_uri(reverse("entry:join", args=[study.slug]))
            extra_context["entry_links"] = platforms.entry_links(join_url)
            if self.has_change_permission(request, study):
                extra_context["status_buttons"] = STATUS_BUTTONS.get(study.status, [])
                extra_context["status_url"] = reverse("admin:annotation_study_status", args=[study.pk])
                extra_context["default_grace"] = closing.DEFAULT_GRACE_MINUTES
            extra_context["preview_links"] = preview.links(study)
        return super().change_view(request, object_id, form_url, extra_context=extra_context)

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "standard-design/",
                self.admin_site.admin_view(self.standard_design_view),
                name="annotation_study_standard_design",
            ),
            path(
                "<int:pk>/status/",
                self.admin_site.admin_view(self.status_view),
                name="annotation_study_status",
            ),
            path(
                "participants/<int:task_id>/<str:fmt>/",
                self.admin_site.admin_view(self.participants_view),
                name="annotation_study_participants",
            ),
        ]
        return own + super().get_urls()

    def standard_design_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            return HttpResponse(status=403)
        form = StandardDesignForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                study = studies.create_standard_design(
                    task=data["task"],
                    split_number=data["split_number"],
                    slug=data["slug"] or None,
                    workers_per_condition=data["workers_per_condition"],
                    open_now=data["open_now"],
                    filter_rule=data["filter_rule"] or Study.FilterRule.NONE,
                    filter_threshold=data["filter_threshold"] or 0.0,
                    filter_reference=data["filter_reference"] or Study.FilterReference.MEAN,
                    language=data["language"],
                )
            except ValidationError as exc:
                form.add_error(None, _error_text(exc))
            else:
                self.message_user(request, f"Created {study.slug} with conditions 0/10/20/30.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:annotation_study_change", args=[study.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Create the standard CLUES design",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/annotation/study/standard_design.html", context)

    def participants_view(self, request: HttpRequest, task_id: int, fmt: str) -> HttpResponse:
        if not self.has_view_permission(request):
            return HttpResponse(status=403)
        task = get_object_or_404(Task, pk=task_id)
        try:
            content, content_type, filename = blocklist.export_participants(task=task, fmt=fmt)
        except ValidationError as exc:
            return HttpResponse(_error_text(exc), status=400, content_type="text/plain")
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    def status_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The Open / Pause / Close buttons of a study's page: the same service as the list's actions."""
        study = get_object_or_404(Study, pk=pk)
        if request.method != "POST" or not self.has_change_permission(request, study):
            return HttpResponse(status=405 if request.method != "POST" else 403)
        to_status = request.POST.get("to_status", "")
        options = {}
        if to_status == Study.Status.CLOSED:
            try:
                grace = GRACE_FIELD.clean(request.POST.get("grace_minutes", "").strip())
            except ValidationError as exc:
                self.message_user(request, f"Not closed: the grace period: {_error_text(exc)}", messages.ERROR)
                return HttpResponseRedirect(reverse("admin:annotation_study_change", args=[pk]))
            options["grace_minutes"] = closing.DEFAULT_GRACE_MINUTES if grace is None else grace
        if to_status not in Study.Status.values:
            self.message_user(request, f"Unknown status {to_status!r}.", messages.ERROR)
        else:
            self._change_status(request, [study], to_status, **options)
        return HttpResponseRedirect(reverse("admin:annotation_study_change", args=[pk]))

    def _change_status(self, request: HttpRequest, queryset: Iterable[Study], to_status: str, **options: Any) -> None:
        for study in queryset:
            try:
                study = studies.change_status(study=study, to_status=to_status, **options)
            except ValidationError as exc:
                self.message_user(request, f"“{study.name}”: {_error_text(exc)}", messages.ERROR)
            else:
                closes = (
                    f" Workers already in may finish until {closing.format_deadline(study.closes_at)}."
                    if (to_status == Study.Status.CLOSED and study.closes_at)
                    else ""
                )
                self.message_user(request, f"“{study.name}” is now {to_status}.{closes}", messages.SUCCESS)

    @admin.action(description="Open the selected studies")
    def open_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._change_status(request, queryset, Study.Status.OPEN)

    @admin.action(description="Pause the selected studies (no new workers)")
    def pause_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._change_status(request, queryset, Study.Status.PAUSED)

    @admin.action(description="Close the selected studies (final; workers in them get the grace period)")
    def close_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        try:
            grace = GRACE_FIELD.clean(request.POST.get("grace_minutes", "").strip())
        except ValidationError as exc:
            self.message_user(request, f"Not closed: the grace period: {_error_text(exc)}", messages.ERROR)
            return
        if grace is None:
            grace = closing.DEFAULT_GRACE_MINUTES
        self._change_status(request, queryset, Study.Status.CLOSED, grace_minutes=grace)


# --- Worker ----------------------------------------------------------------------------------


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "platform", "blocked", "blocked_reason", "participations_count", "created_at"]
    list_filter = ["platform", "blocked"]
    search_fields = ["external_id"]
    readonly_fields = ["platform", "external_id", "blocked", "blocked_reason", "created_at"]
    actions = ["block_workers", "unblock_workers"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Worker]:
        return super().get_queryset(request).annotate(_participations=Count("participations"))

    @admin.display(description="participations", ordering="_participations")
    def participations_count(self, worker: WithAnnotations[Worker, _ParticipationCount]) -> int:
        return worker._participations

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # workers come in through entry links

    @admin.action(description="Block the selected workers from every study")
    def block_workers(self, request: HttpRequest, queryset: QuerySet[Worker]) -> None:
        for worker in queryset:
            blocklist.block_worker(worker=worker, reason="blocked from the admin", actor=_staff(request))
        self.message_user(request, f"Blocked {queryset.count()} worker(s).", messages.SUCCESS)

    @admin.action(description="Unblock the selected workers")
    def unblock_workers(self, request: HttpRequest, queryset: QuerySet[Worker]) -> None:
        for worker in queryset:
            blocklist.unblock_worker(worker=worker)
        self.message_user(request, f"Unblocked {queryset.count()} worker(s).", messages.SUCCESS)


# --- Participation ---------------------------------------------------------------------------


class _ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class EventInline(_ReadOnlyInline):
    model = ParticipationEvent
    fields = readonly_fields = ("at", "from_state", "to_state", "reason", "actor")


class SurveyResponseInline(_ReadOnlyInline):
    model = SurveyResponse
    fields = readonly_fields = ("placement", "submitted_at", "answers")


class FilterDecisionInline(_ReadOnlyInline):
    model = FilterDecision
    fields = readonly_fields = (
        "at",
        "passed",
        "is_override",
        "training_s1",
        "rule",
        "threshold",
        "pending_group",
        "reference",
        "reference_mean",
        "group_training_s1",
        "reason",
        "decided_by",
        "rule_version",
    )


class AttentionDecisionInline(_ReadOnlyInline):
    model = AttentionDecision
    fields = readonly_fields = (
        "at",
        "decision",
        "checks",
        "passed_count",
        "failed_count",
        "fail_limit",
        "action",
        "reason",
    )


class OverrideForm(forms.Form):
    reason = forms.CharField(
        max_length=400, widget=forms.Textarea(attrs={"rows": 3}), help_text="Logged with the decision."
    )


@admin.register(Participation)
class ParticipationAdmin(admin.ModelAdmin):
    # Compact columns: a Prolific id and a study's name are long, and the list must fit a 1366 px screen
    # beside the filters (the full values are on each participation's page and in the tooltips).
    list_display = ["worker_short", "study_slug", "shots", "slot_index", "state", "last_activity_at"]
    list_filter = ["state", "study", "condition__shots"]
    search_fields = ["worker__external_id", "study__slug"]
    list_select_related = ["worker", "study", "condition"]
    readonly_fields = [
        "study",
        "condition",
        "task",
        "worker",
        "slot_index",
        "state",
        "exclusion_kind",
        "test_seed",
        "completion_code",
        "consented_at",
        "consent_hash",
        "platform_data",
        "created_at",
        "last_activity_at",
        "finished_at",
    ]
    inlines = [EventInline, FilterDecisionInline, AttentionDecisionInline, SurveyResponseInline]
    actions = ["readmit_participations", "exclude_participations"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Participation]:
        return Participation.objects.all()  # staff previews are nobody's participation

    @admin.display(description="shots", ordering="condition__shots")
    def shots(self, participation: Participation) -> int:
        return participation.condition.shots

    @admin.display(description="worker", ordering="worker__external_id")
    def worker_short(self, participation: Participation) -> str:
        return _short(str(participation.worker), 26)

    @admin.display(description="study", ordering="study__slug")
    def study_slug(self, participation: Participation) -> str:
        return _short(participation.study.slug, 24)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False  # the history is the record of who took part

    def _override(self, request: HttpRequest, queryset: QuerySet[Participation], *, admit: bool) -> HttpResponse | None:
        verb = "Readmit" if admit else "Exclude"
        form = OverrideForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            done = 0
            for participation in queryset:
                try:
                    overrides.override(
                        participation, admit=admit, reason=form.cleaned_data["reason"], actor=_staff(request)
                    )
                    done += 1
                except (lifecycle.InvalidTransition, ValueError) as exc:
                    self.message_user(request, f"{participation}: {exc}", messages.ERROR)
            if done:
                self.message_user(request, f"{verb}ed {done} participation(s).", messages.SUCCESS)
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": f"{verb} participations",
            "form": form,
            "queryset": queryset,
            "action": request.POST.get("action"),
            "verb": verb,
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/annotation/participation/override.html", context)

    @admin.action(description="Readmit to the test step (override the training filter)")
    def readmit_participations(self, request: HttpRequest, queryset: QuerySet[Participation]) -> HttpResponse | None:
        return self._override(request, queryset, admit=True)

    @admin.action(description="Exclude (override the training filter)")
    def exclude_participations(self, request: HttpRequest, queryset: QuerySet[Participation]) -> HttpResponse | None:
        return self._override(request, queryset, admit=False)
