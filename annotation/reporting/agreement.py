"""Pure aggregation helpers (no Django): majority vote, Fleiss' kappa, Krippendorff's alpha, pairwise S1."""

from __future__ import annotations

import math
import re
import warnings
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import combinations

import krippendorff
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


def krippendorff_alpha_nominal(ratings: Mapping[Hashable, Mapping[Hashable, Hashable]]) -> float:
    """Krippendorff's alpha, nominal, over {coder: {unit: value}}; a unit a coder did not rate is missing.

    Computed by the ``krippendorff`` package (coincidence matrix; units with
    fewer than two values are not pairable and drop out). NaN when undefined:
    no pairable unit, or a single value in all the pairable data.
    """
    coders = [c for c in ratings if ratings[c]]
    # Columns and codes numbered as met: alpha does not depend on the order of units or values. Filled a
    # coder's row at once (a span study has a few hundred thousand token units).
    column: dict[Hashable, int] = {}
    codes: dict[Hashable, int] = {}
    rows: list[int] = []
    columns: list[int] = []
    coded: list[int] = []
    for i, coder in enumerate(coders):
        units = ratings[coder]
        rows.extend([i] * len(units))
        columns.extend([column.setdefault(unit, len(column)) for unit in units])
        coded.extend([codes.setdefault(value, len(codes)) for value in units.values()])
    data = np.full((len(coders), len(column)), np.nan)
    data[rows, columns] = coded
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = data[:, pairable]
    if values.size == 0 or len(set(values[~np.isnan(values)].tolist())) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        alpha = float(krippendorff.alpha(reliability_data=values, level_of_measurement="nominal"))
    return alpha


_TOKEN = re.compile(r"\S+")


def token_offsets(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each whitespace token of ``text``."""
    return [m.span() for m in _TOKEN.finditer(text)]


def token_marks(text: str, spans: Iterable[tuple[int, int]], tokens: list[tuple[int, int]] | None = None) -> list[int]:
    """The span-agreement unit: per whitespace token of ``text``, 1 if any span overlaps it, else 0
    (``tokens``: the text's ``token_offsets``, when the caller has them)."""
    tokens = token_offsets(text) if tokens is None else tokens
    marks = [0] * len(tokens)
    starts = [t_start for t_start, _ in tokens]
    ends = [t_end for _, t_end in tokens]
    # Tokens are in order and apart, so those a span overlaps (start < t_end and t_start < end) are a run:
    # from the first ending after its start to the last starting before its end.
    for start, end in spans:
        for index in range(bisect_right(ends, start), bisect_left(starts, end)):
            marks[index] = 1
    return marks


def spans_of_strings(text: str, strings: Iterable[str]) -> list[tuple[int, int]]:
    """Offsets of answer strings stored without spans: each string's first occurrence in the text."""
    found = []
    for string in strings:
        at = text.find(string) if string else -1
        if at >= 0:
            found.append((at, at + len(string)))
    return found
