"""The training analyses as a table in the shape of the paper's appendix, in CSV, JSON, Markdown and LaTeX.

One row per (pair of few-shot groups, subset of training examples, annotator
group): the examples the two groups' sets share, judged by each group, and
the examples only the larger set has, judged by the larger group. Columns are
the tasks as in the main table; a cell is "mean ± std" (0-100, one decimal)
over the group's completed annotators, pooled over the selected studies of
the task. The number of examples behind a row differs by task (CoNLL's sets
count per question type), so it is given per cell in CSV and JSON and listed
under the Markdown and LaTeX tables.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import Any

from annotation.models import Study
from annotation.reporting.analyses import training_overlap_values
from annotation.reporting.formats import _html_comment, _md_escape, latex_escape, latex_float
from annotation.reporting.options import MetricOptions
from annotation.reporting.provenance import header_lines
from annotation.reporting.tables import MISSING, Cell, _groups, _ordered_tasks
from tasks_app.models import Task
from tasks_app.scoring import mean, std


@dataclass
class TrainingRow:
    small: int
    large: int
    shared: bool  # False: the examples only the larger set has
    group: int
    cells: list[Cell] = field(default_factory=list)
    examples: list[int | None] = field(default_factory=list)  # per task

    @property
    def subset_label(self) -> str:
        if self.shared:
            return f"shared by the {self.small}- and {self.large}-shot sets"
        return f"only in the {self.large}-shot set (not in the {self.small}-shot set)"

    @property
    def label(self) -> str:
        return f"{self.group}-shot annotators"


@dataclass
class TrainingTable:
    tasks: list[Task]
    groups: list[tuple[str, int]]
    rows: list[TrainingRow]
    options: MetricOptions

    @property
    def note(self) -> str:
        return (
            f"S1 on training examples (0-100); mean ± {self.options.spread} over each group's completed "
            "annotators; excluded and abandoned workers are not averaged in."
        )

    def examples_text(self) -> str:
        parts = []
        for row in self.rows:
            counts = [f"{task.name} {n}" for task, n in zip(self.tasks, row.examples, strict=True) if n]
            if counts and (row.shared and row.group == row.small or not row.shared):
                parts.append(f"{row.subset_label}: " + ", ".join(counts))
        return ("Examples per subset: " + "; ".join(parts) + ".") if parts else ""


def build_training_table(*, studies: list[Study], options: MetricOptions | None = None) -> TrainingTable:
    options = options or MetricOptions()
    tasks = _ordered_tasks(studies)
    pooled: dict[tuple[int, int, bool, int], dict[int, list[float]]] = {}
    examples: dict[tuple[int, int, bool, int], dict[int, int]] = {}
    for study in studies:
        for entry in training_overlap_values(study=study):
            key = (entry["small_shots"], entry["large_shots"], entry["subset"] == "shared", entry["group_shots"])
            pooled.setdefault(key, {}).setdefault(study.task_id, []).extend(entry["values"])
            examples.setdefault(key, {})[study.task_id] = entry["examples"]
    rows = []
    for key in sorted(pooled, key=lambda k: (k[0], k[1], not k[2], k[3])):
        small, large, shared, group = key
        cells = []
        for task in tasks:
            values = pooled[key].get(task.pk, [])
            if values:
                m, s = mean(values), std(values, ddof=options.ddof)
                cells.append(Cell(mean=m * 100, std=None if math.isnan(s) else s * 100, n=len(values)))
            else:
                cells.append(Cell())
        rows.append(TrainingRow(small, large, shared, group, cells, [examples[key].get(task.pk) for task in tasks]))
    return TrainingTable(tasks=tasks, groups=_groups(tasks), rows=rows, options=options)


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def training_csv(table: TrainingTable, header: dict[str, Any]) -> str:
    """A plain header-first table: the provenance (``header``) and the note go to the sidecar."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["pair", "subset", "annotators", "task", "examples", "mean", "std", "n", "cell"])
    for row in table.rows:
        for task, cell, n_examples in zip(table.tasks, row.cells, row.examples, strict=True):
            writer.writerow(
                [
                    f"{row.small} vs {row.large}",
                    row.subset_label,
                    row.group,
                    task.name,
                    "" if n_examples is None else n_examples,
                    _num(cell.mean),
                    _num(cell.std),
                    cell.n,
                    cell.text(missing=""),
                ]
            )
    return out.getvalue()


