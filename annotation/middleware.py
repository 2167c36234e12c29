"""Refuse URLs that no view can take: a NUL character, or a query string that is not UTF-8.

PostgreSQL refuses NUL in text (the driver raises ValueError, a 500 wherever a parameter reaches a
query), and a query string that is not UTF-8 would reach views as replacement characters. Such a
request is answered here, before any view: 400 in the API's JSON error shape under /api/ (``invalid``,
with the offending parameter in ``fields``), a plain 400 page elsewhere. Views still validate their
own parameters (ids are integers, states are known).
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from django.http import HttpResponseBadRequest, JsonResponse
from rest_framework.settings import api_settings

from annotation.api.errors import error_body

NUL = "\x00"


def _query_problem(query: str) -> tuple[str, str] | None:
    """(field, message) for the first unusable parameter of a raw query string, or None."""
    for part in query.split("&"):
        name_raw, _, value_raw = part.partition("=")
        try:
            name = unquote_to_bytes(name_raw.replace("+", " ")).decode()
            value = unquote_to_bytes(value_raw.replace("+", " ")).decode()
        except UnicodeDecodeError:
            field = name_raw if name_raw.isprintable() and NUL not in name_raw else api_settings.NON_FIELD_ERRORS_KEY
            return field, "The query string is not valid UTF-8."
        # Django's WSGI handler turns raw bytes that are not UTF-8 into U+FFFD.
        if "\ufffd" in name_raw or "\ufffd" in value_raw:
            return api_settings.NON_FIELD_ERRORS_KEY, "The query string is not valid UTF-8."
        if NUL in name:
            return api_settings.NON_FIELD_ERRORS_KEY, "A parameter name contains a NUL character."
        if NUL in value:
            return name, "Contains a NUL character."
    return None


class RefuseUnusableURLs:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        problem = None
        if NUL in request.path_info:
            problem = ("path", "The path contains a NUL character.")
        elif query := request.META.get("QUERY_STRING", ""):
            problem = _query_problem(query)
        if problem is None:
            return self.get_response(request)
        field, message = problem
        if request.path_info.startswith("/api/"):
            summary = message if field == api_settings.NON_FIELD_ERRORS_KEY else f"{field}: {message}"
            body = error_body("invalid", summary, fields={field: [message]})
            return JsonResponse(body, status=400)
        return HttpResponseBadRequest(f"Bad request: {message}\n", content_type="text/plain; charset=utf-8")
