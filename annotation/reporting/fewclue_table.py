"""The human-performance table in FewCLUE's shape: Human rows, one column per task, and the average.

FewCLUE (Xu et al., 2021) reports one Human row of accuracies over nine tasks and their mean ("Score").
Here the row comes three times, from the same answers: per worker (mean ± std over each condition's completed
workers, as the CLUES table), by strict majority vote over the condition's workers (``majority``; the number
of items without a majority beside the figure) and by plurality with a seeded tie-break (the number of ties
beside it), since the README gives no tie rule; then the paper's row (``tasks_app.paper``) to compare with,
its six numbers that come from CLUE marked so. Every task is single-label classification, where S1 is
accuracy. The selected studies must be of FewCLUE's tasks and of one protocol, one condition per task.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from annotation.models import Condition, Study
from annotation.reporting.figure_cache import digest, remembered
from annotation.reporting.formats import _html_comment, _md_escape, latex_escape
from annotation.reporting.majority import NONE, MajorityResult, condition_majority
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.provenance import header_lines
from annotation.reporting.scores import AnnotatorRow, condition_summaries
from annotation.reporting.selection import benchmark_of
from annotation.services.session import samples
from tasks_app.models import Task
from tasks_app.paper import FEWCLUE_HUMAN, FEWCLUE_HUMAN_FROM_CLUE, FEWCLUE_HUMAN_SCORE

TASKS = list(FEWCLUE_HUMAN)  # the dataset folders, in the paper's column order
SLUG_PREFIX = "fewclue-"
MISSING = "–"
PER_WORKER, MAJORITY, PLURALITY, PAPER = "per_worker", "majority", "plurality", "paper"
ROW_LABELS = {
    PER_WORKER: "Human (per worker)",
    MAJORITY: "Human (majority vote)",
    PLURALITY: "Human (plurality, seeded tie-break)",
    PAPER: "Human (FewCLUE paper)",
}
# Who votes, by skip policy (tasks_app.scoring): a skip is a losing vote, a vote for the empty answer, or none.
VOTERS = {
    "zero": "more than half of the votes of the condition's completed workers (a skip is a vote that earns no credit)",
    "empty": "more than half of the votes of the condition's completed workers (a skip is a vote for no answer)",
    "exclude": "more than half of the votes cast (a skip is no vote)",
}
PLURALITY_NOTE = (
    "Plurality: the answer with the most votes; a tie is broken by a draw seeded with the condition's sample "
    "seed and the item's id, and the number of ties is given in brackets (FewCLUE's README states no tie rule)."
)
PAPER_NOTE = (
    "The paper's row: six of its nine numbers ({tasks}, marked CLUE) come from CLUE's human evaluations of those "
    "tasks, not from FewCLUE's own; in both FewCLUE sources the annotators discussed their answers after training, "
    "which this platform's workers do not."
)


def majority_note(skip_policy: str) -> str:
    voters = VOTERS.get(skip_policy, VOTERS["zero"])
    return (
        f"Majority vote: per test item, the answer given by {voters}; an item without one counts as wrong, and "
        "their number is given in brackets."
    )


@dataclass(frozen=True)
class FewClueCell:
    mean: float | None = None  # 0-100
    std: float | None = None  # 0-100, per-worker cells only
    n: int = 0  # workers
    items: int = 0  # majority cells: the items voted on
    no_majority: int | None = None  # majority cells: the items without a majority
    ties: int | None = None  # plurality cells: the items whose plurality was a tie
    source: str = ""  # the paper's cells: where the number comes from, when not FewCLUE's own evaluation

    def text(self, missing: str = MISSING) -> str:
        if self.mean is None:
            return missing
        text = f"{self.mean:.1f}" if self.std is None else f"{self.mean:.1f} ± {self.std:.1f}"
        if self.no_majority:
            text += f" ({self.no_majority} no majority)"
        if self.ties:
            text += f" ({self.ties} {'tie' if self.ties == 1 else 'ties'})"
        if self.source:
            text += f" ({self.source})"
        return text


@dataclass
class FewClueRow:
    kind: str
    cells: dict[str, FewClueCell]

    @property
    def label(self) -> str:
        return ROW_LABELS[self.kind]

    @property
    def score(self) -> float | None:
        """The mean of the nine tasks (FewCLUE's "Score"), once every task has a value."""
        if self.kind == PAPER:
            return FEWCLUE_HUMAN_SCORE
        values = [self.cells[t].mean for t in TASKS]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None) / len(values)

    def score_text(self, missing: str = MISSING) -> str:
        return missing if self.score is None else f"{self.score:.1f}"


