"""S1 against the number of shots, per task and all together: the learning curves.

Error bars are the cells' 95% bootstrap intervals when the table has them
(bootstrap.py), else ± the table's std. A task's plot also draws the model
runs uploaded for the task: one dashed line per model over its shot levels,
and a horizontal dotted line for a run without a shot level.

Uses matplotlib's object API on the Agg/SVG backends (no pyplot, no display).
The reproducibility header, when given, is embedded as the image's
Description metadata (a PNG text chunk, the SVG's dc:description).
"""

from __future__ import annotations

import io
import json
import zipfile
from itertools import pairwise
from typing import TYPE_CHECKING, Any, BinaryIO

from annotation.reporting.tables import Row, Table

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOT_FORMATS = ("png", "svg")
_MARKERS = "osD^v<>ph*"


def _figure(figsize: tuple[float, float]) -> Figure:
    """matplotlib is imported at the first plot, not with the module: every process that loads the admin
    (the server, each management command) imports this module, and most never draw."""
    import matplotlib
    from matplotlib.figure import Figure

    matplotlib.use("Agg")
    return Figure(figsize=figsize)


def _series(table: Table, column: int) -> tuple[list[int], list[float], list[list[float]], list[int]]:
    """x, y, the error bars as [below, above] lists (matplotlib's asymmetric yerr) and n, per human row."""
    xs, ys, below, above, ns = [], [], [], [], []
    for row in table.human_rows():
        cell = row.cells[column]
        if cell.mean is None:  # Cell.is_missing, spelt out for the type checker
            continue
        xs.append(_shots(row))
        ys.append(cell.mean)
        if cell.ci_low is not None and cell.ci_high is not None:
            below.append(max(0.0, cell.mean - cell.ci_low))
            above.append(max(0.0, cell.ci_high - cell.mean))
        else:
            below.append(cell.std or 0.0)
            above.append(cell.std or 0.0)
        ns.append(cell.n)
    return xs, ys, [below, above], ns


def _model_series(table: Table, column: int) -> dict[str, list[tuple[int | None, float]]]:
    """Per model name, its (shots, S1) points for the task in this column."""
    series: dict[str, list[tuple[int | None, float]]] = {}
    for row in table.model_rows():
        cell = row.cells[column]
        if cell.mean is not None:
            series.setdefault(row.model or row.label, []).append((row.shots, cell.mean))
    return series


def _draw_models(ax: Axes, table: Table, column: int) -> None:
    for index, (name, points) in enumerate(_model_series(table, column).items()):
        color = f"C{(index + 1) % 10}"  # C0 is the humans'
        leveled = sorted((x, y) for x, y in points if x is not None)
        if leveled:
            ax.plot(
                [x for x, _ in leveled],
                [y for _, y in leveled],
                linestyle="--",
                marker=_MARKERS[(index + 1) % len(_MARKERS)],
                color=color,
                label=name,
            )
        for _, y in (p for p in points if p[0] is None):
            ax.axhline(y, linestyle=":", color=color, label=f"{name} (no shot level)")


def _render(fig: Figure, fmt: str, header: dict[str, Any] | None) -> bytes:
    if fmt not in PLOT_FORMATS:
        raise ValueError(f"plot format must be one of {', '.join(PLOT_FORMATS)}")
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
    if header is not None:
        metadata["Description"] = json.dumps(header, separators=(",", ":"))  # ASCII: safe in a PNG text chunk
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=150, bbox_inches="tight", metadata=metadata)
    return buffer.getvalue()


def _shots(row: Row) -> int:
    assert row.shots is not None, row.label  # only a model's row may have no shot level
    return row.shots


def _shot_levels(table: Table) -> list[int]:
    return sorted(
        {_shots(r) for r in table.human_rows()} | {r.shots for r in table.model_rows() if r.shots is not None}
    )


