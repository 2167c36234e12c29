"""Per-annotator scores and per-condition mean ± std, from SQL aggregates.

The database averages ``Response.score`` per participation (one GROUP BY over
the responses); only the few resulting rows per condition come into Python,
where the mean and standard deviation over annotators are taken with the
pure scorer's ``mean``/``std``. The skip policy is applied in the same query
(``policy_score``, generated from ``tasks_app.scoring.SKIP_RULES``): a skip's
stored score is the empty answer's, replaced by 0 or left out (NULL, which AVG
ignores) as the options say.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Avg, Case, Count, F, FloatField, Q, Sum, Value, When
from django.db.models.expressions import Combinable

from annotation.models import Participation, Response, Study
from annotation.reporting.options import MetricOptions
from annotation.services.money.pay import pay_lines
from annotation.services.verdicts import training_s1
from tasks_app import scoring
from tasks_app.models import Task
from tasks_app.scoring import mean, std

State = Participation.State
Status = Response.Status
Phase = Response.Phase

_TEST = Q(phase=Phase.TEST)
_LOCKED = ~Q(status=Status.PENDING)


def policy_score(options: MetricOptions) -> Combinable:
    """A response's score under the skip policy, as an SQL expression (NULL = left out of averages).

    Generated from the policy's row of ``scoring.SKIP_RULES``, as ``scoring.policy_score`` is in Python.
    """
    rule = scoring.skip_policy(options.skip_policy)
    if rule.keeps_stored:
        return F("score")
    skipped = Value(rule.value, output_field=FloatField())
    return Case(When(status=Status.SKIPPED, then=skipped), default=F("score"), output_field=FloatField())


@dataclass
class AnnotatorRow:
    participation_id: int
    study_slug: str
    task_slug: str
    shots: int
    platform: str
    worker_id: str
    state: str
    test_s1: float | None  # 0..1, per the options; None before any locked (and, excluding skips, answered) item
    test_items: int  # locked test items
    test_total: int  # test items laid out
    skips: int
    coverage: float | None  # share of locked test items that were not skipped
    training_s1: float | None  # annotation.services.verdicts.training_s1: None without a scored training item
    training_items: int
    active_ms: int
    paid_seconds: float
    pay: Decimal
    bonus: Decimal | None  # None while the study's posted reward is not set
    effective_hourly: Decimal | None
    below_rate: bool

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED

    # On the table's scale (0-100) and in minutes, for pages.
    @property
    def test_s1_pct(self) -> float | None:
        return None if self.test_s1 is None else self.test_s1 * 100

    @property
    def training_s1_pct(self) -> float | None:
        return None if self.training_s1 is None else self.training_s1 * 100

    @property
    def active_minutes(self) -> float:
        return self.active_ms / 60000

    @property
    def paid_minutes(self) -> float:
        return self.paid_seconds / 60


@dataclass
class ConditionSummary:
    """One cell: a task at a shot level, pooled over the selected studies."""

    task: Task
    shots: int
    studies: list[str] = field(default_factory=list)
    completed: list[AnnotatorRow] = field(default_factory=list)
    excluded: list[AnnotatorRow] = field(default_factory=list)
    abandoned: list[AnnotatorRow] = field(default_factory=list)
    in_progress: list[AnnotatorRow] = field(default_factory=list)
    mean: float | None = None  # 0..1
    std: float | None = None
    coverage: float | None = None  # mean share of non-skipped test items over the completed annotators

    @property
    def n(self) -> int:
        return len(self.completed)


def _aggregates(participation_ids: Sequence[int], options: MetricOptions) -> dict[int, dict]:
    if not participation_ids:
        return {}
    rows = (
        Response.objects.filter(participation_id__in=participation_ids)
        .values("participation_id")
        .annotate(
            test_avg=Avg(policy_score(options), filter=_TEST & _LOCKED),
            test_items=Count("id", filter=_TEST & _LOCKED),
            test_total=Count("id", filter=_TEST),
            skips=Count("id", filter=_TEST & Q(status=Status.SKIPPED)),
            training_avg=training_s1.aggregate(),
            training_items=Count("id", filter=training_s1.locked_training()),
            active_ms=Sum("active_ms"),
        )
        .order_by()
    )
    return {row["participation_id"]: row for row in rows}


def annotator_rows(*, studies: Iterable[Study], options: MetricOptions | None = None) -> list[AnnotatorRow]:
    """Every participation of the studies (all states), with its scores, time and pay."""
    options = options or MetricOptions()
    result: list[AnnotatorRow] = []
    for study in studies:
        participations = list(
            Participation.objects.filter(study=study)
            .select_related("condition", "worker")
            .order_by("condition__shots", "slot_index", "created_at")
        )
        aggregates = _aggregates([p.pk for p in participations], options)
        pay = pay_lines(study=study, participations=participations)
        for p in participations:
            agg = aggregates.get(p.pk, {})
            locked = agg.get("test_items", 0)
            skips = agg.get("skips", 0)
            test_s1 = agg.get("test_avg")
            line = pay[p.pk]
            result.append(
                AnnotatorRow(
                    participation_id=p.pk,
                    study_slug=study.slug,
                    task_slug=study.task.slug,
                    shots=p.condition.shots,
                    platform=p.worker.platform,
                    worker_id=p.worker.external_id,
                    state=p.state,
                    test_s1=test_s1,
                    test_items=locked,
                    test_total=agg.get("test_total", 0),
                    skips=skips,
                    coverage=(locked - skips) / locked if locked else None,
                    training_s1=agg.get("training_avg"),
                    training_items=agg.get("training_items", 0),
                    active_ms=agg.get("active_ms") or 0,
                    paid_seconds=line.seconds,
                    pay=line.amount,
                    bonus=line.bonus,
                    effective_hourly=line.effective_hourly,
                    below_rate=line.below_rate,
                )
            )
    return result


def _finite_or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def condition_summaries(
    *, studies: Sequence[Study], options: MetricOptions | None = None, rows: list[AnnotatorRow] | None = None
) -> list[ConditionSummary]:
    """One summary per (task, shots) over the studies; conditions of one task in several studies pool."""
    options = options or MetricOptions()
    rows = rows if rows is not None else annotator_rows(studies=studies, options=options)
    summaries: dict[tuple[int, int], ConditionSummary] = {}
    for study in studies:
        for condition in study.conditions.all():
            key = (study.task_id, condition.shots)
            summary = summaries.setdefault(key, ConditionSummary(task=study.task, shots=condition.shots))
            if study.slug not in summary.studies:
                summary.studies.append(study.slug)
    task_ids = {s.slug: s.task_id for s in studies}
    buckets = defaultdict(list)
    for row in rows:
        buckets[(task_ids[row.study_slug], row.shots)].append(row)
    for key, summary in summaries.items():
        for row in buckets.get(key, []):
            if row.state == State.COMPLETED:
                summary.completed.append(row)
            elif row.state == State.EXCLUDED:
                summary.excluded.append(row)
            elif row.state == State.ABANDONED:
                summary.abandoned.append(row)
            elif row.state == State.DECLINED:
                continue  # said no to the consent text: never worked, in no count
            else:
                summary.in_progress.append(row)
        values = [r.test_s1 for r in summary.completed if r.test_s1 is not None]
        summary.mean = _finite_or_none(mean(values))
        summary.std = _finite_or_none(std(values, ddof=options.ddof))
        summary.coverage = _finite_or_none(mean(r.coverage for r in summary.completed if r.coverage is not None))
    return sorted(summaries.values(), key=lambda s: (s.task.display_order, s.task.name, s.shots))
