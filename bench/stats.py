"""Figures for the replay's JSON: latency percentiles, query counts, expected S1."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of already sorted values."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def latency_summary(values: Iterable[float]) -> dict:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "p50_ms": round(percentile(ordered, 50), 2),
        "p95_ms": round(percentile(ordered, 95), 2),
        "p99_ms": round(percentile(ordered, 99), 2),
        "max_ms": round(ordered[-1], 2),
    }


def pooled_rate(rounds: Sequence[dict]) -> float:
    """Requests per second over rounds of ``{"requests", "seconds"}`` taken together (not the mean of
    their rates, which would weigh a short fast round like a long slow one)."""
    return sum(r["requests"] for r in rounds) / sum(r["seconds"] for r in rounds)


def count_summary(values: Iterable[int]) -> dict:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "min": ordered[0],
        "median": ordered[len(ordered) // 2],
        "max": ordered[-1],
        "distinct": sorted(set(ordered)),
    }


def cpu_summary(values_us: Iterable[int]) -> dict:
    """Mean and median of the server's CPU per request, in ms, and the total in s."""
    ordered = sorted(values_us)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "mean_ms": round(sum(ordered) / len(ordered) / 1000, 3),
        "median_ms": round(ordered[len(ordered) // 2] / 1000, 3),
        "total_s": round(sum(ordered) / 1e6, 2),
    }


def gc_summary(values_us: Sequence[int]) -> dict:
    """Of these requests, how many ran a garbage collection, its total time in s and the longest, in ms."""
    pauses = [v for v in values_us if v > 0]
    return {
        "requests": len(values_us),
        "requests_with_gc": len(pauses),
        "total_s": round(sum(pauses) / 1e6, 2),
        "max_ms": round(max(pauses, default=0) / 1000, 1),
    }


def _s1(answer: frozenset[str], gold: frozenset[str]) -> float:
    """The paper's per-item S1, written here again on purpose: the check must not share the app's scorer.
    An empty string is no answer (the release writes the empty set as [""])."""
    answer, gold = answer - {""}, gold - {""}
    if not answer and not gold:
        return 1.0
    common = len(answer & gold)
    if common == 0:
        return 0.0
    precision, recall = common / len(answer), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def expected_s1(answers: Iterable[tuple[frozenset[str], frozenset[str]]]) -> float | None:
    """Mean per-item S1 of (answer set, gold set) pairs, computed by the harness alone."""
    scores = [_s1(frozenset(answer), frozenset(gold)) for answer, gold in answers]
    return sum(scores) / len(scores) if scores else None
