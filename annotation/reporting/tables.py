"""The human-performance table in the paper's shape.

Rows are shot levels (0, 10, 20, 30 and any other level a study has);
columns are tasks grouped as Sentence Classification, Named Entity
Recognition, Machine Reading Comprehension (then Other); a cell is
"mean ± std" of the completed annotators' S1 on a 0-100 scale with one
decimal. A cell no study provides stays missing (never zero). Model runs
uploaded for the tasks appear as extra rows, scored by the same code.

Each human cell carries a bootstrap interval and each model cell the paired
bootstrap interval of the human–model gap at its shot level (bootstrap.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotation.models import ModelRun, Response, Study
from annotation.reporting.bootstrap import Gap, IntervalOptions
from annotation.reporting.figure_cache import cell_interval, paired_gap
from annotation.reporting.item_scores import CellKey, CellScores, cell_item_scores
from annotation.reporting.options import MetricOptions
from annotation.reporting.predictions import model_item_scores, model_run_score
from annotation.reporting.scores import AnnotatorRow, ConditionSummary, annotator_rows, condition_summaries
from tasks_app.models import Task
from tasks_app.scoring import mean

PAPER_SHOTS = (0, 10, 20, 30)
GROUP_ORDER: list[str] = [Task.Group.SENTENCE_CLASSIFICATION, Task.Group.NER, Task.Group.MRC, Task.Group.OTHER]
MISSING = "–"
DEFAULT_INTERVALS = IntervalOptions()


@dataclass(frozen=True)
class Cell:
    mean: float | None = None  # 0-100
    std: float | None = None  # 0-100
    n: int = 0
    coverage: float | None = None  # 0..1, share of test items not skipped
    ci_low: float | None = None  # 0-100, the bootstrap interval
    ci_high: float | None = None

    @property
    def is_missing(self) -> bool:
        return self.mean is None

    @property
    def has_interval(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None

    def interval_text(self, missing: str = "") -> str:
        return f"[{self.ci_low:.1f}, {self.ci_high:.1f}]" if self.has_interval else missing

    def text(self, missing: str = MISSING) -> str:
        if self.mean is None:
            return missing
        if self.std is None:
            return f"{self.mean:.1f}"
        return f"{self.mean:.1f} ± {self.std:.1f}"

    def coverage_text(self, missing: str = MISSING) -> str:
        """The share of test items answered (not skipped), as a percentage with one decimal."""
        return missing if self.coverage is None else f"{self.coverage * 100:.1f}%"


@dataclass
class Row:
    label: str
    shots: int | None
    cells: list[Cell]
    is_model: bool = False
    model: str = ""  # a model row's run name (the label adds the shot level)


@dataclass
class Table:
    tasks: list[Task]
    groups: list[tuple[str, int]]  # (group label, number of task columns)
    rows: list[Row]
    options: MetricOptions
    studies: list[Study]
    summaries: list[ConditionSummary] = field(default_factory=list)
    annotators: list[AnnotatorRow] = field(default_factory=list)
    intervals: IntervalOptions | None = None  # None: built without intervals
    gaps: list[dict[str, Any]] = field(default_factory=list)  # human minus model, per model cell and human level

    @property
    def note(self) -> str:
        return self.options.describe()

    @property
    def interval_note(self) -> str:
        return self.intervals.describe() if self.intervals else ""

    @property
    def shows_coverage(self) -> bool:
        """With skips excluded, every rendering prints the coverage behind each cell."""
        return self.options.exclude_skips

    def human_rows(self) -> list[Row]:
        return [row for row in self.rows if not row.is_model]

    def model_rows(self) -> list[Row]:
        return [row for row in self.rows if row.is_model]

    def set_apart(self) -> list[dict[str, Any]]:
        """Per condition, who was not averaged in: excluded, abandoned and still-running workers."""
        result = []
        for s in self.summaries:
            if s.excluded or s.abandoned or s.in_progress:
                result.append(
                    {
                        "task": s.task.slug,
                        "shots": s.shots,
                        "completed": s.n,
                        **{
                            name: [f"{r.platform}:{r.worker_id}" for r in rows]
                            for name, rows in (
                                ("excluded", s.excluded),
                                ("abandoned", s.abandoned),
                                ("in_progress", s.in_progress),
                            )
                        },
                    }
                )
        return result

    def set_apart_text(self) -> str:
        parts = [
            f"{entry['task']} {entry['shots']}-shot: "
            + ", ".join(
                f"{len(entry[k])} {k.replace('_', ' ')}" for k in ("excluded", "abandoned", "in_progress") if entry[k]
            )
            for entry in self.set_apart()
        ]
        return ("Not averaged in: " + "; ".join(parts) + ".") if parts else ""

    def header(self) -> list[str]:
        return ["Shots"] + [t.name for t in self.tasks]

    def as_dict(self) -> dict[str, Any]:
        return {
            "groups": [{"name": name, "span": span} for name, span in self.groups],
            "tasks": [{"slug": t.slug, "name": t.name, "group": t.get_group_display()} for t in self.tasks],
            "rows": [
                {
                    "label": row.label,
                    "shots": row.shots,
                    "model": row.is_model,
                    "cells": {
                        task.slug: {
                            "mean": _round(c.mean),
                            "std": _round(c.std),
                            "n": c.n,
                            "text": c.text(),
                            "coverage": _round(c.coverage),
                            "ci_low": _round(c.ci_low),
                            "ci_high": _round(c.ci_high),
                        }
                        for task, c in zip(self.tasks, row.cells, strict=True)
                    },
                }
                for row in self.rows
            ],
            "note": self.note,
            "not_averaged": self.set_apart(),
            "intervals": self.intervals.as_dict() if self.intervals else None,
            "model_gaps": self.gaps,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _ordered_tasks(studies: list[Study]) -> list[Task]:
    tasks = {s.task_id: s.task for s in studies}.values()
    return sorted(
        tasks, key=lambda t: (GROUP_ORDER.index(t.group) if t.group in GROUP_ORDER else 99, t.display_order, t.name)
    )


def _groups(tasks: list[Task]) -> list[tuple[str, int]]:
    groups: list[tuple[str, int]] = []
    for task in tasks:
        label = task.get_group_display()
        if groups and groups[-1][0] == label:
            groups[-1] = (label, groups[-1][1] + 1)
        else:
            groups.append((label, 1))
    return groups


def _scale(value: float | None) -> float | None:
    return None if value is None else value * 100


def build_table(
    *,
    studies: list[Study],
    options: MetricOptions | None = None,
    include_models: bool = True,
    intervals: IntervalOptions | None = DEFAULT_INTERVALS,
    parts: TableParts | None = None,
) -> Table:
    """The table for any set of studies (their annotators pooled per task and shot level).

    ``intervals=None`` leaves the bootstrap out (no item-level read at all). ``parts``: what the table
    reads from the studies' rows, when the caller has it (the dashboard keeps it per study).
    """
    options = options or MetricOptions()
    if parts is None:
        parts = table_parts(studies, options, item_scores=bool(intervals), human=include_models)
    rows_by_annotator = parts.rows
    summaries = condition_summaries(studies=studies, options=options, rows=rows_by_annotator)
    tasks = _ordered_tasks(studies)
    by_key = {(s.task.pk, s.shots): s for s in summaries}
    item_scores = parts.item_scores if intervals else {}
    shots_levels = sorted(set(PAPER_SHOTS) | {s.shots for s in summaries})
    rows = []
    for shots in shots_levels:
        cells = []
        for task in tasks:
            summary = by_key.get((task.pk, shots))
            if summary is None or summary.mean is None:
                cells.append(Cell(n=summary.n if summary else 0))
            else:
                interval = cell_interval(item_scores.get((task.pk, shots), {}), intervals) if intervals else None
                cells.append(
                    Cell(
                        mean=_scale(summary.mean),
                        std=_scale(summary.std),
                        n=summary.n,
                        coverage=summary.coverage,
                        ci_low=_scale(interval.low) if interval else None,
                        ci_high=_scale(interval.high) if interval else None,
                    )
                )
        rows.append(Row(label=str(shots), shots=shots, cells=cells))
    gaps: list[dict[str, Any]] = []
    if include_models:
        model_rows, gaps = _model_rows(tasks, item_scores, intervals, parts.human_items)
        rows.extend(model_rows)
    return Table(
        tasks=tasks,
        groups=_groups(tasks),
        rows=rows,
        options=options,
        studies=studies,
        summaries=summaries,
        annotators=rows_by_annotator,
        intervals=intervals,
        gaps=gaps,
    )


def _model_label(name: str, shots: int | None) -> str:
    return f"{name} ({shots}-shot)" if shots is not None else name


@dataclass
class TableParts:
    """What a table reads from its studies' rows: every annotator's row, the per-item scores behind the
    intervals, and per task the test items answered (a model row is scored on them). Each study's are its
    own, so the parts of several studies are those of each, put together (``merged``)."""

    rows: list[AnnotatorRow]
    item_scores: dict[CellKey, CellScores]
    human_items: dict[int, set[int]]

    @classmethod
    def merged(cls, parts: list[TableParts]) -> TableParts:
        item_scores: dict[CellKey, CellScores] = {}
        human: dict[int, set[int]] = {}
        for part in parts:
            for key, by_participation in part.item_scores.items():
                item_scores.setdefault(key, {}).update(by_participation)  # a participation is in one study
            for task_id, items in part.human_items.items():
                human.setdefault(task_id, set()).update(items)
        return cls([row for part in parts for row in part.rows], item_scores, human)


def table_parts(
    studies: list[Study], options: MetricOptions, *, item_scores: bool = True, human: bool = True
) -> TableParts:
    """The studies' ``TableParts`` (``item_scores``/``human``: False leaves those reads out, empty)."""
    return TableParts(
        rows=annotator_rows(studies=studies, options=options),
        item_scores=cell_item_scores(studies=studies, options=options) if item_scores else {},
        human_items=human_items(studies) if human else {},
    )


