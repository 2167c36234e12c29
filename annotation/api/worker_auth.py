"""The session API's door: the worker cookie's participation, the CSRF check, and the base of every view.

Every route under /api/session/ is a WorkerSessionView: it reads the participation
the worker cookie names (annotation.web.worker_cookie.load_worker_state) in one
statement, refuses unsafe methods without the CSRF token, answers JSON whatever
``Accept`` says, and never lets a worker's answers be cached.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from django.http.multipartparser import MultiPartParserError
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import CSRFCheck
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response as JSONResponse
from rest_framework.views import APIView

from annotation.api import errors
from annotation.api.parsers import SessionJSONParser
from annotation.models import Participation
from annotation.services.admission import closing
from annotation.services.session.answers import AnswerError, InvalidAnswer
from annotation.services.session.worker_sql import WorkerState
from annotation.services.texts import languages
from annotation.web.worker_cookie import load_worker_state

logger = logging.getLogger(__name__)


class HasWorkerSession(BasePermission):
    """The worker cookie names a participation; the view has read it (``WorkerSessionView.worker``)."""

    message = _("Open the study's link from your crowd platform first (no worker session).")
    code = "no_session"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(view, WorkerSessionView) and view.worker is not None


class JSONAlways(DefaultContentNegotiation):
    """The session API answers JSON whatever the Accept header says (one renderer: nothing to choose)."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def _no_view(request: HttpRequest) -> HttpResponseBase:
    raise AssertionError("the CSRF check is only asked for its verdict: there is no view to call")


class WorkerSessionView(APIView):
    authentication_classes: list = []
    permission_classes = [HasWorkerSession]
    parser_classes = [SessionJSONParser]  # anything else is 415; nesting and size limited (parsers)
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JSONAlways
    # What the request read at its start; its ``step`` holds only until the request writes.
    worker: WorkerState | None = None
    # Django's request, for the helpers that take one (DRF's Request keeps it only under a private name).
    http_request: HttpRequest

    def setup(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        super().setup(request, *args, **kwargs)
        self.http_request = request

    @property
    def session(self) -> WorkerState:
        """What the request read at its start, once HasWorkerSession has let it through."""
        assert self.worker is not None, "HasWorkerSession lets no request without a worker session through"
        return self.worker

    @property
    def participation(self) -> Participation:
        """The session's participation (the views run only once HasWorkerSession has let them)."""
        return self.session.participation

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method not in SAFE_METHODS:
            # As DRF's SessionAuthentication checks it: outside the middleware chain, with no view (so no
            # csrf_exempt); CSRFCheck answers the reason of a refusal instead of a response.
            try:
                reason = CSRFCheck(_no_view).process_view(self.http_request, _no_view, (), {})
            except MultiPartParserError:  # Django reads a form body for its token: a broken one is no JSON either
                raise exceptions.UnsupportedMediaType(request.content_type) from None
            if reason:
                raise exceptions.PermissionDenied(f"CSRF failed: {reason}", code="csrf_failed")
        self.worker = load_worker_state(self.http_request)
        # The study's language for this request's messages and texts (no query: the study came with the read).
        languages.activate_for_study(self.http_request, self.worker.participation.study if self.worker else None)
        super().initial(request, *args, **kwargs)

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], JSONResponse | None]:
        return errors.exception_handler  # the API's one error shape, whatever the settings name

    def handle_exception(self, exc: Exception) -> JSONResponse:
        if isinstance(exc, AnswerError | closing.StudyClosed):
            self.log_refusal(exc)
        return super().handle_exception(exc)  # a service's refusal is answered by errors.exception_handler

    def log_refusal(self, exc: AnswerError | closing.StudyClosed) -> None:
        # Debug only: refusals are routine (double clicks, stale pages). The code, never the answer's text.
        # The participation's number, never the worker's platform id: logs keep no identifiers
        # (docs/participants.md), and the number leads to the worker in the admin.
        if self.worker is None or not logger.isEnabledFor(logging.DEBUG):
            return
        participation = self.worker.participation
        logger.debug(
            "refused %s %s: %s (participation %s)", self.request.method, self.request.path, exc.code, participation.pk
        )

    def finalize_response(self, request: Request, response: JSONResponse, *args: Any, **kwargs: Any) -> JSONResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        add_never_cache_headers(response)  # a worker's items and answers are never cached
        return response

    def body(self) -> dict[str, Any]:
        data = self.request.data
        if not isinstance(data, dict):
            raise InvalidAnswer("invalid_payload", gettext("Send a JSON object."))
        return data

    def item_id(self, data: dict[str, Any]) -> int:
        item = data.get("item")
        if isinstance(item, bool) or not isinstance(item, int):
            raise InvalidAnswer("invalid_item", gettext("item must be the integer id of your current item."))
        return item
