"""The statements every request of a working crowd worker runs, as SQL written once.

Each worker request loads its participation (with condition, study, task and
worker) and the first pending rows of its step (with their examples); a
submission then locks its row, stores its spans and marks the next item shown.
Built as ORM querysets, compiling these statements cost about 2 ms each for
the two reads and a few tenths of a millisecond for each write on the 2-core
reference machine (bench/profile_session.py, py-spy on the replay's server),
more than the database took to run them: the largest single cost of a
submission. Here the SQL is put together once per process from the models' own
field lists; rows are turned back into model instances with the fields'
database converters, and values go in through the fields' own preparation,
exactly as the ORM does. The SQL is plain enough for SQLite and PostgreSQL
alike (the tests run it on both); on PostgreSQL each statement is also
prepared once per connection, so that the server does not plan it again on
every request.
"""
from __future__ import annotations

import hashlib
import re
import weakref
from datetime import datetime
from functools import cache

from django.db import connection, models

from annotation.models import AnswerSpan, Condition, Participation, Response, Study, Worker
from tasks_app.models import Example, Task


class _Columns:
    """A model's concrete columns under a table alias, and the way back from a row slice to an instance."""

    def __init__(self, model: type[models.Model], alias: str):
        self.model = model
        fields = model._meta.concrete_fields
        self.attnames = [f.attname for f in fields]
        self.sql = ", ".join(f'{alias}."{f.column}"' for f in fields)
        self.converters = []  # per column: (converters, the column expression they are called with)
        for f in fields:
            column = f.get_col(alias)
            self.converters.append((connection.ops.get_db_converters(column) + f.get_db_converters(connection), column))

    def build(self, row: tuple, start: int) -> tuple[models.Model, int]:
        """The instance made of ``row[start:]``, and where the next model's columns begin."""
        end = start + len(self.attnames)
        values = list(row[start:end])
        for i, (converters, column) in enumerate(self.converters):
            for convert in converters:
                values[i] = convert(values[i], column, connection)
        return self.model.from_db(connection.alias, self.attnames, values), end


# The PostgreSQL connections (the driver's own objects) each statement is prepared on, by name.
_prepared: dict[str, weakref.WeakSet] = {}


def _run(cursor, sql: str, params: list) -> None:
    """Execute ``sql`` (with %s placeholders); on PostgreSQL as a statement prepared once per connection."""
    if connection.vendor != "postgresql":
        cursor.execute(sql, params)
        return
    name = "worker_" + hashlib.sha1(sql.encode()).hexdigest()[:20]  # the same in every thread and process
    raw = connection.connection  # a new connection (after a reconnect) prepares anew
    done = _prepared.setdefault(name, weakref.WeakSet())
    if raw not in done:
        numbered = iter(range(1, sql.count("%s") + 1))
        cursor.execute(f"PREPARE {name} AS " + re.sub("%s", lambda _: f"${next(numbered)}", sql))
        done.add(raw)
    cursor.execute(f"EXECUTE {name} ({', '.join(['%s'] * len(params))})", params)


@cache
def _participation_statement() -> tuple[str, tuple[_Columns, ...]]:
    parts = (
        _Columns(Participation, "p"), _Columns(Condition, "c"), _Columns(Study, "s"),
        _Columns(Task, "t"), _Columns(Worker, "w"),
    )
    sql = (
        f"SELECT {', '.join(part.sql for part in parts)} FROM {Participation._meta.db_table} p"
        f" JOIN {Condition._meta.db_table} c ON c.id = p.condition_id"
        f" JOIN {Study._meta.db_table} s ON s.id = p.study_id"
        f" JOIN {Task._meta.db_table} t ON t.id = p.task_id"
        f" JOIN {Worker._meta.db_table} w ON w.id = p.worker_id"
        " WHERE p.id = %s"
    )
    return sql, parts


def participation(pk: int) -> Participation | None:
    """The participation with its condition, study, task and worker loaded, or None."""
    sql, parts = _participation_statement()
    with connection.cursor() as cursor:
        _run(cursor, sql, [pk])
        row = cursor.fetchone()
    if row is None:
        return None
    instances, start = [], 0
    for part in parts:
        instance, start = part.build(row, start)
        instances.append(instance)
    result, condition, study, task, worker = instances
    condition.study = study
    result.condition, result.study, result.task, result.worker = condition, study, task, worker
    return result


@cache
def _pending_statement() -> tuple[str, _Columns, _Columns]:
    response, example = _Columns(Response, "r"), _Columns(Example, "e")
    table = Response._meta.db_table
    # The step's size is its last position + 1: one probe of the unique (participation, phase, position) index.
    sql = (
        f"SELECT {response.sql}, {example.sql},"
        f" (SELECT MAX(n.position) FROM {table} n WHERE n.participation_id = r.participation_id"
        f" AND n.phase = r.phase) + 1"
        f" FROM {table} r JOIN {Example._meta.db_table} e ON e.id = r.example_id"
        " WHERE r.participation_id = %s AND r.phase = %s AND r.status = %s"
        " ORDER BY r.position LIMIT %s"
    )
    return sql, response, example


def pending_rows(*, participation_id: int, phase: str, limit: int) -> list[Response]:
    """The first ``limit`` pending rows of a step by position, each with its example and ``step_size``."""
    sql, response_columns, example_columns = _pending_statement()
    with connection.cursor() as cursor:
        _run(cursor, sql, [participation_id, phase, Response.Status.PENDING, limit])
        rows = cursor.fetchall()
    result = []
    for row in rows:
        response, start = response_columns.build(row, 0)
        example, start = example_columns.build(row, start)
        response.example = example
        response.step_size = row[start]
        result.append(response)
    return result


# --- Writes ---------------------------------------------------------------------------


def _prepared_values(model: type[models.Model], changes: dict) -> list:
    return [model._meta.get_field(name).get_db_prep_save(value, connection) for name, value in changes.items()]


@cache
def _update_statement(model: type[models.Model], columns: tuple[str, ...], condition: str) -> str:
    meta = model._meta
    assignments = ", ".join(f'"{meta.get_field(name).column}" = %s' for name in columns)
    return f'UPDATE {meta.db_table} SET {assignments} WHERE "id" = %s AND {condition}'


def lock_response(pk: int, changes: dict) -> bool:
    """Write ``changes`` to a pending response (the lock); False if it is no longer pending."""
    sql = _update_statement(Response, tuple(changes), '"status" = \'pending\'')
    with connection.cursor() as cursor:
        _run(cursor, sql, [*_prepared_values(Response, changes), pk])
        return cursor.rowcount == 1


def mark_response_shown(pk: int, at: datetime) -> bool:
    """Record when a response was first shown; False if it already was."""
    changes = {"shown_at": at, "last_seen_at": at}
    sql = _update_statement(Response, tuple(changes), '"shown_at" IS NULL')
    with connection.cursor() as cursor:
        _run(cursor, sql, [*_prepared_values(Response, changes), pk])
        return cursor.rowcount == 1


def insert_spans(spans: list[AnswerSpan]) -> None:
    """Store a locked answer's spans (their ids are not needed, so none are read back)."""
    if not spans:
        return
    meta = AnswerSpan._meta
    names = ("response", "start", "end", "text")
    columns = ", ".join(f'"{meta.get_field(name).column}"' for name in names)
    rows = ", ".join(["(%s, %s, %s, %s)"] * len(spans))
    params = [value for span in spans for value in (span.response_id, span.start, span.end, span.text)]
    with connection.cursor() as cursor:
        _run(cursor, f"INSERT INTO {meta.db_table} ({columns}) VALUES {rows}", params)
