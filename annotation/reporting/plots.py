"""S1 against the number of shots, with error bars (± the table's std), per task and all together.

Uses matplotlib's object API on the Agg/SVG backends (no pyplot, no display).
The reproducibility header, when given, is embedded as the image's
Description metadata (a PNG text chunk, the SVG's dc:description).
"""
from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from annotation.reporting.tables import Table  # noqa: E402

PLOT_FORMATS = ("png", "svg")
_MARKERS = "osD^v<>ph*"


def _series(table: Table, column: int) -> tuple[list[int], list[float], list[float]]:
    xs, ys, errs = [], [], []
    for row in table.rows:
        cell = row.cells[column]
        if row.is_model or cell.is_missing:
            continue
        xs.append(row.shots)
        ys.append(cell.mean)
        errs.append(cell.std or 0.0)
    return xs, ys, errs


def _render(fig: Figure, fmt: str, header: dict[str, Any] | None) -> bytes:
    if fmt not in PLOT_FORMATS:
        raise ValueError(f"plot format must be one of {', '.join(PLOT_FORMATS)}")
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
    if header is not None:
        metadata["Description"] = json.dumps(header, separators=(",", ":"))  # ASCII: safe in a PNG text chunk
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=150, bbox_inches="tight", metadata=metadata)
    return buffer.getvalue()


def _decorate(ax, table: Table, title: str) -> None:
    ax.set_xlabel("shots per question type")
    ax.set_ylabel("S1 (0-100)")
    ax.set_ylim(0, 105)
    ax.set_xticks(sorted({r.shots for r in table.rows if not r.is_model}))
    ax.set_title(title)
    ax.grid(alpha=0.3)


def task_plot(table: Table, task_index: int, fmt: str = "png", header: dict[str, Any] | None = None) -> bytes:
    task = table.tasks[task_index]
    fig = Figure(figsize=(4.5, 3.4))
    ax = fig.add_subplot()
    xs, ys, errs = _series(table, task_index)
    ax.errorbar(xs, ys, yerr=errs, marker="o", capsize=4)
    _decorate(ax, table, f"{task.name}: human S1")
    fig.text(0.01, -0.02, "error bars: " + ("population" if table.options.ddof == 0 else "sample") + " std",
             fontsize=7)
    return _render(fig, fmt, header)


def all_tasks_plot(table: Table, fmt: str = "png", header: dict[str, Any] | None = None) -> bytes:
    fig = Figure(figsize=(6.5, 4.2))
    ax = fig.add_subplot()
    for index, task in enumerate(table.tasks):
        xs, ys, errs = _series(table, index)
        if xs:
            ax.errorbar(xs, ys, yerr=errs, marker=_MARKERS[index % len(_MARKERS)], capsize=3, label=task.name)
    _decorate(ax, table, "Human S1 by number of shots")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    return _render(fig, fmt, header)


def plot_files(table: Table, header: dict[str, Any] | None = None) -> list[tuple[str, bytes]]:
    """Every plot as (file name, content): one per task and one of all tasks, in PNG and SVG."""
    files = []
    for fmt in PLOT_FORMATS:
        for index, task in enumerate(table.tasks):
            files.append((f"s1_vs_shots_{task.slug}.{fmt}", task_plot(table, index, fmt, header)))
        files.append((f"s1_vs_shots_all.{fmt}", all_tasks_plot(table, fmt, header)))
    return files


def plots_zip(table: Table, header: dict[str, Any], out) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.json", json.dumps(header, ensure_ascii=False, indent=2))
        for name, content in plot_files(table, header):
            archive.writestr(name, content)
