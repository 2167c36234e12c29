"""The study admin's own pages and its status changes.

The standard design form, the past participants' files (a blocklist for each
platform), the Open / Pause / Close buttons of a study's page and the list's
actions that do the same, all through annotation.services.studies.studies; and the
links and buttons the study's page shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from annotation.admin.study_forms import GRACE_FIELD, StandardDesignForm
from annotation.models import Study
from annotation.services.admission import blocklist, closing
from annotation.services.roles.operations import Operation, may
from annotation.services.state import platforms
from annotation.services.studies import launch, preview, studies
from annotation.web.roles import denied, refusal, team_context
from tasks_app.models import Task


def _error_text(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


# The buttons a study's page offers in each status (studies.change_status has the rules).
STATUS_BUTTONS: dict[str, list[tuple[str, str]]] = {
    Study.Status.DRAFT: [(Study.Status.OPEN, "Open the study")],
    Study.Status.OPEN: [(Study.Status.PAUSED, "Pause (no new workers)"), (Study.Status.CLOSED, "Close")],
    Study.Status.PAUSED: [(Study.Status.OPEN, "Open the study"), (Study.Status.CLOSED, "Close")],
}
# The pilot launch's two buttons: their values are not statuses; status_view maps them to the launch service.
OPEN_PILOT, OPEN_REST = "open-pilot", "open-rest"


def status_buttons(study: Study) -> list[tuple[str, str]]:
    """STATUS_BUTTONS, with "Open as pilot" on a draft with a pilot share and "Open the rest" during a pilot."""
    buttons = list(STATUS_BUTTONS.get(study.status, []))
    if study.status == Study.Status.DRAFT and study.pilot_workers_per_condition:
        buttons.insert(0, (OPEN_PILOT, f"Open as pilot ({study.pilot_workers_per_condition} per condition)"))
    if study.in_pilot and study.status != Study.Status.CLOSED:
        buttons = [b for b in buttons if b[0] != Study.Status.OPEN]  # reopening a paused pilot: the rest's button
        buttons.insert(0, (OPEN_REST, f"Open the rest ({study.workers_per_condition} per condition)"))
    return buttons


class StudyPages(admin.ModelAdmin):
    """StudyAdmin's pages beyond the model's own, and the status changes they share with its actions."""

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        study = self.get_object(request, object_id)
        extra_context = extra_context or {}
        if study is not None:
            join_url = request.build_absolute_uri(reverse("entry:join", args=[study.slug]))
            extra_context["entry_links"] = platforms.entry_links(join_url)
            if self.has_change_permission(request, study) and may(request.user, Operation.CHANGE_STATUS):
                extra_context["status_buttons"] = status_buttons(study)
                extra_context["status_url"] = reverse("admin:annotation_study_status", args=[study.pk])
                extra_context["default_grace"] = closing.DEFAULT_GRACE_MINUTES
            extra_context.update(team_context(request))  # the page's controls, for whom their views let in
            extra_context["preview_links"] = preview.links(study)
            extra_context["launch_check"] = launch.launch_check(study)
            extra_context["launch_overrides"] = list(study.launch_overrides.all()[:5])
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
            return refusal(request, Operation.CONFIGURE)
        form = StandardDesignForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                study = studies.create_standard_design(
                    task=data["task"],
                    split_number=data["split_number"],
                    slug=data["slug"] or None,
                    workers_per_condition=data["workers_per_condition"],
                    filter_rule=data["filter_rule"] or Study.FilterRule.NONE,
                    filter_threshold=data["filter_threshold"] or 0.0,
                    filter_reference=data["filter_reference"] or Study.FilterReference.MEAN,
                    language=data["language"],
                    actor=request.user,
                )
            except ValidationError as exc:
                form.add_error(None, _error_text(exc))
            else:
                self.message_user(request, f"Created {study.slug} with conditions 0/10/20/30.", messages.SUCCESS)
                if data["open_now"] and not may(request.user, Operation.CHANGE_STATUS):
                    self.message_user(request, "Not opened: your role may not open studies.", messages.ERROR)
                elif data["open_now"]:  # opened as the study page's button does: through the launch check
                    self._change_status(request, [study], Study.Status.OPEN)
                return HttpResponseRedirect(reverse("admin:annotation_study_change", args=[study.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Create the standard CLUES design",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/annotation/study/standard_design.html", context)

    def participants_view(self, request: HttpRequest, task_id: int, fmt: str) -> HttpResponse:
        if refused := denied(request, Operation.EXPORT_IDENTIFIERS):  # one participant id a line
            return refused
        task = get_object_or_404(Task, pk=task_id)
        try:
            content, content_type, filename = blocklist.export_participants(task=task, fmt=fmt, actor=request.user)
        except ValidationError as exc:
            return HttpResponse(_error_text(exc), status=400, content_type="text/plain")
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    def status_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The Open / Pause / Close buttons of a study's page: the same service as the list's actions."""
        study = get_object_or_404(Study, pk=pk)
        if request.method != "POST":
            return HttpResponse(status=405)
        if refused := denied(request, Operation.CHANGE_STATUS):
            return refused
        to_status = request.POST.get("to_status", "")
        options: dict[str, Any] = {}
        if to_status == OPEN_REST:
            try:
                # audit: open_rest before=status,rest_opened_at after=status,rest_opened_at
                launch.open_rest(study=study)
            except ValidationError as exc:
                self.message_user(request, f"“{study.name}”: {_error_text(exc)}", messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"“{study.name}”: the rest is open, {study.workers_per_condition} workers per condition.",
                    messages.SUCCESS,
                )
            return HttpResponseRedirect(reverse("admin:annotation_study_change", args=[pk]))
        if to_status == OPEN_PILOT:
            to_status, options["pilot"] = Study.Status.OPEN, True
        if to_status == Study.Status.CLOSED:
            try:
                grace = GRACE_FIELD.clean(request.POST.get("grace_minutes", "").strip())
            except ValidationError as exc:
                self.message_user(request, f"Not closed: the grace period: {_error_text(exc)}", messages.ERROR)
                return HttpResponseRedirect(reverse("admin:annotation_study_change", args=[pk]))
            options["grace_minutes"] = closing.DEFAULT_GRACE_MINUTES if grace is None else grace
        if to_status == Study.Status.OPEN:  # the button beside the launch check's blockers says so
            options["override"] = request.POST.get("override_blockers") == "1"
            if options["override"] and (refused := denied(request, Operation.OPEN_DESPITE_BLOCKERS)):
                return refused
        if to_status not in Study.Status.values:
            self.message_user(request, f"Unknown status {to_status!r}.", messages.ERROR)
        else:
            self._change_status(request, [study], to_status, **options)
        return HttpResponseRedirect(reverse("admin:annotation_study_change", args=[pk]))

    def _change_status(self, request: HttpRequest, queryset: Iterable[Study], to_status: str, **options: Any) -> None:
        for study in queryset:
            try:
                if to_status == Study.Status.OPEN:  # a person opens through the launch check
                    study = launch.open_study(study=study, by=request.user, **options)
                else:
                    study = studies.change_status(study=study, to_status=to_status, actor=request.user, **options)
            except launch.LaunchBlocked as exc:
                named = "; ".join(f.message for f in exc.check.blockers)
                self.message_user(
                    request,
                    f"“{study.name}” not opened: {named} Fix them, or open it from its page with "
                    "“Open despite the blockers” (recorded).",
                    messages.ERROR,
                )
            except ValidationError as exc:
                self.message_user(request, f"“{study.name}”: {_error_text(exc)}", messages.ERROR)
            else:
                closes = (
                    f" Workers already in may finish until {closing.format_deadline(study.closes_at)}."
                    if (to_status == Study.Status.CLOSED and study.closes_at)
                    else ""
                )
                share = study.pilot_workers_per_condition
                pilot = f" as a pilot ({share} per condition)" if options.get("pilot") else ""
                self.message_user(request, f"“{study.name}” is now {to_status}{pilot}.{closes}", messages.SUCCESS)

    def has_change_status_permission(self, request: HttpRequest) -> bool:
        """The status actions' hook (``permissions=["change_status"]``): the list offers them to whoever may."""
        return may(request.user, Operation.CHANGE_STATUS)

    @admin.action(description="Open the selected studies", permissions=["change_status"])
    def open_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._change_status(request, queryset, Study.Status.OPEN)

    @admin.action(description="Pause the selected studies (no new workers)", permissions=["change_status"])
    def pause_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._change_status(request, queryset, Study.Status.PAUSED)

    @admin.action(
        description="Close the selected studies (final; workers in them get the grace period)",
        permissions=["change_status"],
    )
    def close_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        try:
            grace = GRACE_FIELD.clean(request.POST.get("grace_minutes", "").strip())
        except ValidationError as exc:
            self.message_user(request, f"Not closed: the grace period: {_error_text(exc)}", messages.ERROR)
            return
        if grace is None:
            grace = closing.DEFAULT_GRACE_MINUTES
        self._change_status(request, queryset, Study.Status.CLOSED, grace_minutes=grace)
