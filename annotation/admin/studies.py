"""Admin for studies: the study's page, its conditions and attention checks, and its list.

Every change that has rules goes through the services: the conditions of a
study and its attention checks here; the status changes and the standard
CLUES design in annotation.admin.study_views, the forms in annotation.admin.study_forms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import InlineModelAdmin
from django.db.models import Count, Model, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotation.admin.prolific import ProlificStudyActions
from annotation.admin.study_forms import AttentionCheckForm, AttentionCheckFormSet, StudyActionForm, StudyForm
from annotation.admin.study_views import StudyPages
from annotation.models import AnalysisPlan, AttentionCheck, Condition, Study
from annotation.services.roles.operations import Operation, may
from annotation.services.state import outcomes, slots
from annotation.services.studies import studies
from annotation.services.verdicts import attention

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class _SlotCounts(TypedDict):  # what StudyAdmin.get_queryset annotates
    _filled: int
    _conditions: int


class ConditionInline(admin.TabularInline):
    model = Condition
    fields = readonly_fields = ("shots", "training_set", "sample_seed", "test_sample")
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class AttentionCheckInline(admin.StackedInline):
    """Checks written by the researcher; saved through the service (each with its own example). Stacked: a
    table of two text boxes and a list per row was wider than a laptop's screen."""

    model = AttentionCheck
    form = AttentionCheckForm
    formset = AttentionCheckFormSet
    fields = ["position", "context", "question", "expected_label", "expected_spans", "source"]
    readonly_fields = ["source"]
    extra = 0


@admin.register(Study)
class StudyAdmin(StudyPages, ProlificStudyActions, admin.ModelAdmin):
    form = StudyForm
    list_display = ["name", "slug", "task", "split_number", "status", "slots_filled", "created_at"]
    list_filter = ["status", "task"]
    search_fields = ["slug", "name"]
    readonly_fields = [
        "status",
        "closes_at",
        "pilot_opened_at",
        "rest_opened_at",
        "protocol",
        "test_sample_size",
        "cohorts",
        "past_participants",
        "outcome_table",
        "frozen_plan",
    ]
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
                    "pilot_workers_per_condition",
                    "status",
                    "closes_at",
                    "pilot_opened_at",
                    "rest_opened_at",
                ]
            },
        ),
        ("Cohorts", {"fields": ["cohorts", "past_participants"], "classes": ["collapse"]}),
        (
            "Protocol",
            {
                "fields": [
                    "protocol",
                    "test_sample_size",
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
            "Integrity rule",
            {
                "fields": [
                    "integrity_max_copies",
                    "integrity_max_fast_share",
                    "integrity_max_hidden_share",
                    "integrity_hidden_seconds",
                    "integrity_action",
                ],
                "classes": ["collapse"],
            },
        ),
        (
            "Pay and completion",
            {
                "fields": [
                    "hourly_rate",
                    "currency",
                    "platform_minimum_hourly",
                    "platform_recommended_hourly",
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
                "fields": ["worker_title", "worker_description", "ai_instruction", "consent_required", "consent_text"],
                "classes": ["collapse"],
            },
        ),
        # Study.translations: fields per language (annotation.admin.widgets.TranslationsWidget).
        ("Texts in other languages", {"fields": ["translations"], "classes": ["collapse"]}),
        ("Survey", {"fields": ["survey", "survey_placement"], "classes": ["collapse"]}),
        ("Ethics review", {"fields": ["ethics_review", "ethics_board", "ethics_reference"], "classes": ["collapse"]}),
        ("Pre-registration", {"fields": ["preregistration", "frozen_plan"], "classes": ["collapse"]}),
        ("Human-baselines checklist: the authors' answers", {"fields": ["checklist_answers"], "classes": ["collapse"]}),
        ("Data release", {"fields": ["data_licence"], "classes": ["collapse"]}),
        ("Comprehension check", {"fields": ["comprehension"], "classes": ["collapse"]}),
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

    @admin.display(description="analysis plan")
    def frozen_plan(self, study: Study) -> str:
        """The plan frozen at the full launch (annotation.reporting.analysis_plan): read only, as the database
        keeps it."""
        plan = AnalysisPlan.objects.filter(study=study).first() if study.pk else None
        if plan is None:
            return "Frozen (hashed) when the study opens for its full launch."
        return f"Frozen {plan.frozen_at:%Y-%m-%d %H:%M} UTC, SHA-256 {plan.sha256}"

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

    def get_fieldsets(self, request: HttpRequest, obj: Model | None = None) -> Any:
        """The past participants' files list identifiers: their links only for a role their view lets in."""
        fieldsets = super().get_fieldsets(request, obj)
        if may(request.user, Operation.EXPORT_IDENTIFIERS):
            return fieldsets
        return [
            (name, {**options, "fields": [f for f in options["fields"] if f != "past_participants"]})
            for name, options in fieldsets
        ]

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
                attention.definitions.delete_check(sub.instance, actor=request.user)
        for sub in formset.forms:
            if sub in formset.deleted_forms or not sub.has_changed() or not sub.cleaned_data:
                continue
            data = {k: sub.cleaned_data.get(k) for k in AttentionCheckForm.Meta.fields}
            data["expected_label"] = data["expected_label"] or ""
            data["expected_spans"] = data["expected_spans"] or []
            if sub.instance.pk:
                attention.definitions.update_check(sub.instance, actor=request.user, **data)
            else:
                attention.definitions.create_check(study=form.instance, actor=request.user, **data)
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []  # for the log message
        return None

    @admin.action(description="Add template attention checks (one every N test items)", permissions=["change"])
    def add_template_attention_checks(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        raw = request.POST.get("attention_every", "").strip() or "10"
        if not raw.isdigit() or int(raw) < 1:
            self.message_user(request, f"No checks added: {raw!r} is not a number of items.", messages.ERROR)
            return
        every = int(raw)
        for study in queryset:
            try:
                taken = set(study.attention_checks.values_list("position", flat=True))
                wanted = [p for p in attention.definitions.positions_every(study, every) if p not in taken]
                made = attention.definitions.generate(study=study, positions=wanted, actor=request.user)
            except attention.definitions.AttentionCheckError as exc:
                self.message_user(request, f"“{study.name}”: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"“{study.name}”: added {len(made)} attention check(s).", messages.SUCCESS)

    def save_model(self, request: HttpRequest, obj: Study, form: forms.ModelForm[Study], change: bool) -> None:
        if change:  # never write back the status (nor the pilot's dates) read with the form: status changes set them
            kept = ("id", "status", "pilot_opened_at", "rest_opened_at")
            fields = [f.name for f in Study._meta.concrete_fields if f.name not in kept]
            studies.study_save(study=obj, update_fields=fields, actor=request.user)
        else:
            studies.study_save(study=obj, actor=request.user)
        studies.set_conditions(study=obj, shots=form.cleaned_data["condition_shots"], actor=request.user)
