"""The front page: what this server is, and where each kind of user goes."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.models import Study


def home(request: HttpRequest) -> HttpResponse:
    open_studies = Study.objects.filter(status=Study.Status.OPEN).select_related("task").order_by("task__display_order")
    return render(request, "home.html", {"open_studies": open_studies if request.user.is_staff else []})
