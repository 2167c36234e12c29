"""Which database errors mean "the database is away for now": 503 and a retry, not a 500.

While PostgreSQL is unreachable (restarted, failed over, out of connection
slots) every request that needs it fails; those requests answer 503
``database_unavailable`` with ``Retry-After`` (the API's JSON error shape under
/api/, a friendly page elsewhere: ``annotation.api.errors`` and
``annotation.web.unavailable``). This module only decides which errors those are.

Connection-level, so "unavailable": a ``django.db.OperationalError`` whose
cause (Django keeps the driver's error as ``__cause__``) is psycopg's
``OperationalError`` with

- no SQLSTATE: the client side could not connect or lost the server
  ("connection failed: ... Connection refused", "server closed the connection
  unexpectedly", "the connection is closed", "connection socket closed");
- SQLSTATE class 08 (connection exception), 57P01/57P02/57P03 (the server is
  shutting down, crashed, or is starting up) or 53300 (too many connections).

A connection refused for a wrong password or database name counts too: psycopg
reports failed connections without a SQLSTATE. The warning logged for every
such request carries the driver's message, which names the cause.

On SQLite, "database is locked" (SQLITE_BUSY: another writer held the lock
past the busy timeout) counts as well: the writer will finish, so it is a
moment to wait and retry, not a bug. Writing requests take turns within one
server process (annotation.db.sqlite_queue), so it takes another process (a
management command, a second server) holding the lock that long.

Everything else stays a 500, with its traceback in the log, because a retry
in five seconds will not cure it or because it is a bug to see:

- PostgreSQL's other OperationalErrors: deadlocks and serialization failures
  (class 40), a statement or lock timeout (57014, 55P03), a full disk or
  memory (53100, 53200);
- ``django.db.InterfaceError``: psycopg 3 raises it for misuse (a closed
  cursor, a missing adapter), never for a lost server, which is an
  OperationalError;
- SQLite's other errors: "no such table" is a missing migration, "unable to
  open database file" a path or permission to fix.
"""

from __future__ import annotations

import logging
import sqlite3

from django.db import OperationalError
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

CODE = "database_unavailable"
DETAIL = _(  # a worker may read it (the session API): translated when a response is made
    "The service is briefly unavailable (its database cannot be reached). Please try again in a few seconds; "
    "sending the same answer again is safe."
)
RETRY_AFTER_SECONDS = 5

# SQLSTATEs of a server that cannot serve now but will: shutting down, crashed, starting up, out of connection slots.
UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "53300"})

logger = logging.getLogger(__name__)

try:
    import psycopg
except ImportError:  # an SQLite-only installation: nothing is a connection-level error
    psycopg = None  # type: ignore[assignment]


def is_database_unavailable(exc: BaseException) -> bool:
    """True for a PostgreSQL error that means the server cannot be reached, or SQLite's "database is locked"
    (see the module's docstring)."""
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    if isinstance(cause, sqlite3.OperationalError):
        return (getattr(cause, "sqlite_errorname", None) or "").startswith("SQLITE_BUSY")  # set by sqlite3 only
    if psycopg is None or not isinstance(cause, psycopg.OperationalError):
        return False
    sqlstate = cause.sqlstate
    return sqlstate is None or sqlstate.startswith("08") or sqlstate in UNAVAILABLE_SQLSTATES


def log_unavailable(request: HttpRequest, exc: BaseException) -> None:
    """One line per refused request: an outage is expected to end, so no traceback."""
    logger.warning("database unavailable: %s %s answered 503 (%s)", request.method, request.path, exc)