def human_items(studies: list[Study]) -> dict[int, set[int]]:
    """Per task, the test items the studies' workers answered: the items a model row is scored on."""
    rows = (
        Response.objects.filter(participation__study__in=studies, phase=Response.Phase.TEST)
        .exclude(status=Response.Status.PENDING)
        .values_list("participation__study__task_id", "example_id")
        .distinct()
    )
    items: dict[int, set[int]] = {}
    for task_id, example_id in rows:
        items.setdefault(task_id, set()).add(example_id)
    return items


def _model_rows(
    tasks: list[Task],
    item_scores: dict[CellKey, CellScores],
    intervals: IntervalOptions | None,
    human_items: dict[int, set[int]],
) -> tuple[list[Row], list[dict[str, Any]]]:
    """One row per model and shot level, each cell scored on the items the humans of that task saw (the whole
    test set where no human has answered yet)."""
    runs = ModelRun.objects.filter(task__in=tasks).select_related("task").order_by("name", "shots", "created_at")
    grouped: dict[tuple[str, int | None], dict[int, Cell]] = {}
    gaps: list[dict[str, Any]] = []
    for run in runs:
        items = human_items.get(run.task_id)
        score = mean(model_item_scores(run, example_ids=items).values()) if items else model_run_score(run).s1
        grouped.setdefault((run.name, run.shots), {})[run.task_id] = Cell(mean=score * 100, n=1)
        if intervals:
            gaps.extend(_gaps(run, item_scores, intervals))
    rows = []
    for (name, shots), cells in grouped.items():
        rows.append(
            Row(
                label=_model_label(name, shots),
                shots=shots,
                cells=[cells.get(t.pk, Cell()) for t in tasks],
                is_model=True,
                model=name,
            )
        )
    return rows, gaps