@dataclass
class FewClueTable:
    rows: list[FewClueRow]
    options: MetricOptions
    studies: list[Study]
    protocol: str
    sample_notes: list[str] = field(default_factory=list)

    def header(self) -> list[str]:
        return [""] + [t.upper() for t in TASKS] + ["Score"]

    @property
    def note(self) -> str:
        protocol = Study.Protocol(self.protocol).label if self.protocol in Study.Protocol.values else self.protocol
        clue = ", ".join(t.upper() for t in FEWCLUE_HUMAN_FROM_CLUE)
        return (
            f"Accuracy (S1 on a single label is accuracy). {self.options.describe()} "
            f"{majority_note(self.options.skip_policy)} {PLURALITY_NOTE} "
            f"Score: the mean of the nine tasks, once all nine have a value. Protocol: {protocol}. "
            + PAPER_NOTE.format(tasks=clue)
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "benchmark": "fewclue",
            "protocol": self.protocol,
            "tasks": [{"slug": f"{SLUG_PREFIX}{t}", "name": t.upper()} for t in TASKS],
            "rows": [
                {
                    "label": row.label,
                    "kind": row.kind,
                    "cells": {
                        f"{SLUG_PREFIX}{t}": {
                            "mean": _round(c.mean),
                            "std": _round(c.std),
                            "n": c.n,
                            "items": c.items,
                            "no_majority": c.no_majority,
                            "ties": c.ties,
                            "source": c.source or None,
                            "text": c.text(),
                        }
                        for t, c in row.cells.items()
                    },
                    "score": _round(row.score),
                }
                for row in self.rows
            ],
            "note": self.note,
            "samples": self.sample_notes,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _pct(value: float | None) -> float | None:
    return None if value is None else value * 100


def _folder(study: Study) -> str:
    folder = study.task.slug.removeprefix(SLUG_PREFIX)
    if benchmark_of(study.task) != "fewclue":
        raise ReportError(f"study {study.slug} is of task {study.task.slug}, not one of FewCLUE's nine tasks")
    return folder


def _sample_note(condition: Condition, task: Task) -> str:
    """``samples.describe``, kept: it reads every example of the sets the condition's samples were drawn
    from (what the screen left out), a pure function of the condition, those sets (their names and
    items) and their examples, which only an import rewrites in place (it marks the task updated)."""
    sets = [samples.test_source(condition), condition.training_set]
    key = digest(
        [(f.attname, getattr(condition, f.attname)) for f in Condition._meta.concrete_fields],
        [(s.pk, s.name, samples.set_ids(s.pk)) if s is not None else None for s in sets],
        task.pk,
        task.updated_at,
    )
    return remembered("sample-note", key, lambda: samples.describe(condition))


def build_fewclue_table(
    *,
    studies: list[Study],
    options: MetricOptions | None = None,
    annotators: list[AnnotatorRow] | None = None,
    votes_of: Callable[[Condition], MajorityResult] | None = None,
) -> FewClueTable:
    """The FewCLUE table of the studies. ``annotators`` (their ``annotator_rows``) and ``votes_of`` (a condition's
    ``condition_majority`` under ``options``): when the caller has them (the dashboard keeps them)."""
    options = options or MetricOptions()
    vote = votes_of or (lambda condition: condition_majority(condition=condition, options=options))
    folders = {s.pk: _folder(s) for s in studies}
    protocols = sorted({s.protocol for s in studies})
    if len(protocols) > 1:
        raise ReportError(f"the studies follow different protocols ({', '.join(protocols)}): select one protocol's")
    per_worker: dict[str, FewClueCell] = {t: FewClueCell() for t in TASKS}
    seen: set[str] = set()
    for summary in condition_summaries(studies=studies, options=options, rows=annotators):
        folder = summary.task.slug.removeprefix(SLUG_PREFIX)
        if folder in seen:
            raise ReportError(f"{summary.task.slug} has conditions of several sizes: select one protocol's studies")
        seen.add(folder)
        per_worker[folder] = FewClueCell(mean=_pct(summary.mean), std=_pct(summary.std), n=summary.n)
    votes: dict[str, MajorityResult] = {t: NONE for t in TASKS}
    notes = []
    for study in studies:
        for condition in study.conditions.order_by("shots"):
            votes[folders[study.pk]] = votes[folders[study.pk]].plus(vote(condition))
            notes.append(f"{study.slug}: {_sample_note(condition, study.task)}.")
    majority = {
        t: FewClueCell(mean=_pct(v.accuracy), n=v.workers, items=v.items, no_majority=v.no_majority)
        if v.items
        else FewClueCell()
        for t, v in votes.items()
    }
    plurality = {
        t: FewClueCell(mean=_pct(v.plurality_accuracy), n=v.workers, items=v.items, ties=v.ties)
        if v.items
        else FewClueCell()
        for t, v in votes.items()
    }
    paper = {
        t: FewClueCell(mean=FEWCLUE_HUMAN[t], source="CLUE" if t in FEWCLUE_HUMAN_FROM_CLUE else "") for t in TASKS
    }
    rows = [
        FewClueRow(PER_WORKER, per_worker),
        FewClueRow(MAJORITY, majority),
        FewClueRow(PLURALITY, plurality),
        FewClueRow(PAPER, paper),
    ]
    return FewClueTable(
        rows=rows, options=options, studies=studies, protocol=protocols[0] if protocols else "", sample_notes=notes
    )


# --- Renderings (the same four formats as the CLUES table, formats.py) -------------------------------------

CSV_COLUMNS = ["row", "task", "mean", "std", "n", "items", "no_majority", "ties", "cell"]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def fewclue_csv(table: FewClueTable, header: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in table.rows:
        for task, c in row.cells.items():
            no_majority = "" if c.no_majority is None else c.no_majority
            ties = "" if c.ties is None else c.ties
            writer.writerow(
                [row.label, task.upper(), _number(c.mean), _number(c.std), c.n, c.items, no_majority, ties, c.text("")]
            )
        writer.writerow([row.label, "Score", _number(row.score), "", "", "", "", "", row.score_text("")])
    return out.getvalue()


def fewclue_json(table: FewClueTable, header: dict[str, Any]) -> str:
    return json.dumps({"meta": header, "table": table.as_dict()}, ensure_ascii=False, indent=2) + "\n"


def fewclue_markdown(table: FewClueTable, header: dict[str, Any]) -> str:
    lines = _html_comment(header_lines(header, prefix="")) + [""]
    head = table.header()
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join([":---"] + [":---:"] * (len(head) - 1)) + "|")
    for row in table.rows:
        cells = [row.cells[t].text() for t in TASKS] + [row.score_text()]
        lines.append("| " + " | ".join(_md_escape(x) for x in [row.label, *cells]) + " |")
    lines += ["", f"_{_md_escape(table.note)}_", ""]
    lines += [f"- {_md_escape(note)}" for note in table.sample_notes] + [""]
    return "\n".join(lines)


def _latex_cell(cell: FewClueCell) -> str:
    """A cell without the words of the Markdown's: the number of items without a majority in brackets alone,
    as the note says, so that the columns stay narrow."""
    if cell.mean is None:
        return "--"
    text = f"{cell.mean:.1f}" if cell.std is None else f"{cell.mean:.1f} $\\pm$ {cell.std:.1f}"
    return f"{text} ({cell.no_majority})" if cell.no_majority else text


# Nine tasks and the Score do not fit across a two-column paper's page (455 pt): the table comes in two
# halves, one under the other, in one ``table*``.
HALVES = (TASKS[:5], TASKS[5:])


def fewclue_latex(table: FewClueTable, header: dict[str, Any]) -> str:
    lines = header_lines(header, prefix="% ") + ["% Needs \\usepackage{booktabs} in the preamble."]
    lines += [r"\begin{table*}[t]", r"\centering", r"\small"]
    for i, tasks in enumerate(HALVES):
        last = i == len(HALVES) - 1
        columns = [t.upper() for t in tasks] + (["Score"] if last else [])
        if i:
            lines += [r"\par\medskip"]
        lines += [rf"\begin{{tabular}}{{l{'c' * len(columns)}}}", r"\toprule"]
        lines.append(" & ".join(["", *columns]) + r" \\")
        lines.append(r"\midrule")
        for row in table.rows:
            cells = [_latex_cell(row.cells[t]) for t in tasks] + ([row.score_text(missing="--")] if last else [])
            lines.append(" & ".join([latex_escape(row.label), *cells]) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
    notes = " ".join([table.note, *table.sample_notes])
    lines += [rf"\caption{{Human performance on FewCLUE. {latex_escape(notes)}}}", r"\end{table*}", ""]
    return "\n".join(lines)


FEWCLUE_FORMATS = {"csv": fewclue_csv, "json": fewclue_json, "markdown": fewclue_markdown, "latex": fewclue_latex}
