"""Admin for export jobs (queue, watch the status, download) and model runs (upload predictions)."""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from annotation.models import ExportJob, ModelRun, Study
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.predictions import model_run_create, model_run_score
from annotation.services.roles.operations import may
from tasks_app.models import Task

logger = logging.getLogger(__name__)

# What ModelAdmin.get_fields answers: field names, or groups of names shown on one line.
FieldGroups = list[str | list[str] | tuple[str, ...]] | tuple[str | list[str] | tuple[str, ...], ...]


def _exports() -> ModuleType:
    """``annotation.reporting.exports``, loaded when an export is queued: the admin is loaded at every start
    (every manage.py command), and the exports load the whole reporting stack with numpy."""
    from annotation.reporting import exports

    return exports


def _kinds() -> list[tuple[str, str]]:
    return [(k, k) for k in _exports().EXPORT_KINDS]


class ExportJobForm(forms.ModelForm):
    """Queue an export: the kind, the studies and the metric options."""

    kind = forms.ChoiceField(choices=_kinds)
    studies = forms.ModelMultipleChoiceField(queryset=Study.objects.all())
    skip_policy = forms.ChoiceField(
        choices=[
            ("zero", "a skip scores 0 (default)"),
            ("empty", "a skip counts as an empty answer"),
            ("exclude", "skips left out, coverage reported"),
        ],
        initial="zero",
        required=False,
    )
    ddof = forms.TypedChoiceField(choices=[(0, "population std (paper)"), (1, "sample std")], coerce=int, initial=0)

    user: AbstractBaseUser | AnonymousUser | None = None  # set by ExportJobAdmin.get_form

    class Meta:
        model = ExportJob
        fields = ["kind"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        if not may(self.user, _exports().export_operation(data["kind"])):
            raise forms.ValidationError(f"Your role may not export {data['kind']}: it holds participants' identifiers.")
        try:
            self.job = _exports().export_job_create(
                kind=data["kind"],
                study_refs=[s.pk for s in data["studies"]],
                options=MetricOptions(skip_policy=data.get("skip_policy") or "zero", ddof=data.get("ddof", 0)),
                user=getattr(self, "user", None),
            )
        except ReportError as exc:
            raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    form = ExportJobForm
    list_display = [
        "id",
        "kind",
        "status",
        "attempts",
        "studies_label",
        "created_at",
        "finished_at",
        "download",
        "error_short",
    ]
    list_filter = ["status", "kind"]
    readonly_fields = [
        "kind",
        "params",
        "status",
        "error",
        "download",
        "created_by",
        "created_at",
        "started_at",
        "heartbeat_at",
        "attempts",
        "finished_at",
    ]
    actions = ["requeue"]

    def get_form(
        self, request: HttpRequest, obj: ExportJob | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm[ExportJob]]:
        form = super().get_form(request, obj, change, **kwargs)
        assert issubclass(form, ExportJobForm)  # the admin's form, made by modelform_factory from it
        form.user = request.user
        return form

    def get_fields(self, request: HttpRequest, obj: ExportJob | None = None) -> FieldGroups:
        if obj is None:
            return ["kind", "studies", "skip_policy", "ddof"]
        return [*self.readonly_fields]

    def get_readonly_fields(self, request: HttpRequest, obj: ExportJob | None = None) -> list[str] | tuple[str, ...]:
        return [] if obj is None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: ExportJob, form: forms.ModelForm[ExportJob], change: bool) -> None:
        if not change:  # the form's clean() created and queued the job through the service
            assert isinstance(form, ExportJobForm)
            obj.pk = form.job.pk
            obj.refresh_from_db()

    def save_related(
        self,
        request: HttpRequest,
        form: forms.ModelForm[ExportJob],
        formsets: list[forms.BaseFormSet[Any]],
        change: bool,
    ) -> None:
        pass

    def has_change_permission(self, request: HttpRequest, obj: ExportJob | None = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)

    @admin.display(description="studies")
    def studies_label(self, job: ExportJob) -> str:
        ids = (job.params or {}).get("studies", [])
        return ", ".join(Study.objects.filter(pk__in=ids).values_list("slug", flat=True))

    @admin.display(description="file")
    def download(self, job: ExportJob) -> str:
        if job.status == ExportJob.Status.DONE and job.file:
            return format_html('<a href="{}">download</a>', reverse("dashboard:export-download", args=[job.pk]))
        return "–"

    @admin.display(description="error")
    def error_short(self, job: ExportJob) -> str:
        return job.error[:120]

    @admin.action(description="Run the selected exports again (as new jobs)", permissions=["add"])
    def requeue(self, request: HttpRequest, queryset: QuerySet[ExportJob]) -> None:
        for job in queryset:
            params = job.params or {}
            if not may(request.user, _exports().export_operation(job.kind)):
                self.message_user(request, f"#{job.pk}: your role may not export {job.kind}.", messages.ERROR)
                continue
            try:
                new = _exports().export_job_create(
                    kind=job.kind,
                    study_refs=params.get("studies", []),
                    options=MetricOptions.from_params(params),
                    user=request.user,
                )
            except ReportError as exc:
                # e.g. one of its studies was deleted since: the admin sees why, the logs keep it
                logger.warning("export job %s not queued again: %s", job.pk, exc)
                self.message_user(request, f"#{job.pk}: {exc}", messages.ERROR)
            else:
                logger.info("export job %s queued again as %s", job.pk, new.pk)
                self.message_user(request, f"#{job.pk} queued again as #{new.pk}")


class ModelRunForm(forms.ModelForm):
    """Upload a predictions file; it is validated against the task's test set before anything is stored."""

    predictions_file = forms.FileField(
        help_text='CLUES format: a JSON object {"test id": ["answer", ...]}, '
        'or JSONL lines {"id": ..., "answer": [...]}.'
    )
    task = forms.ModelChoiceField(queryset=Task.objects.all())

    class Meta:
        model = ModelRun
        fields = ["task", "name", "shots"]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        try:
            self.run = model_run_create(
                task=data["task"], name=data["name"], shots=data.get("shots"), content=data["predictions_file"].read()
            )
        except ReportError as exc:
            raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(ModelRun)
class ModelRunAdmin(admin.ModelAdmin):
    list_display = ["name", "task", "shots", "s1", "created_at"]
    list_filter = ["task"]

    def get_form(
        self, request: HttpRequest, obj: ModelRun | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm[ModelRun]]:
        if obj is None:
            kwargs["form"] = ModelRunForm
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ModelRun | None = None) -> FieldGroups:
        return ["task", "name", "shots", "predictions_file"] if obj is None else ["task", "name", "shots", "s1"]

    def get_readonly_fields(self, request: HttpRequest, obj: ModelRun | None = None) -> list[str]:
        return [] if obj is None else ["task", "s1"]

    def save_model(self, request: HttpRequest, obj: ModelRun, form: forms.ModelForm[ModelRun], change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        assert isinstance(form, ModelRunForm)
        obj.pk = form.run.pk
        obj.refresh_from_db()

    @admin.display(description="S1 (0-100)")
    def s1(self, run: ModelRun) -> str:
        return f"{model_run_score(run).s1 * 100:.1f}"