def training_json(table: TrainingTable, header: dict[str, Any]) -> str:
    rows = [
        {
            "pair": f"{row.small} vs {row.large}",
            "subset": row.subset_label,
            "shared": row.shared,
            "annotators_shots": row.group,
            "cells": {
                task.slug: {
                    "examples": n_examples,
                    "mean": None if cell.mean is None else round(cell.mean, 4),
                    "std": None if cell.std is None else round(cell.std, 4),
                    "n": cell.n,
                    "text": cell.text(),
                }
                for task, cell, n_examples in zip(table.tasks, row.cells, row.examples, strict=True)
            },
        }
        for row in table.rows
    ]
    body = {
        "tasks": [{"slug": t.slug, "name": t.name, "group": t.get_group_display()} for t in table.tasks],
        "rows": rows,
        "note": table.note,
    }
    return json.dumps({"meta": header, "training_table": body}, ensure_ascii=False, indent=2) + "\n"


def training_markdown(table: TrainingTable, header: dict[str, Any]) -> str:
    lines = _html_comment(header_lines(header, prefix="")) + [""]
    head = ["Training examples", "Annotators"] + [t.name for t in table.tasks]
    lines.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
    lines.append("|" + "|".join([":---", ":---"] + [":---:"] * len(table.tasks)) + "|")
    for row in table.rows:
        lines.append(
            "| " + " | ".join([_md_escape(row.subset_label), row.label] + [c.text() for c in row.cells]) + " |"
        )
    if not table.rows:
        lines.append("| " + " | ".join(["no few-shot conditions", MISSING] + [MISSING] * len(table.tasks)) + " |")
    lines += ["", f"_{table.note}_", ""]
    if table.examples_text():
        lines += [f"_{_md_escape(table.examples_text())}_", ""]
    return "\n".join(lines)


def _latex_subset(row: TrainingRow) -> str:
    return "shared" if row.shared else f"{row.large}-shot only"


def training_latex(table: TrainingTable, header: dict[str, Any]) -> str:
    """A booktabs table (no vertical rules: a group's columns are marked by the rule under its name). Each
    pair of sets has a heading row, so that the rows' labels stay short and the table fits a paper's page."""
    lines = header_lines(header, prefix="% ") + ["% Needs \\usepackage{booktabs} in the preamble."]
    opening, closing = latex_float(len(table.tasks) + 1)  # two label columns
    columns = 2 + len(table.tasks)
    lines += [*opening, r"\setlength{\tabcolsep}{3pt}", rf"\begin{{tabular}}{{ll{'c' * len(table.tasks)}}}"]
    lines.append(r"\toprule")
    group_cells, rules, column = [], [], 3
    for name, span in table.groups:
        group_cells.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(name)}}}")
        rules.append(rf"\cmidrule(lr){{{column}-{column + span - 1}}}")
        column += span
    lines.append(" & ".join(["", ""] + group_cells) + r" \\")
    lines.append(" ".join(rules))
    lines.append(" & ".join(["Examples", "Workers"] + [latex_escape(t.name) for t in table.tasks]) + r" \\")
    previous = None
    for row in table.rows:
        if (row.small, row.large) != previous:
            lines.append(r"\midrule")
            pair = f"The {row.small}- and {row.large}-shot sets"
            lines.append(rf"\multicolumn{{{columns}}}{{l}}{{\emph{{{pair}}}}} \\")
        previous = (row.small, row.large)
        cells = [
            "--" if c.mean is None else (f"{c.mean:.1f}" if c.std is None else f"{c.mean:.1f} $\\pm$ {c.std:.1f}")
            for c in row.cells
        ]
        lines.append(" & ".join([_latex_subset(row), f"{row.group}-shot"] + cells) + r" \\")
    if not table.rows:
        lines.append(rf"\midrule \multicolumn{{{columns}}}{{l}}{{no few-shot conditions}} \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{Human S1 on the training examples, by the workers of each shot count (Workers) on the "
        rf"examples two sets share or only the larger one has (Examples). {latex_escape(table.note)} "
        rf"{latex_escape(table.examples_text())}}}",
        *closing,
        "",
    ]
    return "\n".join(lines)


TRAINING_FORMATS = {
    "csv": training_csv,
    "json": training_json,
    "markdown": training_markdown,
    "latex": training_latex,
}
