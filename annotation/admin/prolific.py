"""Admin for the Prolific operations: the study actions (dry run page, then confirm) and the call log."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from annotation.models import ProlificAction, ProlificCall, ProlificEvent, ProlificGroup, ProlificSubscription, Study
from annotation.services.prolific import operations


class ProlificStudyActions(admin.ModelAdmin):
    """Mixed into StudyAdmin: one action per operation, each opening its dry-run page."""

    prolific_actions = ["prolific_review", "prolific_bonus", "prolific_group"]

    def _prolific_redirect(
        self, request: HttpRequest, queryset: QuerySet[Study], operation: str
    ) -> HttpResponseRedirect | None:
        if queryset.count() != 1:
            self.message_user(request, "Select one study for a Prolific operation.", messages.ERROR)
            return None
        return HttpResponseRedirect(reverse("admin:annotation_study_prolific", args=[queryset.get().pk, operation]))

    @admin.action(description="Prolific: approve submissions (dry run first)")
    def prolific_review(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        return self._prolific_redirect(request, queryset, "review")

    @admin.action(description="Prolific: pay the bonuses (dry run first)")
    def prolific_bonus(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        return self._prolific_redirect(request, queryset, "bonus")

    @admin.action(description="Prolific: add the task's participants to its group (dry run first)")
    def prolific_group(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        return self._prolific_redirect(request, queryset, "group")

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "<int:study_id>/prolific/<str:operation>/",
                self.admin_site.admin_view(self.prolific_view),
                name="annotation_study_prolific",
            )
        ]
        return own + super().get_urls()

    def prolific_view(self, request: HttpRequest, study_id: int, operation: str) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        if operation not in operations.OPERATIONS:
            return HttpResponse("no such Prolific operation", status=404, content_type="text/plain")
        study = get_object_or_404(Study.objects.select_related("task"), pk=study_id)
        enabled = operations.enabled()
        if request.method == "POST" and enabled:
            report = operations.run(operation=operation, study=study)
        else:
            report = operations.plan(operation=operation, study=study)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Prolific {operation}: {study.slug}",
            "opts": Study._meta,
            "study": study,
            "report": report,
            "enabled": enabled,
            "confirm_url": request.path,
        }
        return TemplateResponse(request, "admin/annotation/study/prolific.html", context)


@admin.register(ProlificAction)
class ProlificActionAdmin(admin.ModelAdmin):
    list_display = [
        "participation",
        "kind",
        "action",
        "status",
        "amount",
        "currency",
        "pay_rule_version",
        "prolific_id",
        "updated_at",
    ]
    list_filter = ["kind", "status"]
    search_fields = ["participation__worker__external_id", "prolific_id"]
    readonly_fields = [f.name for f in ProlificAction._meta.fields]
    actions = ["mark_paid", "mark_not_paid"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def _resolve(self, request: HttpRequest, queryset: QuerySet[ProlificAction], *, paid: bool) -> None:
        done = 0
        for action in queryset.filter(kind=ProlificAction.Kind.BONUS, status=ProlificAction.Status.UNCERTAIN):
            operations.resolve_uncertain(action=action, paid=paid, note=f"checked on Prolific by {request.user}")
            done += 1
        self.message_user(request, f"Resolved {done} uncertain bonus(es).", messages.SUCCESS)

    @admin.action(description="Uncertain bonus checked on Prolific: it WAS paid")
    def mark_paid(self, request: HttpRequest, queryset: QuerySet[ProlificAction]) -> None:
        self._resolve(request, queryset, paid=True)

    @admin.action(description="Uncertain bonus checked on Prolific: it was NOT paid (the next run pays it)")
    def mark_not_paid(self, request: HttpRequest, queryset: QuerySet[ProlificAction]) -> None:
        self._resolve(request, queryset, paid=False)


@admin.register(ProlificCall)
class ProlificCallAdmin(admin.ModelAdmin):
    list_display = ["at", "method", "path", "status_code", "ok", "seconds", "action"]
    list_filter = ["ok", "method"]
    search_fields = ["path", "response", "error"]
    readonly_fields = [f.name for f in ProlificCall._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(ProlificGroup)
class ProlificGroupAdmin(admin.ModelAdmin):
    list_display = ["task", "name", "group_id", "created_at"]
    readonly_fields = ["task", "name", "group_id", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(ProlificEvent)
class ProlificEventAdmin(_ReadOnly):
    """Every status change heard from Prolific (webhook or polling) and what was done with it."""

    list_display = ["received_at", "source", "event_type", "resource_id", "participant_id", "status", "outcome"]
    list_filter = ["source", "event_type", "status"]
    search_fields = ["event_id", "resource_id", "participant_id", "outcome"]
    readonly_fields = [f.name for f in ProlificEvent._meta.fields]


@admin.register(ProlificSubscription)
class ProlificSubscriptionAdmin(_ReadOnly):
    """The webhook subscriptions `manage.py prolific subscribe` made (the secret is shown nowhere)."""

    list_display = ["event_type", "target_url", "workspace_id", "subscription_id", "confirmed", "updated_at"]
    readonly_fields = [f.name for f in ProlificSubscription._meta.fields]
