"""Admin for workers and participations: blocking a worker, and the training filter's overrides.

Each change goes through the services (annotation.services.admission.blocklist and
annotation.services.verdicts.overrides), with a logged reason; a participation's
history (events, filter and attention decisions, survey answers) is read-only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth.models import User
from django.db.models import Count, Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html

from annotation.models import (
    AttentionDecision,
    FilterDecision,
    IntegrityDecision,
    Participation,
    ParticipationEvent,
    SurveyResponse,
    Worker,
)
from annotation.services.admission import blocklist
from annotation.services.rights import withdrawal
from annotation.services.roles.operations import Operation, may
from annotation.services.state import lifecycle
from annotation.services.verdicts import overrides

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class _ParticipationCount(TypedDict):  # what WorkerAdmin.get_queryset annotates
    _participations: int


def _staff(request: HttpRequest) -> User:
    """The user of an admin page (admin_view lets only logged-in staff through)."""
    assert isinstance(request.user, User)
    return request.user


def _short(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, the whole of it in the tooltip."""
    if len(text) <= limit:
        return text
    return format_html('<span title="{}">{}…</span>', text, text[: limit - 1])


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

    def has_block_permission(self, request: HttpRequest) -> bool:
        """The hook of both actions (``permissions=["block"]``): an exclusion from every study is the PI's."""
        return may(request.user, Operation.BLOCK)

    @admin.action(description="Block the selected workers from every study", permissions=["block"])
    def block_workers(self, request: HttpRequest, queryset: QuerySet[Worker]) -> None:
        for worker in queryset:
            blocklist.block_worker(worker=worker, reason="blocked from the admin", actor=_staff(request))
        self.message_user(request, f"Blocked {queryset.count()} worker(s).", messages.SUCCESS)

    @admin.action(description="Unblock the selected workers", permissions=["block"])
    def unblock_workers(self, request: HttpRequest, queryset: QuerySet[Worker]) -> None:
        for worker in queryset:
            blocklist.unblock_worker(worker=worker, actor=_staff(request))
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


class IntegrityDecisionInline(_ReadOnlyInline):
    model = IntegrityDecision
    fields = readonly_fields = (
        "at",
        "decision",
        "items",
        "copied_items",
        "fast_items",
        "hidden_items",
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
    inlines = [
        EventInline,
        FilterDecisionInline,
        AttentionDecisionInline,
        IntegrityDecisionInline,
        SurveyResponseInline,
    ]
    actions = ["readmit_participations", "exclude_participations", "withdraw_participants"]

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
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/annotation/participation/override.html", context)

    # The actions' hooks (``permissions=[...]``): the list offers each only to a role that may (the PI's).
    def has_readmit_permission(self, request: HttpRequest) -> bool:
        return may(request.user, Operation.READMIT)

    def has_exclude_permission(self, request: HttpRequest) -> bool:
        return may(request.user, Operation.EXCLUDE)

    def has_withdraw_permission(self, request: HttpRequest) -> bool:
        return may(request.user, Operation.WITHDRAW)

    @admin.action(description="Readmit to the test step (override the training filter)", permissions=["readmit"])
    def readmit_participations(self, request: HttpRequest, queryset: QuerySet[Participation]) -> HttpResponse | None:
        return self._override(request, queryset, admit=True)

    @admin.action(description="Exclude (override the training filter)", permissions=["exclude"])
    def exclude_participations(self, request: HttpRequest, queryset: QuerySet[Participation]) -> HttpResponse | None:
        return self._override(request, queryset, admit=False)

    @admin.action(
        description="Withdraw the participant (erase their answers, pseudonymise their id)", permissions=["withdraw"]
    )
    def withdraw_participants(self, request: HttpRequest, queryset: QuerySet[Participation]) -> HttpResponse | None:
        """The withdrawal of annotation.services.rights, after a page that shows its dry run."""
        workers = {(p.worker.platform, p.worker.external_id) for p in queryset.select_related("worker")}
        if "apply" in request.POST:
            for platform, external_id in sorted(workers):
                try:
                    done = withdrawal.withdraw(
                        platform=platform,
                        external_id=external_id,
                        run_by=_staff(request).username,
                        actor=_staff(request),
                    )
                    groups = "".join(f" {note}." for note in done.group_notes)
                    self.message_user(
                        request, f"Withdrawn: answers erased, identifier pseudonymised.{groups}", messages.SUCCESS
                    )
                except withdrawal.WithdrawalError as exc:
                    self.message_user(request, f"Nothing changed: {exc}", messages.ERROR)
            return None
        plans, refused = [], []
        for platform, external_id in sorted(workers):
            try:
                # The dry run the page shows is in the audit trail too.
                plans.append(
                    withdrawal.plan_only(
                        platform=platform,
                        external_id=external_id,
                        run_by=_staff(request).username,
                        actor=_staff(request),
                    )
                )
            except withdrawal.WithdrawalError as exc:
                refused.append(str(exc))
        context = {
            **self.admin_site.each_context(request),
            "title": "Withdraw participants",
            "plans": plans,
            "refused": refused,
            "queryset": queryset,
            "action": request.POST.get("action"),
            "opts": self.model._meta,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/annotation/participation/withdraw.html", context)
