"""Admin for the Prolific operations: the study actions (dry run page, then confirm, which queues the run as a
Celery job and shows its progress) and the logs."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from annotation.models import (
    ProlificAction,
    ProlificCall,
    ProlificEvent,
    ProlificGroup,
    ProlificJob,
    ProlificMessage,
    ProlificSubscription,
    Study,
)
from annotation.services.prolific import jobs, operations
from annotation.services.prolific import messages as prolific_messages
from annotation.services.prolific.message_templates import TEMPLATES
from annotation.services.roles.operations import Operation, may, prolific_operation
from annotation.web.roles import denied


class MessageForm(forms.Form):
    kind = forms.ChoiceField(choices=ProlificMessage.Kind.choices)
    to = forms.CharField(required=False, max_length=128, help_text="To one participant: their Prolific id.")
    template = forms.ChoiceField(
        choices=[("", "none: write the text"), *[(t, t) for t in sorted(TEMPLATES)]], required=False
    )
    language = forms.CharField(
        required=False, max_length=10, help_text="The template's language (default: the study's)."
    )
    subject = forms.CharField(required=False, max_length=200, help_text="A broadcast's subject (or the template's).")
    text = forms.CharField(required=False, widget=forms.Textarea, help_text="The text (or the template's).")
    again = forms.CharField(required=False, max_length=50, help_text="Any word, to send a message sent before again.")


class ProlificStudyActions(admin.ModelAdmin):
    """Mixed into StudyAdmin: one action per operation, each opening its dry-run page."""

    prolific_actions = ["prolific_review", "prolific_bonus", "prolific_group", "prolific_places", "prolific_message"]

    def get_fieldsets(self, request: HttpRequest, obj: Model | None = None) -> Any:
        # The study's Prolific setting, in a section of its own after the study admin's own sections.
        fieldsets = list(super().get_fieldsets(request, obj))
        if any("prolific_sync_places" in (opts.get("fields") or []) for _, opts in fieldsets):
            return fieldsets
        return [*fieldsets, ("Prolific", {"fields": ["prolific_sync_places"]})]

    def _prolific_redirect(
        self, request: HttpRequest, queryset: QuerySet[Study], operation: str
    ) -> HttpResponseRedirect | None:
        if queryset.count() != 1:
            self.message_user(request, "Select one study for a Prolific operation.", messages.ERROR)
            return None
        return HttpResponseRedirect(reverse("admin:annotation_study_prolific", args=[queryset.get().pk, operation]))

    def has_pay_permission(self, request: HttpRequest) -> bool:
        """The hook of the paying actions (``permissions=["pay"]``): approving and bonuses are the PI's."""
        return may(request.user, Operation.PROLIFIC_BONUS)

    def has_recruit_permission(self, request: HttpRequest) -> bool:
        """The hook of the group and places actions (``permissions=["recruit"]``)."""
        return may(request.user, Operation.PROLIFIC_PLACES)

    @admin.action(description="Prolific: approve submissions (dry run first)", permissions=["pay"])
    def prolific_review(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        return self._prolific_redirect(request, queryset, "review")

    @admin.action(description="Prolific: pay the bonuses (dry run first)", permissions=["pay"])
    def prolific_bonus(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        return self._prolific_redirect(request, queryset, "bonus")

    @admin.action(
        description="Prolific: add the task's participants to its group (dry run first)", permissions=["recruit"]
    )
    def prolific_group(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        return self._prolific_redirect(request, queryset, "group")

    @admin.action(
        description="Prolific: places follow the design, pause when full (dry run first)", permissions=["recruit"]
    )
    def prolific_places(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        return self._prolific_redirect(request, queryset, "places")

    def has_message_permission(self, request: HttpRequest) -> bool:
        return may(request.user, Operation.MESSAGE)

    @admin.action(description="Prolific: message the participants (dry run first)", permissions=["message"])
    def prolific_message(self, request: HttpRequest, queryset: QuerySet[Study]) -> HttpResponseRedirect | None:
        if queryset.count() != 1:
            self.message_user(request, "Select one study to message its participants.", messages.ERROR)
            return None
        return HttpResponseRedirect(reverse("admin:annotation_study_prolific_message", args=[queryset.get().pk]))

    def prolific_message_view(self, request: HttpRequest, study_id: int) -> HttpResponse:
        """The message's form; "Show the dry run" plans it, "Send" (from the dry run's page) sends it."""
        if refused := denied(request, Operation.MESSAGE):  # the dry run too: it lists participants
            return refused
        study = get_object_or_404(Study, pk=study_id)
        form = MessageForm(request.POST or None)
        items: list[prolific_messages.Outgoing] = []
        error = ""
        if request.method == "POST" and form.is_valid():
            what = {
                "study": study,
                "kind": form.cleaned_data["kind"],
                "text": form.cleaned_data["text"],
                "subject": form.cleaned_data["subject"],
                "template": form.cleaned_data["template"] or None,
                "language": form.cleaned_data["language"] or None,
                "participant": form.cleaned_data["to"] or None,
                "again": form.cleaned_data["again"],
            }
            try:
                if "send" in request.POST:
                    items = prolific_messages.send(**what, sent_by=request.user.get_username(), actor=request.user)
                    self.message_user(request, "Sent (see each message's state below).", messages.SUCCESS)
                else:
                    items = prolific_messages.plan(**what, actor=request.user)
            except (prolific_messages.MessageError, operations.ProlificDisabled) as exc:
                error = f"{exc} Nothing was sent."
        context = {
            **self.admin_site.each_context(request),
            "title": f"Message the participants: {study.slug}",
            "opts": Study._meta,
            "study": study,
            "form": form,
            "items": items,
            "error": error,
            "enabled": operations.enabled(),
            "sent": "send" in request.POST,
        }
        return TemplateResponse(request, "admin/annotation/study/prolific_message.html", context)

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "<int:study_id>/prolific-message/",
                self.admin_site.admin_view(self.prolific_message_view),
                name="annotation_study_prolific_message",
            ),
            path(
                "<int:study_id>/prolific/<str:operation>/",
                self.admin_site.admin_view(self.prolific_view),
                name="annotation_study_prolific",
            ),
            path(
                "<int:study_id>/prolific-runs/<int:job_id>/",
                self.admin_site.admin_view(self.prolific_job_view),
                name="annotation_study_prolific_job",
            ),
        ]
        return own + super().get_urls()

    def prolific_view(self, request: HttpRequest, study_id: int, operation: str) -> HttpResponse:
        if operation not in operations.OPERATIONS:
            return HttpResponse("no such Prolific operation", status=404, content_type="text/plain")
        if refused := denied(request, prolific_operation(operation)):  # the dry run too: it lists participants
            return refused
        study = get_object_or_404(Study.objects.select_related("task"), pk=study_id)
        enabled = operations.enabled()
        if request.method == "POST" and enabled:
            try:
                job = jobs.prolific_job_create(study=study, operation=operation, user=request.user)
            except jobs.ProlificJobBusy as exc:
                self.message_user(request, str(exc), messages.ERROR)
            else:
                return HttpResponseRedirect(reverse("admin:annotation_study_prolific_job", args=[study.pk, job.pk]))
        report = operations.plan(operation=operation, study=study, actor=request.user)
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

    def prolific_job_view(self, request: HttpRequest, study_id: int, job_id: int) -> HttpResponse:
        job = get_object_or_404(ProlificJob.objects.select_related("study"), pk=job_id, study_id=study_id)
        if refused := denied(request, prolific_operation(job.operation)):
            return refused
        context = {
            **self.admin_site.each_context(request),
            "title": f"Prolific {job.operation}: {job.study.slug}",
            "opts": Study._meta,
            "study": job.study,
            "job": job,
            "status": jobs.job_status(job),
        }
        return TemplateResponse(request, "admin/annotation/study/prolific_job.html", context)


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

    def has_pay_permission(self, request: HttpRequest) -> bool:
        return may(request.user, Operation.MARK_PAYMENT)

    def _resolve(self, request: HttpRequest, queryset: QuerySet[ProlificAction], *, paid: bool) -> None:
        done = 0
        for action in queryset.filter(kind=ProlificAction.Kind.BONUS, status=ProlificAction.Status.UNCERTAIN):
            operations.resolve_uncertain(
                action=action, paid=paid, note=f"checked on Prolific by {request.user}", actor=request.user
            )
            done += 1
        self.message_user(request, f"Resolved {done} uncertain bonus(es).", messages.SUCCESS)

    @admin.action(description="Uncertain bonus checked on Prolific: it WAS paid", permissions=["pay"])
    def mark_paid(self, request: HttpRequest, queryset: QuerySet[ProlificAction]) -> None:
        self._resolve(request, queryset, paid=True)

    @admin.action(
        description="Uncertain bonus checked on Prolific: it was NOT paid (the next run pays it)", permissions=["pay"]
    )
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


@admin.register(ProlificMessage)
class ProlificMessageAdmin(_ReadOnly):
    """Every message sent to participants (manage.py prolific message), with who sent it and to whom."""

    list_display = ["created_at", "study", "kind", "prolific_study", "recipient_count", "status", "sent_by"]
    list_filter = ["kind", "status"]
    search_fields = ["key", "subject", "body"]
    readonly_fields = [f.name for f in ProlificMessage._meta.fields]


@admin.register(ProlificJob)
class ProlificJobAdmin(_ReadOnly):
    """The runs started from the dashboard or the admin, done by a Celery worker."""

    list_display = ["created_at", "study", "operation", "status", "progress", "finished_at", "created_by"]
    list_filter = ["operation", "status"]
    readonly_fields = [f.name for f in ProlificJob._meta.fields]


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
