"""The crowd worker's identity in their browser: a signed cookie that names their participation.

The entry link sets it, and the worker pages and the session API read it. It
is signed with SECRET_KEY (salted, timestamped, expiring with the session
cookie's age), so it can be neither forged nor altered, and it holds the
participation id only. Reading it needs no round trip to a session store, once
per answer on the worker's hot path; admins keep Django's server-side sessions.
"""
from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

COOKIE = "worker"
SALT = "annotation.worker"


def signed_value(participation_id: int) -> str:
    """The cookie's value for a participation (what ``HttpResponse.set_signed_cookie`` would store)."""
    return signing.get_cookie_signer(salt=COOKIE + SALT).sign(str(participation_id))


def remember(response: HttpResponse, participation_id: int) -> None:
    """Make this browser the participation's worker (replacing any earlier identity)."""
    response.set_cookie(
        COOKIE, signed_value(participation_id), max_age=settings.SESSION_COOKIE_AGE,
        secure=settings.SESSION_COOKIE_SECURE, httponly=True, samesite=settings.SESSION_COOKIE_SAMESITE,
    )


def participation_id(request: HttpRequest) -> int | None:
    """The participation this browser works for; None without a valid, unexpired cookie."""
    value = request.get_signed_cookie(COOKIE, default=None, salt=SALT, max_age=settings.SESSION_COOKIE_AGE)
    return int(value) if value is not None and value.isdigit() else None
