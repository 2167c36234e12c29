"""The statements of a working crowd worker's requests, as SQL written once.

A worker request starts with one read (``worker_state``): the participation
with its condition, study, task and worker, the task's label words and the
first two pending rows of its step with their examples and the step's size.
A submission then writes once (``lock_response``): on PostgreSQL one
statement locks the answer, stores its spans and marks the next item shown;
on SQLite that is three statements, which the caller wraps in a transaction.

Compiled from ORM querysets, the read cost about 2 ms of Python per request
on the 2-core reference machine, more than the database took to run it
(bench/profile_session.py), so the SQL is assembled once per process from the
models' field lists. Rows become instances through ``Model.from_db`` after
the fields' database converters, and values go in through the fields' own
preparation, as the ORM does. The SQL runs on SQLite and PostgreSQL alike
(the tests run it on both). On PostgreSQL, psycopg prepares each statement on
the server once a connection has run it a few times (the database's
``prepare_threshold`` option), so it is not planned again on every request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper

from annotation.models import AnswerSpan, Condition, Participation, Response, Study, Worker
from tasks_app.models import Example, Label, Task

if TYPE_CHECKING:
    from django.db.models.expressions import Col

_M = TypeVar("_M", bound=models.Model)


@dataclass(frozen=True)
class StepHead:
    """Where a worker is in one step: its first pending items by position, with their examples."""

    phase: str
    current: Response | None = None  # None when nothing is pending: the step is done, or not laid out yet
    next: Response | None = None  # the item after the current one; None when the current one is the last
    size: int | None = None  # the step's item count, read with the pending rows (None without them)


@dataclass(frozen=True)
class LabelText:
    """A task's label as the worker's texts use it (``tasks_app.texts.texts_for`` takes these or Labels)."""

    name: str
    definition: str
    example: str


@dataclass(frozen=True)
class WorkerState:
    """What a worker request starts from, read in one statement by ``worker_state``."""

    participation: Participation  # with its condition (and the condition's study), study, task and worker
    labels: tuple[LabelText, ...]  # the task's labels in their order (none for a span task)
    step: StepHead | None  # the step the participation's state works in; None outside training and test

    @property
    def label_names(self) -> frozenset[str]:
        return frozenset(label.name for label in self.labels)


class _Columns(Generic[_M]):
    """A model's concrete columns under a table alias, and the way back from a row slice to an instance."""

    def __init__(self, model: type[_M], alias: str) -> None:
        self.model = model
        fields = model._meta.concrete_fields
        self.field_names = [f.attname for f in fields]
        self.sql = ", ".join(f'{alias}."{f.column}"' for f in fields)
        self.aliased_sql = ", ".join(f'{alias}."{f.column}" AS {alias}_{f.column}' for f in fields)
        # The columns that have converters: (index, converters, the column expression they are called with).
        # Asked of the backend and of the column expression, as the ORM's compiler asks them; a column's own
        # converters are its field's (for a foreign key, its target field's too).
        self.converters: list[tuple[int, list[Callable[..., Any]], Col]] = []
        for i, f in enumerate(fields):
            column = f.get_col(alias)
            converters = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            if converters:
                self.converters.append((i, converters, column))

    def build(self, row: Sequence[Any], start: int, db: BaseDatabaseWrapper) -> tuple[_M, int]:
        """The instance made of ``row[start:]`` as read on ``db``, and where the next model's columns begin."""
        end = start + len(self.field_names)
        values = list(row[start:end])
        for i, converters, column in self.converters:
            value = values[i]
            if value is not None:  # no converter changes a NULL (nor does the ORM call them on one)
                for convert in converters:
                    value = convert(value, column, db)
                values[i] = value
        return self.model.from_db(db.alias, self.field_names, values), end


# --- Reads ------------------------------------------------------------------------------

PENDING_ROWS = 2  # the current item and the one after it: what a submission needs


