"""Dashboard pages of the Prolific operations: GET shows the dry run, POST (with CSRF) runs it."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from annotation.models import Study
from annotation.services.prolific import operations


@staff_member_required
def operation(request: HttpRequest, slug: str, operation: str) -> HttpResponse:
    if operation not in operations.OPERATIONS:
        raise Http404("no such Prolific operation")
    study = get_object_or_404(Study.objects.select_related("task"), slug=slug)
    enabled = operations.enabled()
    if request.method == "POST":
        if not enabled:
            return HttpResponse(operations.OFF_MESSAGE, status=409, content_type="text/plain; charset=utf-8")
        report = operations.run(operation=operation, study=study)
    else:
        report = operations.plan(operation=operation, study=study)
    context = {
        "study": study,
        "operation": operation,
        "report": report,
        "enabled": enabled,
        "confirm_url": reverse("dashboard:prolific", args=[study.slug, operation]),
    }
    return render(request, "dashboard/prolific.html", context)
