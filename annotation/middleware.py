"""Opt-in instrumentation for the replay benchmark (never enabled by default).

With BENCH_COUNT_QUERIES=1 the settings put ``QueryCountMiddleware`` first, and
every response carries ``X-DB-Queries``: the SQL statements the request ran on
the default database (transaction control such as SAVEPOINT included, since
each is a round trip to the server), and ``X-Thread-CPU-us``: the CPU time the
request's thread spent inside Django (microseconds; waiting on the database
or Redis is not CPU time).
"""
import time

from django.db import connection


class QueryCountMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.thread_time_ns()
        count = 0

        def counter(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            response = self.get_response(request)
        response["X-DB-Queries"] = str(count)
        response["X-Thread-CPU-us"] = str((time.thread_time_ns() - started) // 1000)
        return response
