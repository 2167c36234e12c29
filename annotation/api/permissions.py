"""The API's side of the team's roles (docs/team.md): the permission class every view names, and the check
for an operation known only from the request. Each refuses through ``annotation.web.roles.refusal``."""

from __future__ import annotations

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from annotation.api.errors import Refusal
from annotation.services.roles.operations import Operation, may
from annotation.web.roles import refusal


def require(request: Request, operation: Operation) -> None:
    """In an API view, for an operation known only from the request (a Prolific operation, an export's kind)."""
    if not may(request.user, operation):
        raise Refusal(refusal(request, operation, json=True))


class RolePermission(BasePermission):
    """The API's permission class: each view says which operation each action or method is.

    ``view.role_operations`` maps a viewset's action (``list``, ``status``...) or an APIView's method (``get``,
    ``post``) to its Operation; anything it does not name (a method the view refuses with 405) needs WATCH.
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        table: dict[str, Operation] = getattr(view, "role_operations", {})
        action = getattr(view, "action", None) or (request.method or "").lower()
        require(request, table.get(action, Operation.WATCH))
        return True
