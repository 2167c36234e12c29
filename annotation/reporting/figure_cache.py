"""Bootstrap figures kept between requests, under a digest of exactly their inputs (the Django cache).

A bootstrap interval is a pure function of its inputs (the scores, the
pairs) and the interval options: it is stored under a digest of those, so a
write that changes any input changes the key and the figure is recomputed;
none can be served stale, and nothing has to be invalidated. This spares a
dashboard page its thousands of resamples per cell when no answer changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import cache as once
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from django.core.cache import cache

from annotation.reporting import bootstrap, correlation
from annotation.reporting.bootstrap import Gap, Interval, IntervalOptions
from annotation.reporting.correlation import Correlation

T = TypeVar("T")
TIMEOUT = 7 * 24 * 3600  # a key never goes stale; this only lets unused figures go
_NONE = "none"  # a stored "no figure" (the cache's own miss is None)


def digest(*parts: Any) -> str:
    """A digest of arrays (shape, type and bytes) and plain values (their repr)."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(f"{part.shape}{part.dtype}".encode())
            h.update(np.ascontiguousarray(part).tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"\x00")
    return h.hexdigest()


@once
def code_version() -> str:
    """A digest of the code that computes figures (models, services, reporting, tasks): a shared cache
    (Redis) outlives a deploy, and a figure kept by one version of the code is never served by another."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.blake2b(digest_size=10)
    for folder in ("annotation/models", "annotation/reporting", "annotation/services", "tasks_app"):
        for path in sorted((root / folder).rglob("*.py")):
            if "migrations" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def _full(kind: str, key: str) -> str:
    return f"figure:{kind}:{code_version()}:{key}"


def is_kept(kind: str, key: str) -> bool:
    """Whether a figure of ``kind`` is kept under ``key`` (``remembered`` would not compute it)."""
    return cache.get(_full(kind, key)) is not None


def remembered(kind: str, key: str, compute: Callable[[], T]) -> T:
    """``compute()``, kept under ``key``: a digest of exactly what the figure depends on."""
    full = _full(kind, key)
    found = cache.get(full)
    if found is not None:
        return None if found == _NONE else found  # type: ignore[return-value]
    value = compute()
    cache.set(full, _NONE if value is None else value, TIMEOUT)
    return value


def _options(options: IntervalOptions | None) -> tuple:
    options = options or IntervalOptions()
    return (options.resamples, options.seed, options.level)


def cell_interval(scores: bootstrap.ItemScores, options: IntervalOptions | None = None) -> Interval | None:
    """``bootstrap.cell_interval``, kept: the interval depends on the score matrix and the options only."""
    matrix, _, _ = bootstrap.score_matrix(scores)
    return remembered("cell", digest(matrix, _options(options)), lambda: bootstrap.cell_interval(scores, options))


def paired_gap(
    scores: bootstrap.ItemScores, model: Mapping[Any, float], options: IntervalOptions | None = None
) -> Gap | None:
    """``bootstrap.paired_gap``, kept: it depends on the score matrix, its items' model scores and the options."""
    matrix, _, items = bootstrap.score_matrix(scores)
    model_scores = np.array([model.get(item, np.nan) for item in items], dtype=float)
    present = np.array([item in model for item in items], dtype=bool)
    key = digest(matrix, model_scores, present, _options(options))
    return remembered("gap", key, lambda: bootstrap.paired_gap(scores, model, options))


def spearman_with_interval(
    x: Sequence[float],
    y: Sequence[float],
    options: IntervalOptions | None = None,
    *,
    annotators: Sequence[Hashable],
    items: Sequence[Hashable],
) -> Correlation:
    """``correlation.spearman_with_interval``, kept: it depends on the pairs, who gave each on what (as cluster
    numbers) and the options."""
    who, _ = correlation.cluster_codes(annotators)
    what, _ = correlation.cluster_codes(items)
    key = digest(np.asarray(x, dtype=float), np.asarray(y, dtype=float), who, what, _options(options))
    return remembered(
        "spearman",
        key,
        lambda: correlation.spearman_with_interval(x, y, options, annotators=annotators, items=items),
    )
