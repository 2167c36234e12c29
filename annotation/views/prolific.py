"""Dashboard pages of the Prolific operations: GET shows the dry run; POST (with CSRF) queues the run as a
Celery job (``prolific.jobs``) and redirects to its page, which shows its progress, then its report."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.models import ProlificJob, Study
from annotation.services.prolific import jobs, operations
from annotation.services.roles.operations import Operation, prolific_operation
from annotation.web.roles import denied, requires


@requires(Operation.WATCH)
def operation(request: HttpRequest, slug: str, operation: str) -> HttpResponse:
    if operation not in operations.OPERATIONS:
        raise Http404("no such Prolific operation")
    if refused := denied(request, prolific_operation(operation)):  # the dry run too: it lists the participants
        return refused
    study = get_object_or_404(Study.objects.select_related("task"), slug=slug)
    enabled = operations.enabled()
    if request.method == "POST":
        if not enabled:
            return HttpResponse(operations.OFF_MESSAGE, status=409, content_type="text/plain; charset=utf-8")
        try:
            job = jobs.prolific_job_create(study=study, operation=operation, user=request.user)
        except jobs.ProlificJobBusy as exc:
            return HttpResponse(str(exc), status=409, content_type="text/plain; charset=utf-8")
        return redirect("dashboard:prolific-job", slug=study.slug, job_id=job.pk)
    report = operations.plan(operation=operation, study=study, actor=request.user)
    context = {
        "study": study,
        "operation": operation,
        "report": report,
        "enabled": enabled,
        "confirm_url": reverse("dashboard:prolific", args=[study.slug, operation]),
    }
    return render(request, "dashboard/prolific.html", context)


@requires(Operation.WATCH)
def job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    found = get_object_or_404(ProlificJob.objects.select_related("study"), pk=job_id, study__slug=slug)
    if refused := denied(request, prolific_operation(found.operation)):
        return refused
    context = {"study": found.study, "job": found, "status": jobs.job_status(found)}
    return render(request, "dashboard/prolific_job.html", context)