def _decorate(ax: Axes, table: Table, title: str) -> None:
    ax.set_xlabel("number of shots (k)")
    ax.set_ylabel("S1 (0-100)")
    ax.set_ylim(0, 105)
    levels = _shot_levels(table)
    ax.set_xticks(levels)
    if levels:
        margin = max(2.0, (max(levels) - min(levels)) * 0.08)
        ax.set_xlim(min(levels) - margin, max(levels) + margin)
    ax.set_title(title)
    ax.grid(alpha=0.3)


def _caption(ax: Axes, table: Table) -> None:
    """What the points and bars are, under the x-axis label."""
    spread = "population" if table.options.ddof == 0 else "sample"
    skips = f"skip policy {table.options.skip_policy!r}: {table.options.skips}"
    bars = (
        f"{table.intervals.level:.0%} two-way bootstrap CI ({table.intervals.resamples} resamples, "
        f"seed {table.intervals.seed})"
        if table.intervals
        else f"± {spread} std"
    )
    ax.annotate(
        f"mean over completed annotators, bars: {bars}; {skips}",
        xy=(0, 0),
        xycoords="axes fraction",
        xytext=(0, -36),
        textcoords="offset points",
        va="top",
        fontsize=9,  # read at the dashboard's width, not squeezed below the body text
        color="0.3",
    )


def _no_data(ax: Axes) -> None:
    ax.text(0.5, 0.5, "no completed annotators yet", transform=ax.transAxes, ha="center", va="center", color="0.45")


def task_plot(table: Table, task_index: int, fmt: str = "png", header: dict[str, Any] | None = None) -> bytes:
    task = table.tasks[task_index]
    fig = _figure(figsize=(4.5, 3.4))
    ax = fig.add_subplot()
    xs, ys, errs, ns = _series(table, task_index)
    if xs:
        ax.errorbar(xs, ys, yerr=errs, marker="o", capsize=4, color="C0", label="humans")
        for x, n in zip(xs, ns, strict=True):  # annotators behind each point, along the bottom of the axes
            ax.text(x, 3, f"n={n}", ha="center", va="bottom", fontsize=8, color="0.3")
    else:
        _no_data(ax)
    _draw_models(ax, table, task_index)
    if _model_series(table, task_index):
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    _decorate(ax, table, f"{task.name}: S1 by shots")
    _caption(ax, table)
    return _render(fig, fmt, header)


def all_tasks_plot(table: Table, fmt: str = "png", header: dict[str, Any] | None = None) -> bytes:
    fig = _figure(figsize=(7.5, 4.2))
    ax = fig.add_subplot()
    levels = _shot_levels(table)
    gap = min((b - a for a, b in pairwise(levels)), default=10)
    step = gap * 0.3 / max(1, len(table.tasks))  # spread the tasks over a third of the gap so error bars do not overlap
    for index, task in enumerate(table.tasks):
        xs, ys, errs, _ = _series(table, index)
        if xs:
            dodge = (index - (len(table.tasks) - 1) / 2) * step
            ax.errorbar(
                [x + dodge for x in xs],
                ys,
                yerr=errs,
                marker=_MARKERS[index % len(_MARKERS)],
                capsize=3,
                label=task.name,
            )
    _decorate(ax, table, "Human S1 by number of shots")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    else:
        _no_data(ax)
    _caption(ax, table)
    return _render(fig, fmt, header)


def plot_files(table: Table, header: dict[str, Any] | None = None) -> list[tuple[str, bytes]]:
    """Every plot as (file name, content): one per task and one of all tasks, in PNG and SVG."""
    files = []
    for fmt in PLOT_FORMATS:
        for index, task in enumerate(table.tasks):
            files.append((f"s1_vs_shots_{task.slug}.{fmt}", task_plot(table, index, fmt, header)))
        files.append((f"s1_vs_shots_all.{fmt}", all_tasks_plot(table, fmt, header)))
    return files


def plots_zip(table: Table, header: dict[str, Any], out: BinaryIO) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.json", json.dumps(header, ensure_ascii=False, indent=2))
        for name, content in plot_files(table, header):
            archive.writestr(name, content)
