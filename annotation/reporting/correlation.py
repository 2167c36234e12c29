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

from annotation.reporting.bootstrap import CLUSTERED_METHOD, Interval, IntervalOptions, draw, percentile_interval

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
    # A resample keeps each pair as often as its weight: its ranks and rho are those of the pairs repeated
    # that many times, computed from the weights (no copies, no sort: the distinct values are sorted once).
    x_values, x_codes = np.unique(xs, return_inverse=True)
    y_values, y_codes = np.unique(ys, return_inverse=True)
    replicates = np.empty(options.resamples)
    for b in range(options.resamples):
        weight = np.bincount(annotator_draws[b], minlength=n_annotators)[who]
        weight *= np.bincount(item_draws[b], minlength=n_items)[what]
        replicates[b] = _weighted_spearman(weight, x_codes, x_values.size, y_codes, y_values.size)
    return Correlation(rho=rho, n=int(xs.size), interval=percentile_interval(replicates, options.level))


def _weighted_ranks(weight: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray | None:
    """Each pair's average rank among the pairs repeated ``weight`` times (codes: its value's sorted index);
    None if the kept pairs have one value only (no variation: no rho)."""
    counts = np.bincount(codes, weights=weight, minlength=k)
    if np.count_nonzero(counts) < 2:
        return None
    starts = np.cumsum(counts) - counts
    return (starts + (counts + 1) / 2)[codes]


def _weighted_spearman(weight: np.ndarray, x_codes: np.ndarray, kx: int, y_codes: np.ndarray, ky: int) -> float:
    """``spearman`` of the pairs repeated ``weight`` times."""
    total = float(weight.sum())
    rx, ry = _weighted_ranks(weight, x_codes, kx), _weighted_ranks(weight, y_codes, ky)
    if total < 2 or rx is None or ry is None:
        return math.nan
    dx = rx - float((weight * rx).sum()) / total
    dy = ry - float((weight * ry).sum()) / total
    denominator = math.sqrt(float((weight * dx * dx).sum()) * float((weight * dy * dy).sum()))
    return math.nan if denominator == 0 else float((weight * dx * dy).sum() / denominator)
