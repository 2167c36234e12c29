"""The S1 metric of the CLUES benchmark, as plain Python (no Django import).

Every task answer is a *set* of strings: a label word, entity strings, or an
answer span's text. The paper scores one item as

    S1(prediction, gold) = 1                      if both sets are empty
                         = 0                      if exactly one is empty
                         = 2·P·R / (P + R)        otherwise,

with P = |pred ∩ gold| / |pred| and R = |pred ∩ gold| / |gold| under exact
string match. A system's (or annotator's) score on a test set is the mean of
the item scores (``mean_s1``), and a condition's human score is the mean and
standard deviation of its annotators' scores (``mean_and_std``).

Standard deviation: the paper's "±" figures match the *population* standard
deviation (ddof = 0) over the annotators, which is the default here. Pass
``ddof=1`` for the sample standard deviation.

A skipped test item is scored under a skip policy, one table (``SKIP_RULES``):
``"zero"`` (the default: a skip never earns credit), ``"empty"`` (a skip scores
as the empty answer, 1 when the gold is empty) or ``"exclude"`` (the item is
left out of the annotator's mean). The score stored with a skip is the
``"empty"`` one (``STORED_SKIP_POLICY``), the only one that needs the gold;
``policy_score`` derives each policy's from it, and the reports' SQL expression
is generated from the same table.

Options beyond the paper's definition (all off by default):
- ``normalize``: compare strings after SQuAD-style normalisation (lower case,
  punctuation and the articles a/an/the removed, whitespace collapsed).
- ``s1_best_of``: score against each alternative gold set and keep the best,
  for data where several annotators gave different gold answers (SQuAD).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

__all__ = [
    "answer_set",
    "normalize_answer",
    "s1",
    "s1_best_of",
    "SKIP_ANSWER",
    "SKIP_POLICIES",
    "SKIP_RULES",
    "SkipPolicy",
    "SKIP_ZERO",
    "SKIP_EMPTY",
    "SKIP_EXCLUDE",
    "STORED_SKIP_POLICY",
    "policy_score",
    "skip_policy",
    "skip_score",
    "stored_skip_score",
    "mean",
    "mean_s1",
    "std",
    "mean_and_std",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation or articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_set(answers: Iterable[str], normalize: bool = False) -> frozenset[str]:
    """The set an answer list stands for. The empty string is not an answer.

    The release writes the empty set as ``[""]``; ``[]`` and ``[""]`` are both
    the empty set here. Duplicates collapse.
    """
    if isinstance(answers, str):
        raise TypeError("an answer is a collection of strings, not a single string")
    prepare: Callable[[str], str] = normalize_answer if normalize else (lambda s: s)
    result = set()
    for item in answers:
        if not isinstance(item, str):
            raise TypeError(f"answers must be strings, got {type(item).__name__}")
        if item == "":
            continue
        prepared = prepare(item)
        # A string that normalises to nothing (e.g. "the") still counts as an answer.
        result.add(prepared if prepared or not normalize else item)
    return frozenset(result)


def s1(prediction: Iterable[str], gold: Iterable[str], *, normalize: bool = False) -> float:
    """Per-item S1: set-based F1 with empty vs empty = 1 (see module docstring)."""
    pred = answer_set(prediction, normalize)
    ref = answer_set(gold, normalize)
    if not pred and not ref:
        return 1.0
    if not pred or not ref:
        return 0.0
    common = len(pred & ref)
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


# The answer a skip stands for wherever answers are compared (majority votes, agreement): the empty set.
SKIP_ANSWER: tuple[str, ...] = ()


SKIP_ZERO = "zero"
SKIP_EMPTY = "empty"
SKIP_EXCLUDE = "exclude"


class SkipPolicy(NamedTuple):
    """What a skipped item scores under one policy, given the score stored with the skip.

    ``keeps_stored``: the stored score (the empty answer's S1, ``stored_skip_score``); otherwise
    ``value`` (None: the item is left out of the mean).
    """

    name: str
    keeps_stored: bool
    value: float | None = None


# The skip rule, once: the Python rule (``policy_score``) and the reports' SQL expression
# (``annotation.reporting.scores.policy_score``) are both derived from this table.
SKIP_RULES: dict[str, SkipPolicy] = {
    # A skip never earns credit: on NER about half the gold sets are empty, and a worker who skipped
    # everything would otherwise score about 50.
    SKIP_ZERO: SkipPolicy(SKIP_ZERO, keeps_stored=False, value=0.0),
    SKIP_EMPTY: SkipPolicy(SKIP_EMPTY, keeps_stored=True),
    SKIP_EXCLUDE: SkipPolicy(SKIP_EXCLUDE, keeps_stored=False, value=None),
}
SKIP_POLICIES: tuple[str, ...] = tuple(SKIP_RULES)
# What ``Response.score`` holds for a skip: the empty answer's S1, from which the other policies follow.
STORED_SKIP_POLICY = SKIP_EMPTY


def skip_policy(policy: str) -> SkipPolicy:
    """The rule of a policy by name; ValueError for an unknown one."""
    try:
        return SKIP_RULES[policy]
    except KeyError:
        raise ValueError(f"skip policy must be one of {', '.join(SKIP_POLICIES)}, not {policy!r}") from None


def policy_score(stored: float | None, *, skipped: bool, policy: str) -> float | None:
    """An item's score under a skip policy, from the score stored with it; None when left out."""
    rule = skip_policy(policy)
    if not skipped or rule.keeps_stored:
        return stored
    return rule.value


def stored_skip_score(gold: Iterable[str]) -> float:
    """The score stored with a skip (``STORED_SKIP_POLICY``): the empty answer's S1 against the gold."""
    return s1(SKIP_ANSWER, gold)


def skip_score(gold: Iterable[str], policy: str = SKIP_ZERO) -> float | None:
    """The S1 of a skipped item under a skip policy (``SKIP_RULES``); None when the policy leaves it out."""
    return policy_score(stored_skip_score(gold), skipped=True, policy=policy)


def s1_best_of(prediction: Iterable[str], golds: Iterable[Iterable[str]], *, normalize: bool = False) -> float:
    """S1 against several alternative gold answer sets, keeping the best.

    For SQuAD-style data each annotator's answer is one alternative:
    ``s1_best_of(["Paris"], [["Paris"], ["in Paris"]]) == 1``. With no
    alternatives at all the gold is the empty set.
    """
    prediction = list(prediction)
    if isinstance(golds, str):
        raise TypeError("golds is a collection of answer sets, e.g. [['Paris'], ['in Paris']]")
    golds = list(golds)
    if any(isinstance(g, str) for g in golds):
        raise TypeError("golds is a collection of answer sets, e.g. [['Paris'], ['in Paris']]")
    alternatives = [list(g) for g in golds]
    if not alternatives:
        return s1(prediction, [], normalize=normalize)
    return max(s1(prediction, g, normalize=normalize) for g in alternatives)


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; NaN for no values (a missing cell, never a zero)."""
    values = list(values)
    if not values:
        return math.nan
    return math.fsum(values) / len(values)


def mean_s1(predictions: Iterable[Iterable[str]], golds: Iterable[Iterable[str]], *, normalize: bool = False) -> float:
    """One annotator's (or system's) score on a test set: the mean item S1 over aligned answer lists.

    ``mean_s1([["positive"], []], [["positive"], ["Paris"]]) == 0.5``. NaN for no items.
    """
    predictions, golds = list(predictions), list(golds)
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions for {len(golds)} gold answers")
    return mean(s1(p, g, normalize=normalize) for p, g in zip(predictions, golds, strict=True))


def std(values: Iterable[float], ddof: int = 0) -> float:
    """Standard deviation, population (ddof=0) by default as in the paper."""
    values = list(values)
    if len(values) - ddof <= 0:
        return math.nan
    m = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (len(values) - ddof))


def mean_and_std(values: Sequence[float], ddof: int = 0) -> tuple[float, float]:
    """The mean and standard deviation of annotators' scores for one condition."""
    return mean(values), std(values, ddof=ddof)
