"""The HTTP side of the team's roles: the one refusal, and the checks the dashboard, the admin's own pages
and the API make before an operation (docs/team.md; the table of operations is annotation.services.roles).

``Allowed`` (``may`` in a template) is the same check for the page that shows the control: a role sees only
what it may use, and where it may not, a note of who may (``who_may``).

``refusal`` is the only place a request is refused for want of a role: anonymous visitors of a page go to
the login, anyone else gets Django's 403 page, and a JSON endpoint (the API, the dashboard's JSON) answers
403 in the API's error shape (``not_authenticated`` or ``permission_denied``). The API's own checks, which
raise that refusal, are ``annotation.api.permissions``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.urls import reverse
from django.views.defaults import permission_denied

from annotation.models import AuditEntry
from annotation.services import audit
from annotation.services.roles.operations import WHAT, Operation, holders, may

if TYPE_CHECKING:
    from rest_framework.request import Request

logger = logging.getLogger(__name__)


def refusal(request: HttpRequest | Request, operation: Operation, *, json: bool = False) -> HttpResponse:
    """The answer to a request whose user may not do ``operation`` (the one place a refusal is made)."""
    user = request.user
    signed_in = bool(user.is_authenticated)
    if signed_in:  # a team member without the right; an anonymous visitor is only sent to the login page
        audit.record(
            actor=user,
            action=AuditEntry.Action.REFUSED,
            target=f"{request.method} {request.path}"[:200],
            detail={"operation": str(operation)},
        )
    logger.info("refused %s %s to %s: %s", request.method, request.path, user if signed_in else "anonymous", operation)
    if not signed_in and not json:
        return redirect_to_login(request.get_full_path(), reverse("admin:login"))
    # The API's error shape, imported here: this module is loaded by the admin at every start (every
    # manage.py command), and the API's module loads REST framework and the schema generator.
    from annotation.api.errors import error_body

    if not signed_in:
        body = error_body("not_authenticated", "Sign in as a member of the team (at /admin/login/).")
    else:
        body = error_body("permission_denied", f"Your role may not {WHAT[operation]}.", operation=str(operation))
    if json:
        return JsonResponse(body, status=403)
    return permission_denied(request, PermissionDenied(body["detail"]))  # handler403's page: templates/403.html


def _operation(name: str) -> Operation:
    try:
        return Operation(name)
    except ValueError:  # a template swallows a ValueError or KeyError: a misspelt name must fail the page
        raise LookupError(f"no operation {name!r} (annotation.services.roles.operations.Operation)") from None


class Allowed:
    """What the user may do, for a template: ``{% if may.rehearse %}`` (an Operation's value) is the check the
    view the control sends to makes, so a page shows a role only the controls it may use."""

    def __init__(self, user: Any) -> None:
        self.user = user

    def __getitem__(self, name: str) -> bool:
        return may(self.user, _operation(name))


class WhoMay:
    """Who may do an operation, in words, for the note a page shows instead of a control the user may not
    use: ``{{ who_may.rehearse }}`` is "a researcher or a principal investigator"."""

    def __getitem__(self, name: str) -> str:
        return holders(_operation(name))


def team_context(request: HttpRequest) -> dict[str, Any]:
    """``may`` and ``who_may`` for a staff page's template (the dashboard, the study's admin page)."""
    return {"may": Allowed(request.user), "who_may": WhoMay()}


def denied(request: HttpRequest, operation: Operation, *, json: bool = False) -> HttpResponse | None:
    """None when the request's user may do ``operation``; else the refusal to answer."""
    return None if may(request.user, operation) else refusal(request, operation, json=json)


def requires(operation: Operation, *, json: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A view decorator: the view runs only for a user who may do ``operation``."""

    def decorate(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            return denied(request, operation, json=json) or view(request, *args, **kwargs)

        return wrapped

    return decorate
