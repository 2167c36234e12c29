"""Each cell three ways, and the cells with each exclusion rule lifted.

Tedeschi et al. (ACL 2023, "What's the Meaning of Superhuman Performance in Today's NLU?") ask for the best
individual beside the average and the majority vote, since "human performance" means any of the three.
``cell_aggregates`` gives, per task and shot level: the best completed worker's test S1, the mean (the
table's cell), and the majority vote of the completed workers per item (strict, and plurality with the
seeded tie-break: ``majority.condition_majority``).

``robustness`` recomputes each cell's mean with one exclusion rule lifted at a time: the workers that rule
excluded who had answered every test item are put back beside the completed ones (a worker excluded
before the test, by the comprehension check, the training filter before testing, or a study closed under
them, has no test score to put back). The reported cell is the one the rules made; the lifted one says how
much it depends on them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.models import Participation, Study
from annotation.reporting.majority import NONE, MajorityResult, condition_majority
from annotation.reporting.options import MetricOptions
from annotation.reporting.scores import AnnotatorRow, annotator_rows, condition_summaries

State = Participation.State
Kind = Participation.ExclusionKind
# The rules whose exclusions can leave a whole test behind them, in the order the statement lists them.
LIFTABLE = (Kind.TRAINING_FILTER, Kind.ATTENTION, Kind.INTEGRITY, Kind.ADMIN)


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


@dataclass(frozen=True)
class CellAggregates:
    task: str
    shots: int
    workers: int  # completed
    best: float | None  # 0-100
    mean: float | None
    majority: MajorityResult

    @property
    def majority_strict(self) -> float | None:
        return _pct(self.majority.accuracy)

    @property
    def majority_plurality(self) -> float | None:
        return _pct(self.majority.plurality_accuracy)

    def text(self) -> str:
        if not self.workers:
            return f"{self.task} {self.shots}-shot: no completed worker"
        return (
            f"{self.task} {self.shots}-shot ({self.workers} workers): best individual {self.best:.1f}, "
            f"mean {self.mean:.1f}, majority {_fmt(self.majority_strict)} (strict; "
            f"{self.majority.no_majority} items without a majority counted wrong), plurality "
            f"{_fmt(self.majority_plurality)} ({self.majority.ties} ties drawn)"
        )


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def cell_aggregates(*, studies: Sequence[Study], options: MetricOptions | None = None) -> list[CellAggregates]:
    """Best individual, mean and majority per (task, shots), the studies of one task pooled."""
    options = options or MetricOptions()
    result = []
    conditions = defaultdict(list)
    for study in studies:
        for condition in study.conditions.all():
            conditions[(study.task_id, condition.shots)].append(condition)
    for summary in condition_summaries(studies=studies, options=options):
        scores = [r.test_s1 for r in summary.completed if r.test_s1 is not None]
        vote = NONE
        for condition in conditions[(summary.task.pk, summary.shots)]:
            vote = vote.plus(condition_majority(condition=condition, options=options))
        result.append(
            CellAggregates(
                task=summary.task.name,
                shots=summary.shots,
                workers=summary.n,
                best=_pct(max(scores)) if scores else None,
                mean=_pct(summary.mean),
                majority=vote,
            )
        )
    return result


@dataclass(frozen=True)
class CellShift:
    task: str
    shots: int
    reported: float | None  # 0-100, the completed workers
    lifted: float | None  # 0-100, with the rule's exclusions put back
    put_back: int

    @property
    def moved(self) -> float | None:
        return None if self.reported is None or self.lifted is None else round(self.lifted - self.reported, 1)


@dataclass(frozen=True)
class RuleEffect:
    rule: str  # an ExclusionKind, or "all"
    label: str
    excluded: int  # workers the rule excluded
    put_back: int  # of them, those who had answered every test item
    cells: list[CellShift]

    def text(self) -> str:
        if not self.excluded:
            return f"{self.label}: nobody excluded by it"
        if not self.put_back:
            return f"{self.label}: {self.excluded} excluded, none with a whole test to put back"
        moves = "; ".join(
            f"{c.task} {c.shots}-shot {_fmt(c.reported)} → {_fmt(c.lifted)} ({c.moved:+.1f})"
            for c in self.cells
            if c.put_back and c.moved is not None
        )
        return f"{self.label}: {self.put_back} of {self.excluded} excluded put back: {moves}"


def _finished_test(row: AnnotatorRow) -> bool:
    return row.test_total > 0 and row.test_items == row.test_total and row.test_s1 is not None


def robustness(*, studies: Sequence[Study], options: MetricOptions | None = None) -> list[RuleEffect]:
    """Each liftable rule's effect on every cell, then all of them lifted at once."""
    options = options or MetricOptions()
    rows = annotator_rows(studies=studies, options=options)
    kinds = dict(
        Participation.objects.filter(study__in=studies, state=State.EXCLUDED).values_list("pk", "exclusion_kind")
    )
    task_of = {s.slug: (s.task_id, s.task.name) for s in studies}
    cells: dict[tuple[int, int], tuple[str, list[float]]] = {}
    excluded_by: dict[str, list[AnnotatorRow]] = defaultdict(list)
    for row in rows:
        task_id, name = task_of[row.study_slug]
        completed = cells.setdefault((task_id, row.shots), (name, []))[1]
        if row.state == State.COMPLETED and row.test_s1 is not None:
            completed.append(row.test_s1)
        elif row.state == State.EXCLUDED:
            excluded_by[kinds.get(row.participation_id, "")].append(row)
    labels = dict(Kind.choices)

    def effect(rule: str, label: str, excluded: list[AnnotatorRow]) -> RuleEffect:
        back: dict[tuple[int, int], list[float]] = defaultdict(list)
        for row in excluded:
            if _finished_test(row):
                back[(task_of[row.study_slug][0], row.shots)].append(row.test_s1 or 0.0)
        shifts = []
        for key, (name, completed) in sorted(cells.items(), key=lambda kv: (kv[1][0], kv[0][1])):
            lifted = completed + back.get(key, [])
            shifts.append(
                CellShift(
                    task=name,
                    shots=key[1],
                    reported=_pct(statistics.fmean(completed)) if completed else None,
                    lifted=_pct(statistics.fmean(lifted)) if lifted else None,
                    put_back=len(back.get(key, [])),
                )
            )
        return RuleEffect(rule, label, len(excluded), sum(len(v) for v in back.values()), shifts)

    effects = [effect(kind, str(labels[kind]), excluded_by.get(kind, [])) for kind in LIFTABLE]
    everyone = [row for kind in LIFTABLE for row in excluded_by.get(kind, [])]
    effects.append(effect("all", "Every rule lifted", everyone))
    return effects