@cache
def _pending_columns() -> tuple[_Columns[Response], _Columns[Example]]:
    return _Columns(Response, "r"), _Columns(Example, "e")


def _pending_select(phase: str) -> str:
    """The first pending rows of one participation's step by position, with their examples and the step's
    size; ``phase`` is SQL (a placeholder or an expression), the participation a placeholder."""
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
        f" ORDER BY r.position LIMIT {PENDING_ROWS}"
    )


def _step_head(phase: str, rows: Sequence[Sequence[Any]], start: int, db: BaseDatabaseWrapper) -> StepHead:
    """The step's head made of ``rows`` (at most PENDING_ROWS), whose pending-row columns begin at ``start``."""
    response_columns, example_columns = _pending_columns()
    items: list[Response] = []
    size: int | None = None
    for row in rows:
        response, end = response_columns.build(row, start, db)
        response.example, end = example_columns.build(row, end, db)
        items.append(response)
        size = row[end]
    current, following = [*items, None, None][:2]
    return StepHead(phase=phase, current=current, next=following, size=size)


@dataclass(frozen=True)
class _WorkerColumns:
    """The columns of the worker read's first models, in the order the statement selects them."""

    participation: _Columns[Participation]
    condition: _Columns[Condition]
    study: _Columns[Study]
    task: _Columns[Task]
    worker: _Columns[Worker]

    @property
    def sql(self) -> str:
        parts = (self.participation.sql, self.condition.sql, self.study.sql, self.task.sql, self.worker.sql)
        return ", ".join(parts)


@cache
def _worker_statement(phase_of_state: tuple[tuple[str, str], ...]) -> tuple[str, _WorkerColumns]:
    columns = _WorkerColumns(
        participation=_Columns(Participation, "p"),
        condition=_Columns(Condition, "c"),
        study=_Columns(Study, "s"),
        task=_Columns(Task, "t"),
        worker=_Columns(Worker, "w"),
    )
    cases = " ".join(f"WHEN '{state}' THEN '{phase}'" for state, phase in phase_of_state)
    phase = f"(SELECT CASE q.state {cases} END FROM {Participation._meta.db_table} q WHERE q.id = %s)"
    # The labels as JSON, each [position, name, definition, example] (put in order by the caller: SQLite
    # before 3.44 cannot order an aggregate).
    if connection.vendor == "postgresql":
        labels = "json_agg(json_build_array(l.position, l.name, l.definition, l.example))"
    else:
        labels = "json_group_array(json_array(l.position, l.name, l.definition, l.example))"
    # The pending rows are a derived table joined to the participation row (SQLite has no LATERAL), so
    # its rows repeat the participation's columns; outside a step it is empty and the LEFT JOIN gives NULLs.
    sql = (
        f"SELECT {columns.sql},"
        f" (SELECT {labels} FROM {Label._meta.db_table} l WHERE l.task_id = t.id),"
        f" x.* FROM {Participation._meta.db_table} p"
        f" JOIN {Condition._meta.db_table} c ON c.id = p.condition_id"
        f" JOIN {Study._meta.db_table} s ON s.id = p.study_id"
        f" JOIN {Task._meta.db_table} t ON t.id = p.task_id"
        f" JOIN {Worker._meta.db_table} w ON w.id = p.worker_id"
        f" LEFT JOIN ({_pending_select(phase)}) x ON 1 = 1"
        " WHERE p.id = %s ORDER BY x.r_position"
    )
    return sql, columns


