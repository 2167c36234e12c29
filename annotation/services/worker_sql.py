"""The statements every request of a working crowd worker runs, as SQL written once.

Each worker request loads its participation (with condition, study, task and
worker, the task's label words and the first pending rows of its step with
their examples) in one statement; a submission then locks its row, stores its
spans and marks the next item shown, in one statement on PostgreSQL.
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
import json
import re
import weakref
from datetime import datetime
from functools import cache

from django.db import connection, models
from django.db.models.base import ModelState

from annotation.models import AnswerSpan, Condition, Participation, Response, Study, Worker
from tasks_app.models import Example, Label, Task

# Which step each state works in (steps.phase_for reads it too: steps imports this module).
PHASE_OF_STATE = {Participation.State.TRAINING: Response.Phase.TRAINING, Participation.State.TEST: Response.Phase.TEST}


class _Columns:
    """A model's concrete columns under a table alias, and the way back from a row slice to an instance."""

    def __init__(self, model: type[models.Model], alias: str):
        self.model = model
        fields = model._meta.concrete_fields
        self.attnames = [f.attname for f in fields]
        self.sql = ", ".join(f'{alias}."{f.column}"' for f in fields)
        self.aliased_sql = ", ".join(f'{alias}."{f.column}" AS {alias}_{f.column}' for f in fields)
        # The columns that have converters: (index, converters, the column expression they are called with).
        self.converters = []
        for i, f in enumerate(fields):
            column = f.get_col(alias)
            converters = connection.ops.get_db_converters(column) + f.get_db_converters(connection)
            if converters:
                self.converters.append((i, converters, column))

    def build(self, row: tuple, start: int) -> tuple[models.Model, int]:
        """The instance made of ``row[start:]``, and where the next model's columns begin."""
        end = start + len(self.attnames)
        values = list(row[start:end])
        for i, converters, column in self.converters:
            for convert in converters:
                values[i] = convert(values[i], column, connection)
        # What Model.from_db does, without Model.__init__'s per-field descriptor work: these models
        # define no __init__, no init signals and no properties over their columns (tested against
        # the ORM's instances field by field).
        instance = self.model.__new__(self.model)
        instance.__dict__.update(zip(self.attnames, values))
        instance._state = ModelState()
        instance._state.adding, instance._state.db = False, connection.alias
        return instance, end


# The PostgreSQL connections (the driver's own objects) each statement is prepared on, by name.
_prepared: dict[str, weakref.WeakSet] = {}


@cache
def _statement_name(sql: str) -> str:
    return "worker_" + hashlib.sha1(sql.encode()).hexdigest()[:20]  # the same in every thread and process


def _run(cursor, sql: str, params: list) -> None:
    """Execute ``sql`` (with %s placeholders); on PostgreSQL as a statement prepared once per connection.

    With server-side binding (the settings' default for psycopg 3) the driver prepares the statement
    itself once a connection has run it ``prepare_threshold`` times. The manual PREPARE/EXECUTE below
    cannot run there: EXECUTE takes no bind parameters, and psycopg answers a rollback with
    DEALLOCATE ALL, which would drop statements it did not prepare. It stays for client-side binding.
    """
    if connection.vendor != "postgresql" or connection.settings_dict["OPTIONS"].get("server_side_binding"):
        cursor.execute(sql, params)
        return
    name = _statement_name(sql)
    raw = connection.connection  # a new connection (after a reconnect) prepares anew
    done = _prepared.setdefault(name, weakref.WeakSet())
    if raw not in done:
        numbered = iter(range(1, sql.count("%s") + 1))
        cursor.execute(f"PREPARE {name} AS " + re.sub("%s", lambda _: f"${next(numbered)}", sql))
        done.add(raw)
    cursor.execute(f"EXECUTE {name} ({', '.join(['%s'] * len(params))})", params)


PENDING_PREFETCH = 2  # the current item and the one after it: what a submission needs


@cache
def _pending_columns() -> tuple[_Columns, _Columns]:
    return _Columns(Response, "r"), _Columns(Example, "e")


