"""The crowd worker's identity in their browser: a signed cookie that names their participation.

The entry link sets it, and the worker pages and the session API read it. It
is signed with SECRET_KEY (salted, timestamped, expiring with the session
cookie's age), so it can be neither forged nor altered, and it holds the
participation id only. Reading it needs no round trip to a session store, once
per answer on the worker's hot path; admins keep Django's server-side sessions.
``load_worker_state`` reads the participation it names, for the pages and the API alike.
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from annotation.services.session import steps
from annotation.services.session.worker_sql import WorkerState

COOKIE = "worker"
SALT = "annotation.worker"


def _signer() -> signing.TimestampSigner:
    return signing.get_cookie_signer(salt=SALT)


def signed_value(participation_id: int) -> str:
    """The cookie's value for a participation."""
    return _signer().sign(str(participation_id))


def read(value: str) -> int | None:
    """The participation a cookie value names; None if it is forged, altered or expired."""
    try:
        unsigned = _signer().unsign(value, max_age=settings.SESSION_COOKIE_AGE)
    except signing.BadSignature:  # SignatureExpired is one
        return None
    return int(unsigned) if unsigned.isdigit() else None


def remember(response: HttpResponse, participation_id: int) -> None:
    """Make this browser the participation's worker (replacing any earlier identity)."""
    response.set_cookie(
        COOKIE,
        signed_value(participation_id),
        max_age=settings.SESSION_COOKIE_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite=settings.SESSION_COOKIE_SAMESITE,
    )


def participation_id(request: HttpRequest) -> int | None:
    """The participation this browser works for; None without a valid, unexpired cookie."""
    value = request.COOKIES.get(COOKIE)
    return read(value) if value else None


def load_worker_state(request: HttpRequest) -> WorkerState | None:
    """The request's participation as the worker cookie names it, read in one statement; None without one."""
    named = participation_id(request)
    if named is None:
        return None
    return steps.read_worker_state(named)