def worker_state(pk: int, phase_of_state: Mapping[str, str]) -> WorkerState | None:
    """The participation ``pk`` as a worker request starts from it, or None if there is none.

    ``phase_of_state`` says which step each participation state works in
    (``annotation.protocol.states.PHASE_OF_STATE``).
    """
    sql, columns = _worker_statement(tuple(phase_of_state.items()))
    with connection.cursor() as cursor:
        cursor.execute(sql, [pk, pk, pk])
        rows = cursor.fetchall()
    if not rows:
        return None
    db = connections[DEFAULT_DB_ALIAS]  # the connection itself, not the per-attribute proxy
    participation, start = columns.participation.build(rows[0], 0, db)
    condition, start = columns.condition.build(rows[0], start, db)
    study, start = columns.study.build(rows[0], start, db)
    task, start = columns.task.build(rows[0], start, db)
    worker, start = columns.worker.build(rows[0], start, db)
    condition.study = study
    participation.condition, participation.study = condition, study
    participation.task, participation.worker = task, worker
    found = rows[0][start]  # JSON text on SQLite, already decoded on PostgreSQL
    found = json.loads(found) if isinstance(found, str) else found or ()
    labels = tuple(LabelText(name, definition, example) for _, name, definition, example in sorted(found))
    phase = phase_of_state.get(participation.state)
    step = None
    if phase is not None:
        # Without a pending row there is one row whose pending-row columns are NULL.
        step = _step_head(phase, [row for row in rows if row[start + 1] is not None], start + 1, db)
    return WorkerState(participation=participation, labels=labels, step=step)


@cache
def _step_statement() -> str:
    return _pending_select("%s")


def step_head(participation_id: int, phase: str) -> StepHead:
    """The first pending items of a participation's step, read now."""
    with connection.cursor() as cursor:
        cursor.execute(_step_statement(), [participation_id, phase])
        return _step_head(phase, cursor.fetchall(), 0, connections[DEFAULT_DB_ALIAS])


# --- Writes -----------------------------------------------------------------------------


def _column_field(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    """The field ``name`` of ``model``, one with a column (not a reverse relation)."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field):
        raise TypeError(f"{model.__name__}.{name} has no column")
    return field


def _prepared_values(model: type[models.Model], changes: Mapping[str, object]) -> list[Any]:
    return [_column_field(model, name).get_db_prep_save(value, connection) for name, value in changes.items()]


@cache
def _update_statement(model: type[models.Model], columns: tuple[str, ...], condition: str) -> str:
    assignments = ", ".join(f'"{_column_field(model, name).column}" = %s' for name in columns)
    return f'UPDATE {model._meta.db_table} SET {assignments} WHERE "id" = %s AND {condition}'


# The lock's guard takes 'pending' as a parameter, not a literal: with the literal, the predicate of the
# partial index response_pending is implied, and a generic plan made while the table was small (or never
# analysed) walked that whole index, every worker's pending rows, to find one id. With a parameter the
# only index that can serve is the primary key.
_PENDING = '"status" = %s'


def lock_is_one_statement() -> bool:
    """Whether ``lock_response`` is a single statement (atomic without a transaction around it)."""
    return connection.vendor == "postgresql"


@cache
def _span_columns() -> str:
    """The columns a locked answer's spans are inserted into: response, start, end, text, in that order."""
    return ", ".join(f'"{_column_field(AnswerSpan, name).column}"' for name in ("response", "start", "end", "text"))


def lock_response(
    pk: int,
    changes: Mapping[str, object],
    *,
    spans: Sequence[AnswerSpan] = (),
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
        cursor.execute(_lock_statement(tuple(changes)), params)
        locked, shown = cursor.fetchone()
    return locked == 1, shown == 1


@cache
def _lock_statement(columns: tuple[str, ...]) -> str:
    table, span_table = Response._meta.db_table, AnswerSpan._meta.db_table
    return (
        f'WITH locked AS ({_update_statement(Response, columns, _PENDING)} RETURNING "id"),'
        f" spans AS (INSERT INTO {span_table} ({_span_columns()})"
        ' SELECT locked."id", s.a, s.b, s.t FROM locked,'
        " unnest(%s::integer[], %s::integer[], %s::text[]) AS s (a, b, t)),"
        f' shown AS (UPDATE {table} SET "shown_at" = %s, "last_seen_at" = %s'
        ' WHERE "id" = %s AND "shown_at" IS NULL AND EXISTS (SELECT 1 FROM locked) RETURNING "id")'
        " SELECT (SELECT COUNT(*) FROM locked), (SELECT COUNT(*) FROM shown)"
    )


def _lock_only(pk: int, changes: Mapping[str, object]) -> bool:
    sql = _update_statement(Response, tuple(changes), _PENDING)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*_prepared_values(Response, changes), pk, Response.Status.PENDING])
        return cursor.rowcount == 1


