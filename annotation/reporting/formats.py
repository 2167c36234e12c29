"""Renderings of a Table: CSV (long format), JSON, Markdown and LaTeX.

Each carries the reproducibility header in the form the format allows:
comment lines (CSV), a "meta" key (JSON), an HTML comment (Markdown) or
LaTeX comments, and each prints the metric note under the table.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from annotation.reporting.provenance import header_lines
from annotation.reporting.tables import Cell, Table

# One column per fact, each documented in docs/reports.md ("The table CSV").
CSV_COLUMNS = ["source", "model", "shots", "group", "task", "mean", "std", "n", "cell", "coverage", "ci_low", "ci_high"]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def table_csv(table: Table, header: dict[str, Any]) -> str:
    """A plain header-first table: the provenance (``header``) and the notes go to the sidecar."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in table.rows:
        for task, cell in zip(table.tasks, row.cells, strict=True):
            writer.writerow(
                [
                    "model" if row.is_model else "humans",
                    row.model if row.is_model else "",
                    "" if row.shots is None else row.shots,
                    task.get_group_display(),
                    task.name,
                    _number(cell.mean),
                    _number(cell.std),
                    cell.n,
                    cell.text(missing=""),
                    _number(cell.coverage),
                    _number(cell.ci_low),
                    _number(cell.ci_high),
                ]
            )
    return out.getvalue()


def table_json(table: Table, header: dict[str, Any]) -> str:
    return json.dumps({"meta": header, "table": table.as_dict()}, ensure_ascii=False, indent=2) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _html_comment(lines: list[str]) -> list[str]:
    """Header lines inside an HTML comment; a "-->" in a value (always inside a JSON string) is escaped."""
    return ["<!--"] + [line.replace("-->", "--\\u003e") for line in lines] + ["-->"]


def _in_text(table: Table) -> bool:
    return bool(table.intervals and table.intervals.in_text)


def _md_cell(cell: Cell, intervals: bool) -> str:
    return f"{cell.text()} {cell.interval_text()}".strip() if intervals else cell.text()


def _gap_lines(table: Table) -> list[str]:
    """The human–model gaps, one line each (for the Markdown and LaTeX notes)."""
    return [
        f"{g['task']} {g['human_shots']}-shot humans - {g['model']}: {g['gap']:.1f}"
        + (f" [{g['ci_low']:.1f}, {g['ci_high']:.1f}]" if g["ci_low"] is not None else "")
        + f" over {g['items']} items"
        for g in table.gaps
    ]


def table_markdown(table: Table, header: dict[str, Any]) -> str:
    lines = _html_comment(header_lines(header, prefix="")) + [""]
    groups = "; ".join(
        f"**{_md_escape(label)}**: "
        + ", ".join(_md_escape(t.name) for t in table.tasks if t.get_group_display() == label)
        for label, _ in table.groups
    )
    lines += [groups, ""]
    head = table.header()
    lines.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
    lines.append("|" + "|".join([":---"] + [":---:"] * (len(head) - 1)) + "|")
    for row in table.rows:
        label = f"*{_md_escape(row.label)}*" if row.is_model else _md_escape(row.label)
        lines.append("| " + " | ".join([label] + [_md_cell(c, _in_text(table)) for c in row.cells]) + " |")
    lines += ["", f"_{table.note}_", ""]
    if _in_text(table):
        lines += [f"_{_md_escape(table.interval_note)}_", ""]
        lines += [f"- {_md_escape(line)}" for line in _gap_lines(table)] + ([""] if table.gaps else [])
    if table.shows_coverage:
        lines += ["Coverage: share of test items answered (not skipped), mean over the completed annotators.", ""]
        lines.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
        lines.append("|" + "|".join([":---"] + [":---:"] * (len(head) - 1)) + "|")
        for row in table.human_rows():
            lines.append("| " + " | ".join([_md_escape(row.label)] + [c.coverage_text() for c in row.cells]) + " |")
        lines.append("")
    if table.set_apart_text():
        lines += [f"_{_md_escape(table.set_apart_text())}_", ""]
    return "\n".join(lines)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Non-ASCII characters the notes use, so that the file compiles without a Unicode setup.
    "±": r"$\pm$",
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _latex_cell(cell: Cell) -> str:
    if cell.mean is None:
        return "--"
    return f"{cell.mean:.1f}" if cell.std is None else f"{cell.mean:.1f} $\\pm$ {cell.std:.1f}"


