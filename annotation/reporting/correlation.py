"""Spearman's rank correlation with ties, and a percentile bootstrap interval for it (numpy, no Django).

Confidence is an ordinal rating, so the rank correlation is the measure:
Pearson's r of the average ranks (tied values share the mean of the ranks
they span). Answers are not independent: each annotator gives many, and each
item is answered by several. So the interval is a **two-way clustered
bootstrap**, as the table's cells: each resample draws the annotators and the
items with replacement and keeps every answer of a drawn annotator to a drawn
item (as often as both were drawn); the interval is the percentiles of the
recomputed rho (the seed and resamples of ``bootstrap.IntervalOptions``). A
resample without variation in either variable gives no value and is left out.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from annotation.reporting.bootstrap import (
    CLUSTERED_METHOD,
    Interval,
    IntervalOptions,
    draw,
    draw_counts,
    percentile_interval,
)

CORRELATION_METHOD = f"Spearman's rho (average ranks for ties); {CLUSTERED_METHOD}"


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n; tied values get the mean of the ranks they occupy."""
    unique, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    starts = np.cumsum(counts) - counts  # ranks before each distinct value
    return (starts + (counts + 1) / 2)[inverse]


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho; NaN with fewer than 2 pairs or no variation in x or y."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape:
        raise ValueError("x and y must have the same length")
    if xs.size < 2:
        return math.nan
    rx, ry = average_ranks(xs), average_ranks(ys)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    denominator = math.sqrt(float((dx * dx).sum() * (dy * dy).sum()))
    return math.nan if denominator == 0 else float((dx * dy).sum() / denominator)


@dataclass(frozen=True)
class Correlation:
    rho: float
    n: int
    interval: Interval | None


def cluster_codes(keys: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    """Each key as an index 0..k-1 (in order of first appearance), and k."""
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(key, len(index)) for key in keys], dtype=int), len(index)


def spearman_with_interval(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    options: IntervalOptions | None = None,
    *,
    annotators: Sequence[Hashable],
    items: Sequence[Hashable],
) -> Correlation:
    """rho of the pairs, with the two-way clustered interval; ``annotators`` and ``items`` name who gave
    each pair and on what item (the clusters)."""
    options = options or IntervalOptions()
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not len(annotators) == len(items) == xs.size:
        raise ValueError("annotators and items must name each pair")
    rho = spearman(xs, ys)
    if math.isnan(rho):
        return Correlation(rho=rho, n=int(xs.size), interval=None)
    who, n_annotators = cluster_codes(annotators)
    what, n_items = cluster_codes(items)
    rng = np.random.default_rng(options.seed)  # drawn as the cells are: annotators, then items
    annotator_draws = draw(rng, options.resamples, n_annotators)
    item_draws = draw(rng, options.resamples, n_items)
    replicates = spearman_replicates(xs, ys, who, what, annotator_draws, item_draws)
    return Correlation(rho=rho, n=int(xs.size), interval=percentile_interval(replicates, options.level))


# Resamples computed together: enough to pay numpy's per-call cost once for many, few enough that a chunk's
# weights (resamples × pairs) stay in the processor's cache.
CHUNK = 32


def spearman_replicates(
    xs: np.ndarray,
    ys: np.ndarray,
    who: np.ndarray,
    what: np.ndarray,
    annotator_draws: np.ndarray,
    item_draws: np.ndarray,
) -> np.ndarray:
    """rho on each resample (NaN where it has none): the pairs kept as often as their annotator and item
    were drawn, ``who`` and ``what`` naming each pair's annotator and item (0..k-1).

    A pair's rank depends only on its (x, y) values and the weights, so each resample is reckoned from the
    weight of every distinct (x value, y value) cell: average ranks from the cells' margins, then Pearson's r
    of the ranks over the cells. No pair is copied and nothing is sorted after the distinct values once.
    """
    x_values, x_codes = np.unique(xs, return_inverse=True)
    y_values, y_codes = np.unique(ys, return_inverse=True)
    kx, ky = x_values.size, y_values.size
    cells = x_codes * ky + y_codes
    n_annotators, n_items = int(who.max()) + 1, int(what.max()) + 1
    replicates = np.empty(annotator_draws.shape[0])
    for begin in range(0, annotator_draws.shape[0], CHUNK):
        stop = min(begin + CHUNK, annotator_draws.shape[0])
        rows = stop - begin
        weight = draw_counts(annotator_draws[begin:stop], n_annotators)[:, who]
        weight *= draw_counts(item_draws[begin:stop], n_items)[:, what]
        offsets = (cells + np.arange(rows)[:, None] * (kx * ky)).ravel()
        table = np.bincount(offsets, weights=weight.ravel(), minlength=rows * kx * ky).reshape(rows, kx, ky)
        replicates[begin:stop] = _rho_of_cells(table)
    return replicates


def _centred_ranks(counts: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Each value's average rank among the kept pairs, less the mean rank (rows: resamples)."""
    ranks = np.cumsum(counts, axis=1) - counts + (counts + 1) / 2
    return ranks - ((counts * ranks).sum(axis=1) / np.where(total > 0, total, 1))[:, None]


def _rho_of_cells(table: np.ndarray) -> np.ndarray:
    """Spearman's rho of each resample's cells (resamples × x values × y values of weights)."""
    x_counts, y_counts = table.sum(axis=2), table.sum(axis=1)
    total = x_counts.sum(axis=1)
    dx, dy = _centred_ranks(x_counts, total), _centred_ranks(y_counts, total)
    sxx = (x_counts * dx * dx).sum(axis=1)
    syy = (y_counts * dy * dy).sum(axis=1)
    sxy = np.einsum("rij,ri,rj->r", table, dx, dy)
    denominator = np.sqrt(sxx * syy)
    varied = denominator > 0  # 0 where the kept pairs have one x value or one y value (each rank is its mean)
    return np.where(varied, sxy / np.where(varied, denominator, 1), math.nan)
