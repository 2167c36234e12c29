"""Two reference endpoints for the replay benchmark (bench/replay.py).

Mounted under /bench/ only when BENCH_NOOP_ENDPOINT=1:

- ``noop`` does nothing: the ceiling of the server stack itself (gunicorn,
  Django's middleware), so the submit throughput can be reported as a share
  of it.
- ``one_write`` makes the cheapest durable write there is, one UPDATE by
  primary key of a two-column table (``bench_floor``, which the harness
  creates; no other index, a HOT update) committed on its own: what any
  submission, which must store its answer in PostgreSQL before it answers,
  costs at the very least on the same stack. Its throughput bounds what share
  of the do-nothing ceiling a submission could ever reach.
"""

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

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