def _pending_select(*, phase: str, limit: str) -> str:
    """The first pending rows of one participation's step by position, with their examples and the step's
    size; ``phase`` and ``limit`` are SQL (placeholders or expressions), the participation a placeholder."""
    response, example = _pending_columns()
    table = Response._meta.db_table
    # The step's size is its last position + 1: written as ORDER BY ... DESC LIMIT 1, it is one backward
    # probe of the unique (participation, phase, position) index whatever the statistics say (MAX() was
    # planned as a walk over all the participation's rows on a freshly filled table).
    return (
        f"SELECT {response.aliased_sql}, {example.aliased_sql},"
        f" (SELECT n.position FROM {table} n WHERE n.participation_id = r.participation_id"
        f" AND n.phase = r.phase ORDER BY n.position DESC LIMIT 1) + 1 AS step_size"
        f" FROM {table} r JOIN {Example._meta.db_table} e ON e.id = r.example_id"
        f" WHERE r.participation_id = %s AND r.status = 'pending' AND r.phase = {phase}"
        f" ORDER BY r.position LIMIT {limit}"
    )


def _pending_row(row: tuple, start: int) -> Response:
    """The response (with ``example`` and ``step_size``) whose columns begin at ``row[start]``."""
    response_columns, example_columns = _pending_columns()
    response, start = response_columns.build(row, start)
    response.example, start = example_columns.build(row, start)
    response.step_size = row[start]
    return response


@cache
def _participation_statement() -> tuple[str, tuple[_Columns, ...]]:
    parts = (
        _Columns(Participation, "p"),
        _Columns(Condition, "c"),
        _Columns(Study, "s"),
        _Columns(Task, "t"),
        _Columns(Worker, "w"),
    )
    phase_of_state = " ".join(f"WHEN '{state}' THEN '{phase}'" for state, phase in PHASE_OF_STATE.items())
    phase = f"(SELECT CASE q.state {phase_of_state} END FROM {Participation._meta.db_table} q WHERE q.id = %s)"
    label_names = "json_agg" if connection.vendor == "postgresql" else "json_group_array"
    # One round trip for what every worker request starts with: the participation and its relations,
    # the task's label words, and the first pending rows of the step its state is in (none outside a
    # step; the derived table is joined to every participation row, so its rows repeat the participation).
    sql = (
        f"SELECT {', '.join(part.sql for part in parts)},"
        f' (SELECT {label_names}(l."name") FROM {Label._meta.db_table} l WHERE l.task_id = t.id),'
        f" x.* FROM {Participation._meta.db_table} p"
        f" JOIN {Condition._meta.db_table} c ON c.id = p.condition_id"
        f" JOIN {Study._meta.db_table} s ON s.id = p.study_id"
        f" JOIN {Task._meta.db_table} t ON t.id = p.task_id"
        f" JOIN {Worker._meta.db_table} w ON w.id = p.worker_id"
        f" LEFT JOIN ({_pending_select(phase=phase, limit=str(PENDING_PREFETCH))}) x ON 1 = 1"
        " WHERE p.id = %s ORDER BY x.r_position"
    )
    return sql, parts


def participation(pk: int) -> Participation | None:
    """The participation with its condition, study, task and worker loaded, or None.

    The task carries ``label_names`` (its label words), and the participation ``pending_prefetch``:
    (phase, rows) with the first PENDING_PREFETCH pending rows of its current step, which
    ``steps.pending_items`` uses once instead of reading them again.
    """
    sql, parts = _participation_statement()
    with connection.cursor() as cursor:
        _run(cursor, sql, [pk, pk, pk])
        rows = cursor.fetchall()
    if not rows:
        return None
    instances, start = [], 0
    for part in parts:
        instance, start = part.build(rows[0], start)
        instances.append(instance)
    result, condition, study, task, worker = instances
    condition.study = study
    result.condition, result.study, result.task, result.worker = condition, study, task, worker
    names = rows[0][start]
    task.label_names = frozenset(json.loads(names) if isinstance(names, str) else names or ())
    # No pending row: one row whose derived-table columns are NULL.
    pending = [_pending_row(row, start + 1) for row in rows if row[start + 1] is not None]
    result.pending_prefetch = (PHASE_OF_STATE.get(result.state), pending)
    return result


