"""Spearman's rank correlation with ties, and a percentile bootstrap interval for it (numpy, no Django).

Confidence is an ordinal rating, so the rank correlation is the measure:
Pearson's r of the average ranks (tied values share the mean of the ranks
they span). The interval resamples the (confidence, S1) pairs with
replacement (the seed and resamples of ``bootstrap.IntervalOptions``) and
takes the percentiles of the recomputed rho; a resample without variation in
either variable gives no value and is left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from annotation.reporting.bootstrap import Interval, IntervalOptions, percentile_interval

CORRELATION_METHOD = "Spearman's rho (average ranks for ties); percentile bootstrap over answers"


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


def spearman_with_interval(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, options: IntervalOptions | None = None
) -> Correlation:
    options = options or IntervalOptions()
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rho = spearman(xs, ys)
    if math.isnan(rho):
        return Correlation(rho=rho, n=int(xs.size), interval=None)
    rng = np.random.default_rng(options.seed)
    draws = rng.integers(0, xs.size, size=(options.resamples, xs.size))
    replicates = np.array([spearman(xs[d], ys[d]) for d in draws])
    return Correlation(rho=rho, n=int(xs.size), interval=percentile_interval(replicates, options.level))
