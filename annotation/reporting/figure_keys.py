"""Keys under which a study's figures are kept between requests: each changes whenever the data behind them does.

A dashboard figure (a table, an agreement, an alpha) is a pure function of a study's recorded rows and
its settings. Rather than tracing every write path to invalidate it (and missing the one someone adds
later), the key is derived from the data itself, by one aggregate query over all the studies of a page.
Per study and per table, it reads figures that every write the application makes changes:

- a row added or removed: the rows' count and largest id (ids never come back: SQLite's AUTOINCREMENT,
  PostgreSQL's sequences);
- a response locked (exactly once, never unlocked) or given time (a heartbeat adds time to a pending
  response only): the count of pending responses and the sum of their ``active_ms``, read from the
  partial index of pending responses, so the query never reads the answered rows themselves (it stays
  a few milliseconds for a whole replication);
- a participation's state: only ``lifecycle.transition`` changes it, and it always records an event
  (the events' count and largest id); its activity (``lifecycle.touch``: the clock's now, never below
  the latest so far): the latest ``last_activity_at``; a withdrawal: the withdrawals and the withdrawn;
  a pseudonymisation (retention): the count of its workers whose id is a pseudonym;
- verdicts and Prolific actions: added, not changed, except a Prolific action's state, always through
  ``save()`` (the latest ``updated_at``);
- the study, its task and its conditions (edited in the admin): the study's and the task's rows as the
  page read them, the conditions' count, largest id and training sets; the tasks' model runs: their
  ids, names and shots (one more small query).

Two writes change a stored row in place without any of that: re-deriving the stored scores
(``human_performance --recompute --fix``) and an import that refreshes the gold answers of examples
already answered (``import_clues``). Each marks what it changed as updated (the studies', the task's
``updated_at``), which the key reads; a new write of that kind must do the same.

Two keys per study. ``finished`` covers what the analyses of the completed workers read (their answers,
the study's design): it does not change while other workers are still answering. ``recorded`` covers
every row that the table, the pay and the per-worker lines read, running workers' included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import CharField, Count, Func, Max, Model, OuterRef, Q, QuerySet, Subquery, Sum

from annotation.models import (
    AttentionDecision,
    ComprehensionAttempt,
    Condition,
    FilterDecision,
    IntegrityDecision,
    ModelRun,
    Participation,
    ParticipationEvent,
    ProlificAction,
    Response,
    Study,
    SurveyResponse,
    Withdrawal,
)
from annotation.reporting.figure_cache import digest
from annotation.services.state.pseudonyms import PREFIX

COMPLETED = Participation.State.COMPLETED


@dataclass(frozen=True)
class StudyKeys:
    finished: str  # the completed workers' answers and the study's design
    recorded: str  # every recorded row of the study that a table, the pay or a per-worker line reads


class _Text(Func):
    """An aggregate as text ("-" for none)."""

    template = "COALESCE(CAST(%(expressions)s AS TEXT), '-')"
    output_field = CharField()


class _Joined(Func):
    """Texts joined by "|", flat (``Concat`` nests a pair per part, and SQLite's parser overflows on a dozen)."""

    template = "(%(expressions)s)"
    arg_joiner = " || '|' || "
    output_field = CharField()


def _summary(rows: QuerySet, study_path: str, *aggregates: object) -> Subquery:
    """The ``aggregates`` of ``rows`` belonging to the outer study (``study_path`` leads from a row to it),
    as one text: one scalar subquery per table, not one per figure."""
    grouped = (
        rows.filter(**{study_path: OuterRef("pk")})
        .order_by()
        .values(study_path)
        .annotate(summary=_Joined(*(_Text(a) for a in aggregates)))
        .values("summary")
    )
    return Subquery(grouped[:1], output_field=CharField())


def _rows_and_ids(rows: QuerySet, study_path: str) -> Subquery:
    return _summary(rows, study_path, Count("id"), Max("id"))


# Each shared column gives the finished key its first FINISHED_PARTS parts (the completed workers' rows)
# and the recorded key all of them: one pass over the rows for both.
_OF_COMPLETED = Q(participation__state=COMPLETED)
_INTO_OR_OUT_OF_COMPLETED = Q(to_state=COMPLETED) | Q(from_state=COMPLETED)
_SHARED = {
    "k_answers": _summary(
        Response.all_objects.all(),
        "participation__study",
        Count("id", filter=_OF_COMPLETED),
        Max("id", filter=_OF_COMPLETED),
        Count("id"),
        Max("id"),
    ),
    "k_pending": _summary(
        Response.all_objects.filter(status=Response.Status.PENDING),
        "participation__study",
        Count("id", filter=_OF_COMPLETED),
        Sum("active_ms", filter=_OF_COMPLETED),
        Count("id"),
        Sum("active_ms"),
    ),
    "k_events": _summary(
        ParticipationEvent.objects.all(),
        "participation__study",
        Count("id", filter=_INTO_OR_OUT_OF_COMPLETED),
        Max("id", filter=_INTO_OR_OUT_OF_COMPLETED),
        Count("id"),
        Max("id"),
    ),
}
FINISHED_PARTS = {"k_answers": 2, "k_pending": 2, "k_events": 2}
_FINISHED = {
    # A condition's training set is bound when it is made (a change of split rebinds it).
    "k_conditions": _summary(Condition.objects.all(), "study", Count("id"), Max("id"), Sum("training_set_id")),
    "k_withdrawals": _rows_and_ids(Withdrawal.objects.all(), "study"),
}
_RECORDED = {
    "k_participations": _summary(
        Participation.all_objects.all(),
        "study",
        Count("id"),
        Max("id"),
        Max("last_activity_at"),
        Count("id", filter=Q(withdrawn_at__isnull=False)),
        Count("id", filter=Q(worker__external_id__startswith=PREFIX)),
    ),
    "k_filter_decisions": _rows_and_ids(FilterDecision.objects.all(), "participation__study"),
    "k_attention_decisions": _rows_and_ids(AttentionDecision.objects.all(), "participation__study"),
    "k_integrity_decisions": _rows_and_ids(IntegrityDecision.objects.all(), "participation__study"),
    "k_prolific_actions": _summary(
        ProlificAction.objects.all(), "participation__study", Count("id"), Max("id"), Max("updated_at")
    ),
    "k_attempts": _rows_and_ids(ComprehensionAttempt.objects.all(), "participation__study"),
    "k_surveys": _rows_and_ids(SurveyResponse.objects.all(), "participation__study"),
}
_COLUMNS = {**_SHARED, **_FINISHED, **_RECORDED}

# Ids no study has, standing for the studies asked about while the statement is compiled.
_PLACEHOLDER = -(2**40)


@lru_cache(maxsize=16)
def _statement(alias: str, count: int) -> tuple[str, tuple, tuple[int, ...]]:
    """The key query for ``count`` studies, compiled once per process (Django takes longer to compile its
    subqueries than the database takes to run them): its SQL, its parameters, and where in them the
    studies' ids go."""
    placeholders = [_PLACEHOLDER - i for i in range(count)]
    rows = Study.objects.using(alias).filter(pk__in=placeholders).annotate(**_COLUMNS).values("pk", *_COLUMNS)
    sql, params = rows.order_by().query.sql_with_params()
    positions = tuple(params.index(p) for p in placeholders)
    return sql, tuple(params), positions


def _aggregates(study_ids: list[int]) -> dict[int, dict[str, str | None]]:
    sql, template, positions = _statement(DEFAULT_DB_ALIAS, len(study_ids))
    params = list(template)
    for position, study_id in zip(positions, study_ids, strict=True):
        params[position] = study_id
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(sql, params)
        names = [column[0] for column in cursor.description]
        return {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def _row(instance: Model) -> tuple:
    """Every column of a row as read (a settings change in the admin changes it)."""
    return tuple(getattr(instance, f.attname) for f in instance._meta.concrete_fields)


def _finished_part(name: str, text: str | None) -> list[str] | None:
    return None if text is None else text.split("|")[: FINISHED_PARTS[name]]


def study_keys(studies: Sequence[Study]) -> dict[int, StudyKeys]:
    """Per study id, its two keys (two queries, however many studies and rows). ``studies`` with their
    task read (``select_related("task")``), as every page reads them."""
    if not studies:
        return {}
    rows = _aggregates(sorted({s.pk for s in studies}))
    runs: dict[int, list[tuple]] = {}
    for run in ModelRun.objects.filter(task__in={s.task_id for s in studies}).values_list(
        "task_id", "id", "name", "shots"
    ):
        runs.setdefault(run[0], []).append(run)
    keys = {}
    for study in studies:
        row = rows.get(study.pk, {})
        design = (_row(study), _row(study.task))
        shared = [_finished_part(name, row.get(name)) for name in _SHARED]
        finished = digest(design, shared, *(row.get(name) for name in _FINISHED))
        everything = [row.get(name) for name in (*_SHARED, *_RECORDED)]
        recorded = digest(finished, everything, sorted(runs.get(study.task_id, [])))
        keys[study.pk] = StudyKeys(finished=finished, recorded=recorded)
    return keys
