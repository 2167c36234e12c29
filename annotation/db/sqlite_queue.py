"""On the embedded SQLite default, the requests that write take turns, one at a time per process.

SQLite lets one writer in at a time, and a writer that finds the lock taken does not queue: SQLite's
busy handler sleeps and retries with growing pauses (up to 100 ms each), so under a dozen threads a
short write can wait hundreds of milliseconds for a lock that was free most of that time. Here the
threads of one server process wait on a lock instead, and the busy handler (the database's
``timeout``) is left for the rare meeting with another process. Python runs one thread at a time
anyway, so little concurrency is lost; reads (GET, HEAD, OPTIONS) never wait.

A GET that sometimes writes (the session API's GETs record activity, the time an item is first
shown, or move on a finished step) takes the turn around just that write, with ``write_turn()``;
its reads stay parallel. If the database stays locked past its busy timeout all the same, the
request answers 503 with Retry-After (annotation.db.errors).

Only a file database on SQLite takes part (never PostgreSQL, never an in-memory test database), and
``SQLITE_QUEUE_WRITES=0`` turns it off. Django's public middleware API, nothing of the backend's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_write_turn = threading.RLock()  # re-entrant: a writing request's own write_turn() passes through


def queues_writes() -> bool:
    """Whether writing requests take turns: the default database is an SQLite file (the one in use: the
    test runner's in-memory database does not take part) and SQLITE_QUEUE_WRITES is on."""
    connection = connections["default"]
    if connection.vendor != "sqlite" or not settings.SQLITE_QUEUE_WRITES:
        return False
    # The file in use, as the connection's settings name it (the test runner rewrites NAME): in memory, it
    # is ":memory:" or a "mode=memory" URI, as SQLite spells it.
    name = str(connection.settings_dict["NAME"] or "")
    return bool(name) and name != ":memory:" and "mode=memory" not in name


@contextmanager
def write_turn() -> Iterator[None]:
    """Take the process's write turn around a write made by a reading request (a no-op where writes do
    not take turns, and within a request that already holds it)."""
    if not queues_writes():
        yield
        return
    with _write_turn:
        yield


class SQLiteWriteQueueMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.enabled: bool | None = None  # decided at the first request, once the database is set up

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.enabled is None:
            self.enabled = queues_writes()
        if not self.enabled or request.method in SAFE_METHODS:
            return self.get_response(request)
        with _write_turn:
            return self.get_response(request)
