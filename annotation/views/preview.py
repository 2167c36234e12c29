"""Staff previews of a study as a worker: ``/work/preview/<slug>/?shots=N`` and its restart.

The preview's participation goes into the worker cookie, as the entry link does, and the browser moves
on to the ordinary worker pages (annotation.services.studies.preview says what is and is not recorded).
Anonymous visitors, crowd workers among them, are sent to the admin's login; a signed-in user whose role
may not preview gets 403 (annotation.web.roles).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Study
from annotation.services.roles.operations import Operation
from annotation.services.studies import preview
from annotation.web import worker_cookie
from annotation.web.roles import requires

WORKER_HOME = "/work/"


def _shots(request: HttpRequest) -> int | None:
    raw = request.GET.get("shots", "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ValueError(f"shots must be a number of training examples, not {raw!r}")
    return int(raw)


@never_cache
@require_GET
@requires(Operation.PREVIEW)
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
@requires(Operation.PREVIEW)
def restart(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    shots = preview.restart(study=study, user=request.user)
    url = reverse("worker:preview", args=[study.slug])
    return HttpResponseRedirect(f"{url}?shots={shots}" if shots is not None else url)
