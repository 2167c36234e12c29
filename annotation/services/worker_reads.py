"""The two reads every request of a working crowd worker makes, as SQL written once.

Each worker request loads its participation (with condition, study, task and
worker) and the first pending rows of its step (with their examples). Built
as ORM querysets, compiling those two statements cost about 2 ms each on the
2-core reference machine (bench/profile_session.py), more than the database
took to answer them; on that machine it was the largest single cost of a
submission. Here the SQL is put together once per process from the models'
own field lists, and each row is turned back into model instances with the
fields' database converters, exactly as the ORM does. The statements are
plain SQL that SQLite and PostgreSQL both run, and the tests run them on both.
"""
from __future__ import annotations

from functools import cache

from django.db import connection, models

from annotation.models import Condition, Participation, Response, Study, Worker
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
        cursor.execute(sql, [pk])
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
        cursor.execute(sql, [participation_id, phase, Response.Status.PENDING, limit])
        rows = cursor.fetchall()
    result = []
    for row in rows:
        response, start = response_columns.build(row, 0)
        example, start = example_columns.build(row, start)
        response.example = example
        response.step_size = row[start]
        result.append(response)
    return result
