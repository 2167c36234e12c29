"""The language of a request, and Django's JavaScript catalog for the worker pages.

``WorkerLocaleMiddleware`` is Django's LocaleMiddleware for the workers' part
of the site only: outside the staff areas (the admin, the dashboard, the
researchers' API) it activates the browser's language among
``settings.LANGUAGES`` (Django's language cookie, then ``Accept-Language``);
the staff areas stay in ``LANGUAGE_CODE``. A worker view then switches to its
study's language (``annotation.services.texts.languages.activate_for_study``).
Responses say which language they are in (``Content-Language``) and that they
vary with ``Accept-Language``.

``javascript_catalog`` serves Django's ``JavaScriptCatalog`` (``gettext``,
``interpolate``... on ``window``) at ``/jsi18n/<language>/``: the language is
in the URL, so the page's own choice (the study's) decides it rather than the
request that fetches the script, and each language's catalog can be cached.
It is a static-like script from 'self', which the site's CSP allows.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.translation.trans_real import DjangoTranslation
from django.views.decorators.http import require_GET
from django.views.i18n import JavaScriptCatalog

from annotation.services.texts import languages

# Staff areas: in LANGUAGE_CODE whatever the browser says. /api/session/ is the worker's, the rest of /api/ is not.
STAFF_PREFIXES = ("/admin/", "/dashboard/", "/api/")
WORKER_API_PREFIX = "/api/session/"
CATALOG_MAX_AGE = 60 * 60  # an hour: a deployment with new translations reaches workers soon enough


def is_staff_path(path: str) -> bool:
    return path.startswith(STAFF_PREFIXES) and not path.startswith(WORKER_API_PREFIX)


class WorkerLocaleMiddleware:
    """Activate the browser's language for worker-facing requests, the default for staff ones."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if path.startswith(_static_prefix()):
            return self.get_response(request)  # WhiteNoise's files: the same in every language
        staff = is_staff_path(path)
        translation.activate(settings.LANGUAGE_CODE if staff else languages.browser_language(request))
        request.LANGUAGE_CODE = translation.get_language()
        try:
            response = self.get_response(request)  # a worker view may have activated its study's language
            if not staff:
                patch_vary_headers(response, ("Accept-Language",))
            response.headers.setdefault("Content-Language", translation.get_language())
        finally:
            translation.deactivate()  # nothing of this request's language outlives it in the thread
        return response


def _static_prefix() -> str:
    return "/" + settings.STATIC_URL.lstrip("/")


@cache
def _catalog_script(language: str) -> tuple[bytes, str]:
    """Django's catalog script and its content type, built once per process: the .mo files do not change
    while it runs, and building one reads every app's catalog from disk."""
    with translation.override(language):
        view = JavaScriptCatalog()
        view.translation = DjangoTranslation(language, domain=view.domain)  # every app's and LOCALE_PATHS'
        response = view.render_to_response(view.get_context_data())
    return response.content, response["Content-Type"]


@require_GET
def javascript_catalog(request: HttpRequest, language: str) -> HttpResponse:
    """Django's JavaScript catalog of one shipped language (404 for any other)."""
    if language not in languages.shipped():
        raise Http404("no such language")
    content, content_type = _catalog_script(language)
    response = HttpResponse(content, content_type=content_type)
    patch_cache_control(response, public=True, max_age=CATALOG_MAX_AGE)
    return response
