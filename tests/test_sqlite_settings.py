"""The embedded default's SQLite connections: WAL, synchronous=NORMAL, a busy timeout, BEGIN IMMEDIATE.

The suite's own test database is in memory, where SQLite has no write-ahead log (``PRAGMA
journal_mode=WAL`` answers ``memory``), so these tests open a file database in a subprocess with
the default settings (``DATABASE_URL=sqlite:///<tmp file>``) and ask the connection itself.
"""

import json
import sqlite3

from tests.test_settings import run_settings

PROBE = """
import json, django
django.setup()
from django.db import connection, transaction
statements = []
with connection.cursor() as cursor:
    pragmas = {name: cursor.execute(f"PRAGMA {name}").fetchone()[0]
               for name in ("journal_mode", "synchronous", "busy_timeout")}
connection.connection.set_trace_callback(statements.append)
with transaction.atomic():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS probe (n integer)")
        cursor.execute("INSERT INTO probe VALUES (1)")
print(json.dumps({"pragmas": pragmas, "statements": statements}))
"""


def probe(tmp_path, **env: str) -> dict:
    result = run_settings({"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", **env}, PROBE)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_sqlite_connections_use_wal_normal_sync_and_a_busy_timeout(tmp_path):
    pragmas = probe(tmp_path)["pragmas"]
    assert pragmas == {"journal_mode": "wal", "synchronous": 1, "busy_timeout": 20000}  # 1 = NORMAL, in ms
    # WAL is a property of the file: a plain connection opened afterwards finds it too
    assert sqlite3.connect(tmp_path / "db.sqlite3").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_sqlite_transactions_begin_immediate(tmp_path):
    statements = probe(tmp_path)["statements"]
    assert statements[0] == "BEGIN IMMEDIATE"
    assert statements[-1] == "COMMIT"


def test_the_journal_mode_can_be_set_for_file_systems_without_shared_memory(tmp_path):
    pragmas = probe(tmp_path, SQLITE_JOURNAL_MODE="delete", SQLITE_SYNCHRONOUS="full")["pragmas"]
    assert pragmas["journal_mode"] == "delete"
    assert pragmas["synchronous"] == 2  # FULL


def test_a_malformed_journal_mode_names_the_variable(tmp_path):
    result = run_settings({"DEBUG": "1", "SQLITE_JOURNAL_MODE": "fast"})
    assert result.returncode != 0
    assert "SQLITE_JOURNAL_MODE must be one of WAL, DELETE" in result.stderr
    result = run_settings({"DEBUG": "1", "SQLITE_SYNCHRONOUS": "off"})
    assert result.returncode != 0
    assert "SQLITE_SYNCHRONOUS must be NORMAL or FULL" in result.stderr


CONCURRENCY_PROBE = """
import json, threading, django
django.setup()
from django.db import connection, transaction
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE counter (n integer)")
    cursor.execute("INSERT INTO counter VALUES (0)")
errors = []

def increment():
    try:
        for _ in range(25):
            with transaction.atomic():  # read, then write: a lost update if two ran at once
                with connection.cursor() as cursor:
                    n = cursor.execute("SELECT n FROM counter").fetchone()[0]
                    cursor.execute("UPDATE counter SET n = %s", [n + 1])
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()

threads = [threading.Thread(target=increment) for _ in range(12)]
for t in threads: t.start()
for t in threads: t.join()
with connection.cursor() as cursor:
    count = cursor.execute("SELECT n FROM counter").fetchone()[0]
print(json.dumps({"engine": connection.settings_dict["ENGINE"], "count": count, "errors": errors}))
"""


def test_concurrent_read_then_write_transactions_wait_their_turn_and_lose_nothing(tmp_path):
    env = {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = run_settings(env, CONCURRENCY_PROBE)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["engine"] == "django.db.backends.sqlite3"  # Django's own backend, its public options
    assert seen["errors"] == []  # BEGIN IMMEDIATE and the busy timeout: no "database is locked"
    assert seen["count"] == 12 * 25  # every read-then-write transaction ran alone


def test_writing_requests_take_turns_on_a_sqlite_file_and_reads_never_wait(settings, db):
    import threading
    import time

    from django.db import connection
    from django.test import RequestFactory

    from annotation.db.sqlite_queue import SQLiteWriteQueueMiddleware, queues_writes

    if connection.vendor == "sqlite":
        assert not queues_writes()  # the suite's in-memory database: nothing to queue
    settings.SQLITE_QUEUE_WRITES = False
    assert not queues_writes()

    inside, most = [0], [0]
    guard = threading.Lock()

    def view(request):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)
        with guard:
            inside[0] -= 1
        return None

    middleware = SQLiteWriteQueueMiddleware(view)
    middleware.enabled = True  # as on a file database
    factory = RequestFactory()

    def run(method):
        threads = [threading.Thread(target=middleware, args=(getattr(factory, method)("/x/"),)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    run("post")
    assert most[0] == 1  # one writing request at a time
    most[0] = 0
    run("get")
    assert most[0] > 1  # reads run side by side
