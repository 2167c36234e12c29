"""The replay benchmark's server-side parts (bench/replay.py), installed only by annotation.settings.bench.

It is that settings' URLconf: the production URLs plus two reference endpoints
under /bench/, tried first as before, so that their cost is comparable between
runs:

- ``noop`` does nothing: the ceiling of the server stack itself (gunicorn,
  Django's middleware), so the submit throughput can be reported as a share
  of it.
- ``one_write`` makes the cheapest durable write there is, one UPDATE by
  primary key of a two-column table (``bench_floor``, which the harness
  creates; no other index, a HOT update) committed on its own: what any
  submission, which must store its answer in PostgreSQL before it answers,
  costs at the very least on the same stack. Its throughput bounds what share
  of the do-nothing ceiling a submission could ever reach.

And ``QueryCountMiddleware``, outermost, after which every response carries
``X-DB-Queries``: the SQL statements the request ran on the default database
(transaction control such as SAVEPOINT included, since each is a round trip to
the server), ``X-Thread-CPU-us``: the CPU time the request's thread spent
inside Django (microseconds; waiting on the database or Redis is not CPU
time), and ``X-GC-us``: the time the garbage collector ran in the request's
thread (a collection holds the GIL: every other thread of the process waits
for it too).
"""

import gc
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

# --- Reference endpoints --------------------------------------------------------

FLOOR_TABLE = "bench_floor"
FLOOR_ROWS = 64  # one row per simulated browser (--concurrency is at most 64): no two wait on one row lock


def create_floor_table() -> None:
    """The table ``one_write`` updates, with FLOOR_ROWS rows (made anew)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {FLOOR_TABLE}")
        cursor.execute(f"CREATE TABLE {FLOOR_TABLE} (id integer PRIMARY KEY, n bigint NOT NULL)")
        cursor.executemany(f"INSERT INTO {FLOOR_TABLE} (id, n) VALUES (%s, 0)", [(i,) for i in range(FLOOR_ROWS)])


@csrf_exempt
def noop(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"ok", content_type="text/plain")


@csrf_exempt
@require_POST
def one_write(request: HttpRequest, row: int) -> HttpResponse:
    if row >= FLOOR_ROWS:
        return HttpResponse(b"no such row", status=404, content_type="text/plain")
    with connection.cursor() as cursor:  # autocommit: the UPDATE is its own transaction
        cursor.execute(f"UPDATE {FLOOR_TABLE} SET n = n + 1 WHERE id = %s", [row])
    return HttpResponse(b"ok", content_type="text/plain")


urlpatterns = [
    path("bench/noop/", noop, name="bench-noop"),
    path("bench/write/<int:row>/", one_write, name="bench-one-write"),
    path("", include("annotation.urls")),
]
handler500 = "annotation.web.unavailable.server_error"  # as annotation.urls (the root URLconf names the handler)

# --- Instrumentation --------------------------------------------------------------

_gc = threading.local()  # per thread: when the running collection started, and the time collected so far


def _time_collections(phase: str, info: dict) -> None:
    if phase == "start":
        _gc.started = time.perf_counter_ns()
    else:
        _gc.total = getattr(_gc, "total", 0) + time.perf_counter_ns() - _gc.started


class QueryCountMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        if _time_collections not in gc.callbacks:
            gc.callbacks.append(_time_collections)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.thread_time_ns()
        collected = getattr(_gc, "total", 0)
        count = 0

        def counter(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            response = self.get_response(request)
        response["X-DB-Queries"] = str(count)
        response["X-Thread-CPU-us"] = str((time.thread_time_ns() - started) // 1000)
        response["X-GC-us"] = str((getattr(_gc, "total", 0) - collected) // 1000)
        return response