def _latex_interval(cell: Cell) -> str:
    return f"[{cell.ci_low:.1f}, {cell.ci_high:.1f}]" if cell.has_interval else ""


# A table this many value columns wide or less fits one column of a two-column paper (ACL: 219 pt);
# a wider one spans both (``table*``, 455 pt) in a smaller type.
COLUMN_WIDE_TASKS = 2


def latex_float(columns: int) -> tuple[list[str], list[str]]:
    """The lines that open and close a table of ``columns`` value columns: ``table`` in one column of a
    two-column paper, ``table*`` over both (in ``\\small`` type) when it would not fit one."""
    if columns <= COLUMN_WIDE_TASKS:
        return [r"\begin{table}[t]", r"\centering"], [r"\end{table}"]
    return [r"\begin{table*}[t]", r"\centering", r"\small"], [r"\end{table*}"]


def _latex_caption(table: Table) -> str:
    """The metric, the std convention, the skip policy and the intervals' method: never live state or slugs."""
    text = f"Human performance ({table.note}"
    if _in_text(table):
        text += f" Brackets: {table.interval_note.strip('[]')}."
    return latex_escape(text + ")")


def _latex_note(table: Table) -> list[str]:
    """What goes beside the table, as LaTeX comments: who was not (yet) averaged in, and the model gaps."""
    notes = [table.set_apart_text()] + (_gap_lines(table) if _in_text(table) else [])
    return [f"% Note: {line}" for line in notes if line]


def table_latex(table: Table, header: dict[str, Any]) -> str:
    """A booktabs table (\\usepackage{booktabs}; no vertical rules) with the 95% intervals unless switched off,
    each row's intervals on a line of their own in small type, so that six tasks fit a paper's page."""
    lines = header_lines(header, prefix="% ") + ["% Needs \\usepackage{booktabs} in the preamble."]
    opening, closing = latex_float(len(table.tasks))
    spec = "l" + "c" * len(table.tasks)
    lines += [*opening, rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    group_cells, rules, column = [], [], 2
    for label, span in table.groups:
        group_cells.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(label)}}}")
        rules.append(rf"\cmidrule(lr){{{column}-{column + span - 1}}}")
        column += span
    lines.append(" & ".join([""] + group_cells) + r" \\")
    lines.append(" ".join(rules))
    lines.append(" & ".join(latex_escape(h) for h in table.header()) + r" \\")
    lines.append(r"\midrule")
    human, models = table.human_rows(), table.model_rows()
    for row in human:
        lines.append(" & ".join([latex_escape(row.label)] + [_latex_cell(c) for c in row.cells]) + r" \\")
        if _in_text(table) and any(c.has_interval for c in row.cells):
            intervals = [rf"{{\scriptsize {_latex_interval(c)}}}" if c.has_interval else "" for c in row.cells]
            lines.append(" & ".join([""] + intervals) + r" \\")
    if table.shows_coverage:
        lines.append(r"\midrule")
        lines.append(rf"\multicolumn{{{1 + len(table.tasks)}}}{{l}}{{Coverage (\% of test items answered)}} \\")
        for row in human:
            cells = [c.coverage_text(missing="--").replace("%", r"\%") for c in row.cells]
            lines.append(" & ".join([latex_escape(row.label)] + cells) + r" \\")
    if models:
        lines.append(r"\midrule")
        for row in models:
            lines.append(" & ".join([latex_escape(row.label)] + [_latex_cell(c) for c in row.cells]) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_latex_caption(table)}}}",
        *closing,
        *_latex_note(table),
        "",
    ]
    return "\n".join(lines)


TABLE_FORMATS = {
    "csv": (table_csv, "text/csv", "csv"),
    "json": (table_json, "application/json", "json"),
    "markdown": (table_markdown, "text/markdown", "md"),
    "latex": (table_latex, "application/x-latex", "tex"),
}
