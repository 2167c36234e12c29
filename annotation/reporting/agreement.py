"""Pure aggregation helpers (no Django): majority vote, Fleiss' kappa, Krippendorff's alpha, pairwise S1."""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from tasks_app.scoring import answer_set, mean, s1

Answer = frozenset[str]


def majority_label(answers: Sequence[Answer]) -> Answer:
    """Plurality over whole answer sets (classification); a tie goes to the first in sorted order."""
    if not answers:
        return frozenset()
    counts = Counter(answers)
    top = max(counts.values())
    return min((a for a, c in counts.items() if c == top), key=lambda a: sorted(a))


def strict_majority(answers: Sequence[Answer]) -> Answer | None:
    """The answer set given by more than half of the answers; None when no answer has a majority."""
    if not answers:
        return None
    answer, count = Counter(answers).most_common(1)[0]
    return answer if count * 2 > len(answers) else None


def majority_spans(answers: Sequence[Answer]) -> Answer:
    """Span tasks: keep each answer string chosen by more than half of the annotators."""
    counts = Counter(text for answer in answers for text in answer)
    return frozenset(text for text, c in counts.items() if c * 2 > len(answers))


def fleiss_kappa(items: Sequence[Sequence[str]]) -> float:
    """Fleiss' kappa for items each rated by the same number (>= 2) of raters with one category.

    NaN when it is undefined (no items, or every rating in one category).
    """
    items = [list(ratings) for ratings in items if ratings]
    if not items:
        return math.nan
    raters = len(items[0])
    if raters < 2 or any(len(r) != raters for r in items):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings for every item")
    totals: Counter[str] = Counter()
    agreement = []
    for ratings in items:
        counts = Counter(ratings)
        totals.update(counts)
        agreement.append((sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1)))
    p_bar = mean(agreement)
    n_ratings = len(items) * raters
    p_e = sum((c / n_ratings) ** 2 for c in totals.values())
    if math.isclose(p_e, 1.0):
        return math.nan
    return (p_bar - p_e) / (1 - p_e)


def pairwise_s1(per_annotator: Sequence[dict[int, list[str]]]) -> float:
    """Mean over annotator pairs of their mean item S1 against each other (on items both answered)."""
    pair_scores = []
    for a, b in combinations(per_annotator, 2):
        common = a.keys() & b.keys()
        if common:
            pair_scores.append(mean(s1(a[k], b[k]) for k in common))
    return mean(pair_scores)


def as_answer(strings: Sequence[str]) -> Answer:
    return answer_set(strings)


@dataclass
class Coded:
    """Answers as Krippendorff's alpha reads them: per item, a units × values array of how many coders gave
    each value to each of the item's units (``values`` names the columns), and the coders. A classification
    item is one unit; a span item has one per context token, so a span study never holds a Python object
    per token and coder."""

    values: tuple[Hashable, ...]
    items: dict[Hashable, np.ndarray] = field(default_factory=dict)
    coders: set[Hashable] = field(default_factory=set)

    @classmethod
    def merged(cls, parts: Iterable[Coded]) -> Coded:
        """Several groups of distinct coders together (their items' counts added); the same ``values``."""
        parts = list(parts)
        whole = cls(parts[0].values if parts else ())
        for part in parts:
            if part.values != whole.values:
                raise ValueError("merged parts must number their values alike")
            whole.coders |= part.coders
            for item, counts in part.items.items():
                whole.items[item] = whole.items[item] + counts if item in whole.items else counts.copy()
        return whole


def coded(ratings: Mapping[Hashable, Mapping[Hashable, Hashable]]) -> Coded:
    """``Coded`` of {coder: {unit: value}} (a unit a coder did not rate is missing). A unit ``(item, token)``
    is a token of that item; any other unit is an item of its own."""
    values = tuple(sorted({v for units in ratings.values() for v in units.values()}, key=repr))
    column = {v: j for j, v in enumerate(values)}
    cells: dict[Hashable, dict[Hashable, np.ndarray]] = {}
    for units in ratings.values():
        for unit, value in units.items():
            item = unit[0] if isinstance(unit, tuple) else unit
            counts = cells.setdefault(item, {}).setdefault(unit, np.zeros(len(values)))
            counts[column[value]] += 1
    items = {item: np.stack(list(units.values())) for item, units in cells.items()}
    return Coded(values, items, {c for c, units in ratings.items() if units})


