"""One JSON shape for every error the API answers, and its OpenAPI description.

Every 4xx body is ``{"error": code, "detail": message}``: ``error`` is a
stable code that clients branch on, ``detail`` a sentence for people.
Validation errors (400 ``invalid``) add ``fields``, each field's messages
(``non_field_errors`` for those about the whole input). A route may add keys
of its own (the session API's 409 ``already_locked`` carries the stored
``answer``).

A service's refusal (``annotation.errors.ServiceError``: an answer refused, a study closed, a report's bad
input...) answers its own ``code`` and ``status``, and any ``extra`` keys it carries.
DRF's exceptions map to these codes, whatever message they carry; a view that
raises one with a code of its own (``PermissionDenied(code="csrf_failed")``,
a permission class's ``code``) keeps that code. A database that cannot be
reached (``annotation.db.errors``) is 503 ``database_unavailable`` with
``Retry-After``; failures outside DRF's views get the same answer from
``annotation.web.unavailable``.

Wiring: ``exception_handler`` is the project-wide DRF handler
(``REST_FRAMEWORK["EXCEPTION_HANDLER"]``); the worker's session API calls it
directly. ``ErrorResponsesSchema`` adds the ``Error`` responses an admin
operation can answer to the OpenAPI schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ComponentRegistry
from rest_framework import exceptions, serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import set_rollback

from annotation.api.parsers import TooLarge
from annotation.db import errors as db_errors
from annotation.errors import ServiceError

# Checked in order; the first match names the code. Clients rely on these: change none.
CODES: tuple[tuple[type[exceptions.APIException], str], ...] = (
    (exceptions.ValidationError, "invalid"),
    (exceptions.ParseError, "parse_error"),
    # 401 or 403 as the view's authenticators decide; one code, so clients need not care which.
    (exceptions.NotAuthenticated, "not_authenticated"),
    (exceptions.AuthenticationFailed, "not_authenticated"),
    (exceptions.PermissionDenied, "permission_denied"),
    (exceptions.NotFound, "not_found"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.NotAcceptable, "not_acceptable"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.Throttled, "throttled"),
)


def error_body(code: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"error": code, "detail": detail, **extra}


def error_response(
    code: str, detail: str, status: int, *, headers: dict[str, str] | None = None, **extra: Any
) -> Response:
    return Response(error_body(code, detail, **extra), status=status, headers=headers)


def error_code(exc: exceptions.APIException) -> str:
    codes = exc.get_codes()
    if isinstance(codes, str) and codes != exc.default_code:
        return codes  # the raiser's own code
    for cls, code in CODES:
        if isinstance(exc, cls):
            return code
    return codes if isinstance(codes, str) else exc.default_code


def _messages(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, message) pairs of a DRF error structure; nested paths are dotted (``shots.0``)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _messages(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _messages(item, path)
    else:
        yield path, str(value)


def field_errors(detail: Any) -> dict[str, list[str]]:
    """DRF's error detail as ``{field: [message, ...]}``: top-level fields, nested messages prefixed with their path."""
    non_field = api_settings.NON_FIELD_ERRORS_KEY
    if not isinstance(detail, dict):
        return {non_field: [message for _, message in _messages(detail)]}
    fields: dict[str, list[str]] = {}
    for path, message in _messages(detail):
        field, _, rest = path.partition(".")
        fields.setdefault(field or non_field, []).append(f"{rest}: {message}" if rest else message)
    return fields


def _summary(fields: dict[str, list[str]]) -> str:
    non_field = api_settings.NON_FIELD_ERRORS_KEY
    parts = [m if f == non_field else f"{f}: {m}" for f, messages in fields.items() for m in messages]
    return "; ".join(parts) or "Invalid input."


def as_api_exception(exc: Exception) -> exceptions.APIException | None:
    """Django's Http404, PermissionDenied and body limits as DRF's; None for anything that is not an API error."""
    if isinstance(exc, RequestDataTooBig):
        # Django's own answer would be an HTML 400; the body is over DATA_UPLOAD_MAX_MEMORY_SIZE.
        return TooLarge(f"The request body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.")
    if isinstance(exc, TooManyFieldsSent):
        return exceptions.ParseError(str(exc) or "Too many form fields.", code="too_many_fields")
    if isinstance(exc, Http404):
        return exceptions.NotFound(*exc.args)
    if isinstance(exc, DjangoPermissionDenied):
        return exceptions.PermissionDenied(*exc.args)
    if isinstance(exc, exceptions.APIException):
        return exc
    return None


def database_unavailable_response() -> Response:
    """503 ``database_unavailable``: the database cannot be reached; the client retries after ``Retry-After``."""
    headers = {"Retry-After": str(db_errors.RETRY_AFTER_SECONDS)}
    return error_response(db_errors.CODE, str(db_errors.DETAIL), 503, headers=headers)


