"""Opt-in instrumentation for the replay benchmark (never enabled by default).

With BENCH_COUNT_QUERIES=1 the settings put ``QueryCountMiddleware`` first, and
every response carries ``X-DB-Queries``: the SQL statements the request ran on
the default database (transaction control such as SAVEPOINT included, since
each is a round trip to the server), ``X-Thread-CPU-us``: the CPU time the
request's thread spent inside Django (microseconds; waiting on the database
or Redis is not CPU time), and ``X-GC-us``: the time the garbage collector ran
in the request's thread (a collection holds the GIL: every other thread of the
process waits for it too).
"""

import gc
import threading
import time

from django.db import connection

_gc = threading.local()  # per thread: when the running collection started, and the time collected so far


def _time_collections(phase: str, info: dict) -> None:
    if phase == "start":
        _gc.started = time.perf_counter_ns()
    else:
        _gc.total = getattr(_gc, "total", 0) + time.perf_counter_ns() - _gc.started


class QueryCountMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        if _time_collections not in gc.callbacks:
            gc.callbacks.append(_time_collections)

    def __call__(self, request):
        started = time.thread_time_ns()
        collected = getattr(_gc, "total", 0)
        count = 0

        def counter(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            response = self.get_response(request)
        response["X-DB-Queries"] = str(count)
        response["X-Thread-CPU-us"] = str((time.thread_time_ns() - started) // 1000)
        response["X-GC-us"] = str((getattr(_gc, "total", 0) - collected) // 1000)
        return response
