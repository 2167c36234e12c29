"""Krippendorff's alpha from the stored answers, per condition and per task (all conditions pooled).

Coders are the completed annotators; a skipped item is missing for that
annotator (never a value). Units:

- classification: one unit per test item, the value the answer's label set
  (nominal);
- spans: one unit per whitespace token of each test item's context, the
  value 1 if the annotator's spans cover the token, else 0 (nominal). An
  answer stored as strings only is placed at each string's first occurrence.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from annotation.models import AnswerSpan, Condition, Participation, Response, Study
from annotation.reporting.agreement import krippendorff_alpha_nominal, spans_of_strings, token_marks, token_offsets
from annotation.reporting.bootstrap import Interval, IntervalOptions, draw, percentile_interval
from tasks_app.models import Example

UNIT_LABEL = "test item (label set, nominal)"
UNIT_TOKEN = "context token (inside an answer span or not, nominal)"
ALPHA_METHOD = "percentile bootstrap over test items (an item's tokens together), the annotators kept"


Ratings = dict[Hashable, dict[Hashable, Hashable]]


def ratings_by_condition(conditions: Iterable[Condition], classification: bool) -> dict[int, Ratings]:
    """Each condition's ratings (coder -> unit -> value), read in one pass over the conditions' answers."""
    rows = list(
        Response.objects.filter(
            participation__condition__in=list(conditions),
            participation__state=Participation.State.COMPLETED,
            phase=Response.Phase.TEST,
        )
        .exclude(status__in=[Response.Status.PENDING, Response.Status.SKIPPED])
        .values_list("pk", "participation__condition_id", "participation_id", "example_id", "answer")
    )
    by_condition: dict[int, Ratings] = defaultdict(lambda: defaultdict(dict))
    if classification:
        for _, cid, pid, example_id, answer in rows:
            by_condition[cid][pid][example_id] = tuple(sorted(set(answer or [])))
        return by_condition
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for response_id, start, end in AnswerSpan.objects.filter(response_id__in=[r[0] for r in rows]).values_list(
        "response_id", "start", "end"
    ):
        spans[response_id].append((start, end))
    texts = {e.pk: e.context_text for e in Example.objects.filter(pk__in={r[3] for r in rows}).only("id", "context")}
    tokens: dict[int, list[tuple[int, int]]] = {}  # each text tokenised once, not once per annotator
    units: dict[int, list[tuple[int, int]]] = {}  # and its units, (item, token index), made once
    for response_id, cid, pid, example_id, answer in rows:
        text = texts[example_id]
        if example_id not in tokens:
            tokens[example_id] = token_offsets(text)
            units[example_id] = [(example_id, index) for index in range(len(tokens[example_id]))]
        placed = spans.get(response_id) or spans_of_strings(text, answer or [])
        marks = token_marks(text, placed, tokens[example_id])
        by_condition[cid][pid].update(zip(units[example_id], marks, strict=True))
    return by_condition


def _ratings(conditions: Iterable[Condition], classification: bool) -> Ratings:
    """The ratings of the conditions together (their coders are distinct participations)."""
    merged: Ratings = {}
    for ratings in ratings_by_condition(conditions, classification).values():
        merged.update(ratings)
    return merged


def alpha_of(ratings: Mapping[Hashable, Mapping[Hashable, Hashable]], *, classification: bool) -> dict[str, Any]:
    value = krippendorff_alpha_nominal(ratings)
    return {
        "measure": "krippendorff_alpha_nominal",
        "unit": UNIT_LABEL if classification else UNIT_TOKEN,
        "value": None if math.isnan(value) else round(value, 4),
        "coders": len(ratings),
    }


def alpha_for(conditions: Iterable[Condition], *, classification: bool) -> dict[str, Any]:
    return alpha_of(_ratings(conditions, classification), classification=classification)


def study_ratings(study: Study) -> dict[int, Ratings]:
    """``ratings_by_condition`` of every condition of the study (what a page passes to both users below)."""
    return ratings_by_condition(study.conditions.all(), study.task.is_classification)


def task_alpha(study: Study, *, ratings: Mapping[int, Ratings] | None = None) -> dict[str, Any]:
    """Alpha over every completed annotator of the study's conditions together (``ratings``: the study's
    ``study_ratings``, when the caller has read them)."""
    by_condition = study_ratings(study) if ratings is None else ratings
    merged: Ratings = {}
    for condition_ratings in by_condition.values():
        merged.update(condition_ratings)
    return alpha_of(merged, classification=study.task.is_classification)


def item_coincidences(ratings: Mapping[Hashable, Mapping[Hashable, Hashable]]) -> np.ndarray | None:
    """Per test item, its units' share of the coincidence matrix (items × values × values); None when alpha
    cannot be resampled (fewer than two items with a pairable unit, or fewer than two values)."""
    values = sorted({v for units in ratings.values() for v in units.values()}, key=repr)
    index = {v: i for i, v in enumerate(values)}
    by_unit: dict[Hashable, list[int]] = defaultdict(list)
    for units in ratings.values():
        for unit, value in units.items():
            by_unit[unit].append(index[value])
    size = len(values)
    items: dict[Hashable, np.ndarray] = {}
    for unit, coded in by_unit.items():
        if len(coded) < 2:
            continue  # not pairable
        counts = np.bincount(coded, minlength=size).astype(float)
        item = unit[0] if isinstance(unit, tuple) else unit  # a span task's unit is (item, token)
        share = (np.outer(counts, counts) - np.diag(counts)) / (len(coded) - 1)
        items[item] = items.get(item, np.zeros((size, size))) + share
    if len(items) < 2 or size < 2:
        return None
    return np.stack(list(items.values()))


def alpha_interval(
    ratings: Mapping[Hashable, Mapping[Hashable, Hashable]], options: IntervalOptions | None = None
) -> Interval | None:
    """Alpha's bootstrap interval (``ALPHA_METHOD``): each resample draws the test items with replacement and
    recomputes nominal alpha from the drawn items' coincidences, 1 - (n - 1) * D_o / D_e."""
    options = options or IntervalOptions()
    shares = item_coincidences(ratings)
    if shares is None:
        return None
    draws = draw(np.random.default_rng(options.seed), options.resamples, shares.shape[0])
    counts = np.stack([np.bincount(row, minlength=shares.shape[0]) for row in draws]).astype(float)
    replicates = alpha_of_coincidences(np.einsum("rc,cvw->rvw", counts, shares))
    return percentile_interval(replicates, options.level)


def alpha_of_coincidences(coincidences: np.ndarray) -> np.ndarray:
    """Nominal alpha of each coincidence matrix (resamples × values × values), NaN where undefined."""
    marginals = coincidences.sum(axis=2)
    total = marginals.sum(axis=1)
    apart = ~np.eye(coincidences.shape[1], dtype=bool)
    observed = coincidences[:, apart].sum(axis=1)
    expected = np.einsum("rv,rw->rvw", marginals, marginals)[:, apart].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1 - (total - 1) * observed / np.where(expected > 0, expected, 1), np.nan)


def task_alpha_interval(study: Study, options: IntervalOptions | None = None) -> Interval | None:
    """The interval of ``task_alpha``: every completed annotator of the study's conditions together."""
    return alpha_interval(_ratings(study.conditions.all(), study.task.is_classification), options)