def service_error_response(exc: ServiceError) -> Response:
    """A service's refusal (annotation.errors): its code and status; ``invalid`` carries ``fields`` as DRF's
    validation errors do. No rollback: what the service recorded before refusing stands (``study_closed``
    closes the participation out)."""
    if exc.code == "invalid":
        non_field = api_settings.NON_FIELD_ERRORS_KEY
        fields = {name or non_field: list(messages) for name, messages in exc.fields.items()}
        return error_response(exc.code, _summary(fields), exc.status, fields=fields, **exc.extra())
    return error_response(exc.code, exc.detail, exc.status, **exc.extra())


class Refusal(Exception):
    """A role without the right, inside the API: carries the answer of ``annotation.web.roles.refusal``."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER: the API's errors in one shape; None lets anything else become a 500."""
    if isinstance(exc, Refusal):  # a role without the right: annotation.web.roles.refusal made the answer
        return Response(json.loads(exc.response.content), status=exc.response.status_code)
    if db_errors.is_database_unavailable(exc):
        if context.get("request") is not None:
            db_errors.log_unavailable(context["request"], exc)
        set_rollback()
        return database_unavailable_response()
    if isinstance(exc, ServiceError):
        return service_error_response(exc)
    api_exc = as_api_exception(exc)
    if api_exc is None:
        return None
    headers: dict[str, str] = {}
    # Set on some exceptions only: auth_header by the view (NotAuthenticated, AuthenticationFailed), wait by
    # Throttled.
    auth_header = getattr(api_exc, "auth_header", None)
    if auth_header:
        headers["WWW-Authenticate"] = auth_header
    wait = getattr(api_exc, "wait", None)
    if wait:
        headers["Retry-After"] = str(int(wait))
    code = error_code(api_exc)
    if isinstance(api_exc, exceptions.ValidationError):
        fields = field_errors(api_exc.detail)
        body = error_body(code, _summary(fields), fields=fields)
    elif isinstance(api_exc.detail, str):
        body = error_body(code, str(api_exc.detail))
    else:  # a non-validation exception raised with a list or dict: still one sentence
        body = error_body(code, "; ".join(message for _, message in _messages(api_exc.detail)))
    set_rollback()  # as DRF's own handler: an ATOMIC_REQUESTS transaction is not committed
    return Response(body, status=api_exc.status_code, headers=headers)


def not_found(request: HttpRequest) -> JsonResponse:
    """An address under /api/ that matches no route (annotation.api.urls' catch-all): a 404 in this shape."""
    detail = f"no API route at {request.path}"
    if not request.path.endswith("/"):
        detail += " (API routes end with a slash)"
    return JsonResponse(error_body("not_found", detail + "; see /api/schema/"), status=404)


# --- OpenAPI ---------------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    """The body of every 4xx answer of the API, and of a 503 while the database is away: a stable code, a message,
    and field errors for validation."""

    error = serializers.CharField(
        help_text="Stable code to branch on: invalid, parse_error, too_deep (JSON nested over 32 levels), "
        "too_large (413: a body over the size limit), not_authenticated, permission_denied, not_found, "
        "method_not_allowed, not_acceptable, unsupported_media_type, throttled, database_unavailable (503, "
        "with Retry-After), or a route's own (e.g. no_session, already_locked)."
    )
    detail = serializers.CharField(help_text="What went wrong, for people.")
    # Ignored: the stubs cannot see SerializerMetaclass take declared fields off the class (`fields` stays a property).
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Validation errors (400 invalid) only: each field's messages; non_field_errors for the input "
        "as a whole.",
    )


class ErrorResponsesSchema(AutoSchema):
    """Adds the ``Error`` responses an admin operation can give, unless the operation declares its own.

    400 for unsafe methods (parse errors, validation) and for any operation with
    query parameters (an unreadable one is refused, never ignored), 403 behind a permission
    (session authentication: DRF answers 403, not 401), 404 on a path with an
    id. Every operation may also answer 405, 406, 415 and 429 in this shape;
    those are left out so the schema lists what a correct client can meet.
    """

    def get_operation(
        self, path: str, path_regex: str, path_prefix: str, method: str, registry: ComponentRegistry
    ) -> dict[str, Any] | None:
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        statuses = {}
        parameters = operation.get("parameters", [])
        if self.method not in ("GET", "HEAD", "OPTIONS") or any(p.get("in") == "query" for p in parameters):
            statuses["400"] = "Invalid input (invalid, with fields; parse_error)"
        if any(not isinstance(p, AllowAny) for p in self.view.get_permissions()):
            statuses["403"] = "Not signed in, or a role without the right (not_authenticated, permission_denied)"
        if any(p.get("in") == "path" for p in parameters):
            statuses["404"] = "No such object (not_found)"
        responses = operation["responses"]
        missing = {status: text for status, text in statuses.items() if status not in responses}
        if missing:
            ref = self.resolve_serializer(ErrorSerializer(), "response").ref
            for status, text in missing.items():
                responses[status] = {"content": {"application/json": {"schema": ref}}, "description": text}
            operation["responses"] = dict(sorted(responses.items()))
        return operation
