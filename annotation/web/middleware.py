"""Refuse URLs that no view can take: a NUL character, or a query string that is not UTF-8.

PostgreSQL refuses NUL in text (the driver raises ValueError, a 500 wherever a parameter reaches a
query), and a query string that is not UTF-8 would reach views as U+FFFD replacement characters. Such a
request is answered here, before any view: 400 in the API's JSON error shape under /api/ (``invalid``,
with the offending parameter in ``fields``), the site's 400 page saying what is wrong elsewhere.
Views still validate their own parameters (ids are integers, states are known).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy
from rest_framework.settings import api_settings

from annotation.api.errors import error_body
from annotation.models import Study
from annotation.services.texts import languages

NUL = "\x00"
JOIN = re.compile(r"^/join/(?P<slug>[-\w]+)/")  # annotation.urls_entry: a study's entry link


def _raw_bytes(query: str) -> bytes:
    # WSGI hands the query string over as bytes decoded with ISO-8859-1 (PEP 3333); ASGI as str.
    try:
        return query.encode("iso-8859-1")
    except UnicodeEncodeError:
        return query.encode()


# Problem -> (the API's detail, the page's sentence for a worker); %(field)s is the parameter's name.
_PROBLEMS = {
    "path_nul": ("The path contains a NUL character.", gettext_lazy("The address contains a NUL character.")),
    "name_utf8": (
        "A parameter name is not valid UTF-8.",
        gettext_lazy("A parameter name in the link is not valid UTF-8."),
    ),
    "name_nul": (
        "A parameter name contains a NUL character.",
        gettext_lazy("A parameter name in the link contains a NUL character."),
    ),
    "value_utf8": (
        "The parameter %(field)s is not valid UTF-8.",
        gettext_lazy("The link's %(field)s is not valid UTF-8."),
    ),
    "value_nul": (
        "The parameter %(field)s contains a NUL character.",
        gettext_lazy("The link's %(field)s contains a NUL character."),
    ),
}


def _query_problem(query: str) -> tuple[str, str] | None:
    """(field, problem) for the first unusable parameter of a raw query string, or None."""
    non_field = api_settings.NON_FIELD_ERRORS_KEY
    for part in _raw_bytes(query).split(b"&"):
        name_raw, _, value_raw = part.partition(b"=")
        try:
            name = unquote_to_bytes(name_raw.replace(b"+", b" ")).decode()
        except UnicodeDecodeError:
            return non_field, "name_utf8"
        if NUL in name:
            return non_field, "name_nul"
        try:
            value = unquote_to_bytes(value_raw.replace(b"+", b" ")).decode()
        except UnicodeDecodeError:
            return name, "value_utf8"
        if NUL in value:
            return name, "value_nul"
    return None


class RefuseUnusableURLs:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        problem = None
        if NUL in request.path_info:
            problem = ("path", "path_nul")
        elif query := request.META.get("QUERY_STRING", ""):
            problem = _query_problem(query)
        if problem is None:
            return self.get_response(request)
        field, kind = problem
        detail, sentence = _PROBLEMS[kind]
        if request.path_info.startswith("/api/"):
            summary = detail % {"field": field}
            body = error_body("invalid", summary, fields={field: [summary]})
            return JsonResponse(body, status=400)
        if join := JOIN.match(request.path_info):
            # A study's entry link speaks the study's language even when the link is unusable (worker_id=%ff
            # in a Chinese study gets a Chinese page), as the entry view would.
            languages.activate_for_study(request, Study.objects.filter(slug=join["slug"]).first())
        return render(request, "400.html", {"message": sentence % {"field": field}}, status=400)