@cache
def _pending_rows_statement() -> str:
    return _pending_select(phase="%s", limit="%s")


def pending_rows(*, participation_id: int, phase: str, limit: int) -> list[Response]:
    """The first ``limit`` pending rows of a step by position, each with its example and ``step_size``."""
    with connection.cursor() as cursor:
        _run(cursor, _pending_rows_statement(), [participation_id, phase, limit])
        return [_pending_row(row, 0) for row in cursor.fetchall()]


# --- Writes ---------------------------------------------------------------------------


def _prepared_values(model: type[models.Model], changes: dict) -> list:
    return [model._meta.get_field(name).get_db_prep_save(value, connection) for name, value in changes.items()]


@cache
def _update_statement(model: type[models.Model], columns: tuple[str, ...], condition: str) -> str:
    meta = model._meta
    assignments = ", ".join(f'"{meta.get_field(name).column}" = %s' for name in columns)
    return f'UPDATE {meta.db_table} SET {assignments} WHERE "id" = %s AND {condition}'


# The lock's guard takes 'pending' as a parameter, not a literal: with the literal, the predicate of the
# partial index response_pending is implied, and a generic plan made while the table was small (or never
# analysed) walked that whole index, every worker's pending rows, to find one id. With a parameter the
# only index that can serve is the primary key.
_PENDING = '"status" = %s'


def lock_is_one_statement() -> bool:
    """Whether ``lock_response`` is a single statement (atomic without a transaction around it)."""
    return connection.vendor == "postgresql"


def lock_response(
    pk: int,
    changes: dict,
    *,
    spans: list[AnswerSpan] = (),
    show: tuple[int, datetime] | None = None,
) -> tuple[bool, bool]:
    """Lock a pending response: write ``changes``, store its ``spans`` and, with ``show=(next_pk, at)``,
    record when the next item was first shown. Returns (locked, next shown); nothing is written
    unless the response was still pending.

    On PostgreSQL the three writes are one statement (data-modifying CTEs, the spans as arrays),
    so a submission costs one round trip to the server instead of three.
    """
    if not lock_is_one_statement():
        locked = _lock_only(pk, changes)
        if locked:
            insert_spans(list(spans))
        return locked, bool(locked and show and mark_response_shown(*show))
    sql = _lock_statement(tuple(changes))
    next_pk, shown_at = show or (None, None)
    params = [
        *_prepared_values(Response, changes),
        pk,
        Response.Status.PENDING,
        [span.start for span in spans],
        [span.end for span in spans],
        [span.text for span in spans],
        shown_at,
        shown_at,
        next_pk,
    ]
    with connection.cursor() as cursor:
        _run(cursor, sql, params)
        locked, shown = cursor.fetchone()
    return locked == 1, shown == 1


@cache
def _lock_statement(columns: tuple[str, ...]) -> str:
    table, span = Response._meta.db_table, AnswerSpan._meta
    span_columns = ", ".join(f'"{span.get_field(name).column}"' for name in ("response", "start", "end", "text"))
    return (
        f'WITH locked AS ({_update_statement(Response, columns, _PENDING)} RETURNING "id"),'
        f" spans AS (INSERT INTO {span.db_table} ({span_columns})"
        ' SELECT locked."id", s.a, s.b, s.t FROM locked,'
        " unnest(%s::integer[], %s::integer[], %s::text[]) AS s (a, b, t)),"
        f' shown AS (UPDATE {table} SET "shown_at" = %s, "last_seen_at" = %s'
        ' WHERE "id" = %s AND "shown_at" IS NULL AND EXISTS (SELECT 1 FROM locked) RETURNING "id")'
        " SELECT (SELECT COUNT(*) FROM locked), (SELECT COUNT(*) FROM shown)"
    )


def _lock_only(pk: int, changes: dict) -> bool:
    sql = _update_statement(Response, tuple(changes), _PENDING)
    with connection.cursor() as cursor:
        _run(cursor, sql, [*_prepared_values(Response, changes), pk, Response.Status.PENDING])
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
