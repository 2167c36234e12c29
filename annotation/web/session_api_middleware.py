"""Django middleware that the worker's session API does without; every other request runs it as usual.

The session API (/api/session/) names the worker by a signed cookie and answers JSON
(annotation.api.worker_auth): it reads no server-side session, no signed-in user and no messages. Most
of a study's requests are that API's, so these pass its requests straight through; the pages, the admin
and the researchers' API keep all of them. CSRF, security headers, CSP, X-Frame-Options (which Django's
deployment check looks for by name), the locale and the SQLite write turns stay on every request.
"""

from __future__ import annotations

from collections.abc import Awaitable

from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.http import HttpRequest, HttpResponseBase
from django.utils.deprecation import MiddlewareMixin

SESSION_API = "/api/session/"


class _NotOnTheSessionAPI(MiddlewareMixin):
    """Put before a Django middleware: the request passes straight through on the worker's session API."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        # Under ASGI get_response is a coroutine function: its awaitable is handed on, as Django's own do.
        if request.path_info.startswith(SESSION_API):
            return self.get_response(request)
        return super().__call__(request)


class SessionMiddleware(_NotOnTheSessionAPI, sessions.SessionMiddleware):
    pass


class AuthenticationMiddleware(_NotOnTheSessionAPI, auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(_NotOnTheSessionAPI, messages.MessageMiddleware):
    pass
