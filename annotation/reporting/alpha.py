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
from annotation.reporting.agreement import (
    Coded,
    alpha_of_coincidences,
    item_coincidences,
    nominal_alpha,
    spans_of_strings,
    token_offsets,
    token_runs,
)
from annotation.reporting.bootstrap import Interval, IntervalOptions, draw, percentile_interval
from tasks_app.models import Example

UNIT_LABEL = "test item (label set, nominal)"
UNIT_TOKEN = "context token (inside an answer span or not, nominal)"
ALPHA_METHOD = "percentile bootstrap over test items (an item's tokens together), the annotators kept"


def ratings_by_condition(conditions: Iterable[Condition], classification: bool) -> dict[int, Coded]:
    """Each condition's answers as alpha reads them, read in one pass over the conditions' answers. The
    conditions number their values alike (a classification study's label sets; 0 and 1 for tokens), so they
    can be merged."""
    answered = Response.objects.filter(
        participation__condition__in=list(conditions),
        participation__state=Participation.State.COMPLETED,
        phase=Response.Phase.TEST,
    ).exclude(status__in=[Response.Status.PENDING, Response.Status.SKIPPED])
    rows = list(answered.values_list("pk", "participation__condition_id", "participation_id", "example_id", "answer"))
    values: tuple[Hashable, ...] = (0, 1)
    if classification:
        values = tuple(sorted({tuple(sorted(set(answer or []))) for *_, answer in rows}, key=repr))
    by_condition: dict[int, Coded] = defaultdict(lambda: Coded(values))
    if classification:
        column = {v: j for j, v in enumerate(values)}
        for _, cid, pid, example_id, answer in rows:
            data = by_condition[cid]
            data.coders.add(pid)
            counts = data.items.setdefault(example_id, np.zeros((1, len(values))))
            counts[0, column[tuple(sorted(set(answer or [])))]] += 1
        return by_condition
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    # The same answers as subqueries, not lists of thousands of ids as parameters.
    for response_id, start, end in AnswerSpan.objects.filter(response__in=answered.values("pk")).values_list(
        "response_id", "start", "end"
    ):
        spans[response_id].append((start, end))
    examples = Example.objects.filter(pk__in=answered.values("example_id")).only("id", "context")
    texts = {e.pk: e.context_text for e in examples}
    if missing := {r[3] for r in rows} - texts.keys():  # erased since the rows were read
        texts.update((e.pk, e.context_text) for e in Example.objects.filter(pk__in=missing).only("id", "context"))
    tokens: dict[int, tuple[list[int], list[int]]] = {}  # each text's token starts and ends, found once
    marked: dict[tuple[int, int], np.ndarray] = {}  # (condition, item): per token, how many coders marked it
    coders: dict[tuple[int, int], int] = defaultdict(int)  # (condition, item): how many coders answered it
    for response_id, cid, pid, example_id, answer in rows:
        text = texts[example_id]
        if example_id not in tokens:
            offsets = token_offsets(text)
            tokens[example_id] = ([start for start, _ in offsets], [end for _, end in offsets])
        starts, ends = tokens[example_id]
        marks = np.zeros(len(starts), dtype=bool)  # a token two spans of one coder overlap counts once
        for first, stop in token_runs(spans.get(response_id) or spans_of_strings(text, answer or []), starts, ends):
            marks[first:stop] = True
        by_condition[cid].coders.add(pid)
        coders[cid, example_id] += 1
        ones = marked.setdefault((cid, example_id), np.zeros(len(starts)))
        ones += marks
    for (cid, example_id), ones in marked.items():
        by_condition[cid].items[example_id] = np.column_stack([coders[cid, example_id] - ones, ones])
    return by_condition


def alpha_of(data: Coded | None, *, classification: bool) -> dict[str, Any]:
    value = math.nan if data is None else nominal_alpha(data)
    return {
        "measure": "krippendorff_alpha_nominal",
        "unit": UNIT_LABEL if classification else UNIT_TOKEN,
        "value": None if math.isnan(value) else round(value, 4),
        "coders": 0 if data is None else len(data.coders),
    }


def study_ratings(study: Study) -> dict[int, Coded]:
    """``ratings_by_condition`` of every condition of the study (what a page passes to both users below)."""
    return ratings_by_condition(study.conditions.all(), study.task.is_classification)


def _whole(study: Study, ratings: Mapping[int, Coded] | None = None) -> Coded:
    """Every completed annotator of the study's conditions together (their coders are distinct)."""
    by_condition = study_ratings(study) if ratings is None else ratings
    return Coded.merged(by_condition.values())


def task_alpha(study: Study, *, ratings: Mapping[int, Coded] | None = None) -> dict[str, Any]:
    """Alpha over every completed annotator of the study's conditions together (``ratings``: the study's
    ``study_ratings``, when the caller has read them)."""
    return alpha_of(_whole(study, ratings), classification=study.task.is_classification)


def alpha_interval(data: Coded, options: IntervalOptions | None = None) -> Interval | None:
    """Alpha's bootstrap interval (``ALPHA_METHOD``): each resample draws the test items with replacement and
    recomputes nominal alpha from the drawn items' coincidences, 1 - (n - 1) * D_o / D_e. None when alpha
    cannot be resampled (fewer than two items with a pairable unit, or fewer than two values given)."""
    options = options or IntervalOptions()
    shares = item_coincidences(data)
    given = sum((counts.sum(axis=0) for counts in data.items.values()), np.zeros(len(data.values)))
    if len(shares) < 2 or np.count_nonzero(given) < 2:
        return None
    stacked = np.stack(list(shares.values()))
    draws = draw(np.random.default_rng(options.seed), options.resamples, stacked.shape[0])
    counts = np.stack([np.bincount(row, minlength=stacked.shape[0]) for row in draws]).astype(float)
    replicates = alpha_of_coincidences(np.einsum("rc,cvw->rvw", counts, stacked))
    return percentile_interval(replicates, options.level)


def task_alpha_interval(study: Study, options: IntervalOptions | None = None) -> Interval | None:
    """The interval of ``task_alpha``: every completed annotator of the study's conditions together."""
    return alpha_interval(_whole(study), options)