def mark_response_shown(pk: int, at: datetime) -> bool:
    """Record when a response was first shown; False if it already was."""
    changes = {"shown_at": at, "last_seen_at": at}
    sql = _update_statement(Response, tuple(changes), '"shown_at" IS NULL')
    with connection.cursor() as cursor:
        cursor.execute(sql, [*_prepared_values(Response, changes), pk])
        return cursor.rowcount == 1


@cache
def _lay_out_statement(vendor: str) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    """The INSERT that lays out a step, and the fields whose defaults it takes as parameters.

    The rows come from three lists, one parameter each: arrays on PostgreSQL, a JSON array of
    [example, check, position] on SQLite. A field whose default is NULL is left out (its column is
    NULL in a new row), so no untyped NULL parameter meets a typed column.
    """
    varying = [_column_field(Response, name) for name in ("participation", "phase", "example", "attention_check")]
    varying.append(_column_field(Response, "position"))
    defaults = tuple(
        f
        for f in Response._meta.concrete_fields
        if f.attname != "id" and f not in varying and f.get_default() is not None
    )
    names = ", ".join(f'"{f.column}"' for f in (*varying, *defaults))
    constants = ", %s" * len(defaults)
    if vendor == "postgresql":
        rows = "unnest(%s::bigint[], %s::bigint[], %s::integer[]) AS u (example, check_id, position)"
    else:  # SQLite: WHERE true tells its parser that ON CONFLICT belongs to the INSERT
        rows = (
            "(SELECT json_extract(value, '$[0]') AS example, json_extract(value, '$[1]') AS check_id,"
            " json_extract(value, '$[2]') AS position FROM json_each(%s)) AS u WHERE true"
        )
    sql = (
        f"INSERT INTO {Response._meta.db_table} ({names})"
        f" SELECT %s, %s, u.example, u.check_id, u.position{constants} FROM {rows} ON CONFLICT DO NOTHING"
    )
    return sql, defaults


def insert_pending_rows(participation_id: int, phase: str, items: Sequence[tuple[int, int | None]]) -> None:
    """Lay out a step: one pending row per (example, attention check) at positions 0..n-1, with every other
    column at its field's default; rows that exist already (a racing request's) are left as they are.

    What ``bulk_create(ignore_conflicts=True)`` would write, in one statement with a handful of parameters
    and without a model instance per row: laying out a whole test set that way cost more Python than
    anything else a worker does.
    """
    sql, fields = _lay_out_statement(connection.vendor)
    defaults = [f.get_db_prep_save(f.get_default(), connection) for f in fields]
    if connection.vendor == "postgresql":
        rows: list[Any] = [[e for e, _ in items], [c for _, c in items], list(range(len(items)))]
    else:
        rows = [json.dumps([[e, c, position] for position, (e, c) in enumerate(items)])]
    with connection.cursor() as cursor:
        cursor.execute(sql, [participation_id, phase, *defaults, *rows])  # in the order of the placeholders


def insert_spans(spans: list[AnswerSpan]) -> None:
    """Store a locked answer's spans (their ids are not needed, so none are read back)."""
    if not spans:
        return
    rows = ", ".join(["(%s, %s, %s, %s)"] * len(spans))
    params = [value for span in spans for value in (span.response_id, span.start, span.end, span.text)]
    sql = f"INSERT INTO {AnswerSpan._meta.db_table} ({_span_columns()}) VALUES {rows}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
