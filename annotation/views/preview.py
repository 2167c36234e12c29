"""Staff previews of a study as a worker: ``/work/preview/<slug>/?shots=N`` and its restart.

The preview's participation goes into the worker cookie, as the entry link does, and the browser moves
on to the ordinary worker pages (annotation.services.studies.preview says what is and is not recorded).
Anonymous visitors, crowd workers among them, are sent to the admin's login; a signed-in user who is
not staff gets 403.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Study
from annotation.services.studies import preview
from annotation.web import worker_cookie

WORKER_HOME = "/work/"


def _staff_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not request.user.is_staff:
            raise PermissionDenied("previews are for staff")
        return view(request, *args, **kwargs)

    return wrapped


def _shots(request: HttpRequest) -> int | None:
    raw = request.GET.get("shots", "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ValueError(f"shots must be a number of training examples, not {raw!r}")
    return int(raw)


@never_cache
@require_GET
@_staff_only
def start(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("task"), slug=slug)
    try:
        participation = preview.start(study=study, user=request.user, shots=_shots(request))
    except (ValueError, preview.NoSuchCondition) as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain")
    response = HttpResponseRedirect(WORKER_HOME)
    worker_cookie.remember(response, participation.pk)
    return response


@never_cache
@require_POST
@_staff_only
def restart(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    shots = preview.restart(study=study, user=request.user)
    url = reverse("worker:preview", args=[study.slug])
    return HttpResponseRedirect(f"{url}?shots={shots}" if shots is not None else url)