def item_coincidences(data: Coded) -> dict[Hashable, np.ndarray]:
    """Per item with a pairable unit (rated by two coders or more), its units' share of the coincidence
    matrix: sum over units u of (n_uv n_uw - [v = w] n_uv) / (n_u - 1).

    Every item's units are reckoned in one array (a unit's share is values × values), then summed per item,
    rather than a few numpy calls per item: a span study has thousands of items."""
    items = [item for item, counts in data.items.items() if counts.shape[0]]
    if not items:
        return {}
    counts = np.concatenate([data.items[item] for item in items])
    sizes = np.array([data.items[item].shape[0] for item in items])
    rated = counts.sum(axis=1)
    pairable = rated >= 2
    weighted = np.where(pairable[:, None], counts / np.maximum(rated - 1, 1)[:, None], 0.0)
    shares = weighted[:, :, None] * counts[:, None, :]
    diagonal = np.arange(counts.shape[1])
    shares[:, diagonal, diagonal] -= weighted
    starts = np.cumsum(sizes) - sizes
    per_item = np.add.reduceat(shares, starts, axis=0)
    kept = np.add.reduceat(pairable, starts) > 0
    return {item: per_item[k] for k, item in enumerate(items) if kept[k]}


def alpha_of_coincidences(coincidences: np.ndarray) -> np.ndarray:
    """Nominal alpha of each coincidence matrix (resamples × values × values), 1 - (n - 1) * D_o / D_e: NaN
    where undefined (no pairable value, or a single value in all of them)."""
    marginals = coincidences.sum(axis=2)
    total = marginals.sum(axis=1)
    apart = ~np.eye(coincidences.shape[1], dtype=bool)
    observed = coincidences[:, apart].sum(axis=1)
    expected = (marginals[:, :, None] * marginals[:, None, :])[:, apart].sum(axis=1)
    ratio = np.divide(observed, expected, out=np.full(observed.shape, np.nan), where=expected > 0)
    return 1 - (total - 1) * ratio


def nominal_alpha(data: Coded) -> float:
    """Krippendorff's alpha, nominal, from the coincidence matrix (units with fewer than two values are not
    pairable and drop out). NaN when undefined: no pairable unit, or a single value in all the pairable data."""
    shares = item_coincidences(data)
    if not shares:
        return math.nan
    return float(alpha_of_coincidences(np.sum(list(shares.values()), axis=0)[None])[0])


def krippendorff_alpha_nominal(ratings: Mapping[Hashable, Mapping[Hashable, Hashable]]) -> float:
    """``nominal_alpha`` over {coder: {unit: value}}; a unit a coder did not rate is missing."""
    return nominal_alpha(coded(ratings))


_TOKEN = re.compile(r"\S+")


def token_offsets(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each whitespace token of ``text``."""
    return [m.span() for m in _TOKEN.finditer(text)]


def token_marks(text: str, spans: Iterable[tuple[int, int]], tokens: list[tuple[int, int]] | None = None) -> list[int]:
    """The span-agreement unit: per whitespace token of ``text``, 1 if any span overlaps it, else 0
    (``tokens``: the text's ``token_offsets``, when the caller has them)."""
    tokens = token_offsets(text) if tokens is None else tokens
    marks = [0] * len(tokens)
    for first, stop in token_runs(spans, [t_start for t_start, _ in tokens], [t_end for _, t_end in tokens]):
        marks[first:stop] = [1] * (stop - first)
    return marks


def token_runs(spans: Iterable[tuple[int, int]], starts: list[int], ends: list[int]) -> Iterator[tuple[int, int]]:
    """Per span, the tokens it overlaps as a range of their indices (``starts`` and ``ends``: the tokens'
    offsets). Tokens are in order and apart, so those a span overlaps (start < t_end and t_start < end) are a
    run: from the first ending after its start to the last starting before its end."""
    for start, end in spans:
        yield bisect_right(ends, start), bisect_left(starts, end)


def spans_of_strings(text: str, strings: Iterable[str]) -> list[tuple[int, int]]:
    """Offsets of answer strings stored without spans: each string's first occurrence in the text."""
    found = []
    for string in strings:
        at = text.find(string) if string else -1
        if at >= 0:
            found.append((at, at + len(string)))
    return found