def _gaps(run: ModelRun, item_scores: dict[CellKey, CellScores], intervals: IntervalOptions) -> list[dict[str, Any]]:
    """Human minus model at the run's shot level (every human level for a run without one)."""
    levels = sorted(shots for task_id, shots in item_scores if task_id == run.task_id)
    if run.shots is not None:
        levels = [s for s in levels if s == run.shots]
    if not levels:
        return []
    # The model on exactly the items the humans of each level answered (paired item by item).
    seen = {i for shots in levels for scores in item_scores[(run.task_id, shots)].values() for i in scores}
    model = model_item_scores(run, example_ids=seen)
    result = []
    for shots in levels:
        gap: Gap | None = paired_gap(item_scores[(run.task_id, shots)], model, intervals)
        if gap is None:
            continue
        result.append(
            {
                "model": _model_label(run.name, run.shots),
                "model_run": run.pk,
                "task": run.task.slug,
                "human_shots": shots,
                "items": gap.items,  # the items the humans at this level answered, the model scored on the same
                "paired_on": "the items the humans saw",
                "human": _round(gap.human * 100),
                "model_s1": _round(gap.model * 100),
                "gap": _round(gap.gap * 100),
                "ci_low": _round(gap.interval.low * 100) if gap.interval else None,
                "ci_high": _round(gap.interval.high * 100) if gap.interval else None,
            }
        )
    return result
