"""Bootstrap confidence intervals for the table's cells and for human–model gaps (no Django).

A cell is the mean over annotators of each annotator's mean item S1. Its
interval is a **two-way percentile bootstrap**: each resample draws the
annotators with replacement *and* the test items with replacement (both
sources of sampling error in a crowd study), recomputes the cell on the drawn
annotators and items, and the interval is the 2.5th and 97.5th percentiles
(NumPy's default linear interpolation) of the recomputed cells.

A human–model gap (human cell minus the model's S1 on the same items) gets the
same **two-way bootstrap, paired over items**: each resample draws the
annotators and the items, the human cell is recomputed on both draws and the
model's mean on the same items (with three workers a cell, keeping the
annotators fixed would leave out most of the human side's sampling error).

Reproducible: each cell's resampling starts from the seed (default
20211206, the CLUES paper's NeurIPS week), so a cell's interval depends on
its own scores, the seed and the number of resamples only, not on which
other cells a table has. A score matrix is annotators × items, NaN where an
annotator has no score for an item (a skip under the "exclude" policy).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from annotation.reporting.options import ReportError

DEFAULT_SEED = 20211206
DEFAULT_RESAMPLES = 2000
MAX_RESAMPLES = 20_000  # bounds the time and memory one request may ask for
CELL_METHOD = "two-way percentile bootstrap (annotators and test items resampled with replacement)"
GAP_METHOD = "two-way percentile bootstrap (annotators and test items resampled; the model paired on the same items)"
# The answer-level statistics (Spearman's rho) resample the same two ways: answers are clustered by
# annotator and by item, never treated as independent (correlation.py).
CLUSTERED_METHOD = "two-way clustered percentile bootstrap (annotators and test items resampled with replacement)"

ItemScores = Mapping[Any, Mapping[Any, float]]  # {annotator: {item: S1 0..1}}


@dataclass(frozen=True)
class IntervalOptions:
    """How the intervals are computed, recorded with every table that shows them.

    ``in_text``: Markdown and LaTeX print the intervals too (the default; JSON, CSV and the
    dashboard always carry them). Off: ``intervals=0`` in a query, ``--no-intervals`` on the command.
    """

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    level: float = 0.95
    in_text: bool = True

    def __post_init__(self) -> None:
        if not 100 <= self.resamples <= MAX_RESAMPLES:
            raise ReportError(f"resamples must be between 100 and {MAX_RESAMPLES}, not {self.resamples!r}")
        if not 0.5 <= self.level < 1:
            raise ReportError(f"the interval level must be in [0.5, 1), not {self.level!r}")
        if self.seed < 0:
            raise ReportError(f"the seed must be a non-negative integer, not {self.seed!r}")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> IntervalOptions:
        """From a query-string/JSON dict: ``resamples``, ``seed`` (integers), ``intervals`` (0/false: not
        printed in Markdown and LaTeX); absent keys keep the defaults."""
        in_text = str(params.get("intervals", "1")).strip().lower()
        if in_text not in ("1", "0", "true", "false", "yes", "no", "on", "off", ""):
            raise ReportError(f"intervals must be 1 or 0, not {params.get('intervals')!r}")
        values: dict[str, int] = {}
        for key in ("resamples", "seed"):
            raw = params.get(key)
            if raw is None or raw == "":
                continue
            try:
                values[key] = int(raw)
            except (TypeError, ValueError):
                raise ReportError(f"{key} must be an integer, not {raw!r}") from None
        return cls(
            resamples=values.get("resamples", DEFAULT_RESAMPLES),
            seed=values.get("seed", DEFAULT_SEED),
            in_text=in_text not in ("0", "false", "no", "off"),
        )

    def as_dict(self) -> dict[str, Any]:
        return {"method": CELL_METHOD, "gap_method": GAP_METHOD, **asdict(self)}

    def describe(self) -> str:
        return (
            f"[{self.level:.0%} CI: {CELL_METHOD}, {self.resamples} resamples, seed {self.seed}; "
            f"model gaps: {GAP_METHOD}]"
        )


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    resamples: int  # the resamples that gave a value (a resample where no annotator kept an item gives none)


def score_matrix(scores: ItemScores) -> tuple[np.ndarray, list[Hashable], list[Hashable]]:
    """The annotators × items matrix (NaN = no score), with the annotator and item keys in order."""
    annotators = sorted((a for a in scores if scores[a]), key=repr)  # an annotator without scores is no one
    items = sorted({item for by_item in scores.values() for item in by_item}, key=repr)
    column = {item: j for j, item in enumerate(items)}
    matrix = np.full((len(annotators), len(items)), np.nan)
    for i, annotator in enumerate(annotators):
        for item, value in scores[annotator].items():
            matrix[i, column[item]] = value
    return matrix, annotators, items


def cell_value(matrix: np.ndarray) -> float:
    """Mean over annotators (those with any score) of their mean score; NaN for an empty cell."""
    present = ~np.isnan(matrix)
    rows = present.any(axis=1)
    if not rows.any():
        return math.nan
    return float(np.mean([np.nanmean(matrix[i]) for i in np.flatnonzero(rows)]))


def draw(rng: np.random.Generator, resamples: int, n: int) -> np.ndarray:
    """``resamples`` rows of ``n`` indices drawn with replacement from range(n)."""
    return rng.integers(0, n, size=(resamples, n))


def draw_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """Per row of drawn indices, how often each of range(n) was drawn (resamples × n)."""
    rows = indices.shape[0]
    offsets = (indices + np.arange(rows)[:, None] * n).ravel()
    return np.bincount(offsets, minlength=rows * n).reshape(rows, n).astype(float)


def cell_replicates(matrix: np.ndarray, annotator_draws: np.ndarray, item_draws: np.ndarray) -> np.ndarray:
    """The cell recomputed on each resample of annotators and items (NaN where nothing is left).

    Written with counts: an item drawn twice weighs twice in an annotator's
    mean, an annotator drawn twice weighs twice in the cell's.
    """
    values = np.nan_to_num(matrix)
    present = (~np.isnan(matrix)).astype(float)
    item_counts = draw_counts(item_draws, matrix.shape[1])
    annotator_counts = draw_counts(annotator_draws, matrix.shape[0])
    # einsum, not @: these products are small, and BLAS's threads cost more than they save on a busy machine.
    sums = np.einsum("bj,aj->ba", item_counts, values)  # resamples × annotators
    kept = np.einsum("bj,aj->ba", item_counts, present)
    with np.errstate(invalid="ignore", divide="ignore"):
        annotator_means = np.where(kept > 0, sums / np.where(kept > 0, kept, 1), 0.0)
        weights = annotator_counts * (kept > 0)
        total = weights.sum(axis=1)
        return np.where(total > 0, (weights * annotator_means).sum(axis=1) / np.where(total > 0, total, 1), np.nan)


def percentile_interval(replicates: np.ndarray, level: float) -> Interval | None:
    finite = replicates[~np.isnan(replicates)]
    if finite.size == 0:
        return None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Interval(low=float(low), high=float(high), resamples=int(finite.size))


def cell_interval(scores: ItemScores, options: IntervalOptions | None = None) -> Interval | None:
    """The two-way bootstrap interval of a cell (0..1 scale); None for a cell without scores."""
    options = options or IntervalOptions()
    matrix, _, _ = score_matrix(scores)
    if matrix.size == 0 or np.isnan(matrix).all():
        return None
    rng = np.random.default_rng(options.seed)
    annotator_draws = draw(rng, options.resamples, matrix.shape[0])
    item_draws = draw(rng, options.resamples, matrix.shape[1])
    return percentile_interval(cell_replicates(matrix, annotator_draws, item_draws), options.level)


@dataclass(frozen=True)
class Gap:
    human: float  # 0..1, the cell on the shared items
    model: float  # 0..1, the model's mean S1 on the same items
    items: int
    interval: Interval | None

    @property
    def gap(self) -> float:
        return self.human - self.model


def gap_replicates(
    matrix: np.ndarray, model: np.ndarray, annotator_draws: np.ndarray, item_draws: np.ndarray
) -> np.ndarray:
    """Human cell minus model mean on each resample of annotators and items (the model on the same items)."""
    human = cell_replicates(matrix, annotator_draws, item_draws)
    item_counts = draw_counts(item_draws, matrix.shape[1])
    return human - np.einsum("bj,j->b", item_counts, model) / item_counts.sum(axis=1)


def paired_gap(scores: ItemScores, model: Mapping[Any, float], options: IntervalOptions | None = None) -> Gap | None:
    """The human–model gap on the items both have, with its two-way bootstrap interval; None without overlap."""
    options = options or IntervalOptions()
    shared = {annotator: {k: v for k, v in by_item.items() if k in model} for annotator, by_item in scores.items()}
    matrix, _, items = score_matrix(shared)
    if matrix.size == 0 or np.isnan(matrix).all():
        return None
    model_vector = np.array([model[item] for item in items], dtype=float)
    rng = np.random.default_rng(options.seed)  # drawn as cell_interval draws: annotators, then items
    annotator_draws = draw(rng, options.resamples, matrix.shape[0])
    item_draws = draw(rng, options.resamples, len(items))
    replicates = gap_replicates(matrix, model_vector, annotator_draws, item_draws)
    return Gap(
        human=cell_value(matrix),
        model=float(model_vector.mean()),
        items=len(items),
        interval=percentile_interval(replicates, options.level),
    )
