"""503 while the database is away, wherever the request failed (DRF's views answer it themselves).

DRF's views answer ``database_unavailable`` through the API's exception
handler (``annotation.api.errors``). Everything else that needs the database
(the worker pages, the entry link, the admin, the dashboard, a session or user
loaded lazily by a view or its template) raises in a Django view or while its
response renders: ``DatabaseUnavailableMiddleware.process_exception`` answers
those. Middleware that reaches the database on the way out (a changed session
saved after the view) is beyond ``process_exception``: Django turns that error
into a 500 by calling ``handler500`` while it handles the exception, and
``server_error`` here answers the same 503 when that exception is the
database's, Django's own 500 page otherwise (with DEBUG on, Django shows its
debug page there instead and calls no handler500).

The answer: under /api/ the API's JSON error shape, elsewhere the 503.html
page (which renders with no request and no context processor, so it never
touches the database; a GET page reloads itself after ``Retry-After``); both
with ``Retry-After`` and never cached. Which errors count is
``annotation.db.errors``'s decision.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.utils.cache import add_never_cache_headers
from django.views import defaults

from annotation.api.errors import error_body
from annotation.db import errors as db_errors

API_PREFIX = "/api/"


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """503 ``database_unavailable``: JSON under /api/, the 503 page elsewhere."""
    response: HttpResponse
    if request.path_info.startswith(API_PREFIX):
        response = JsonResponse(error_body(db_errors.CODE, str(db_errors.DETAIL)), status=503)
    else:
        context = {"retry_after": db_errors.RETRY_AFTER_SECONDS, "reload": request.method in ("GET", "HEAD")}
        response = HttpResponse(loader.get_template("503.html").render(context), status=503)
    response["Retry-After"] = str(db_errors.RETRY_AFTER_SECONDS)
    add_never_cache_headers(response)
    return response


class DatabaseUnavailableMiddleware:
    """A database that cannot be reached, raised by a view or its rendering, answers 503 instead of a 500.

    Innermost in MIDDLEWARE, so that its ``process_exception`` is the first to see a view's exception.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not db_errors.is_database_unavailable(exception):
            return None  # Django's handling: a 500 with its traceback in the log
        db_errors.log_unavailable(request, exception)
        return unavailable_response(request)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: the 503 when the exception Django is handling is the database's, else Django's 500 page."""
    exc = sys.exception()
    if exc is not None and db_errors.is_database_unavailable(exc):
        return unavailable_response(request)
    return defaults.server_error(request)
