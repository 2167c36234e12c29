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
from collections.abc import Hashable, Iterable
from typing import Any

from annotation.models import AnswerSpan, Condition, Participation, Response, Study
from annotation.reporting.agreement import krippendorff_alpha_nominal, spans_of_strings, token_marks
from tasks_app.models import Example

UNIT_LABEL = "test item (label set, nominal)"
UNIT_TOKEN = "context token (inside an answer span or not, nominal)"


def _ratings(conditions: Iterable[Condition], classification: bool) -> dict[Hashable, dict[Hashable, Hashable]]:
    rows = list(
        Response.objects.filter(
            participation__condition__in=list(conditions),
            participation__state=Participation.State.COMPLETED,
            phase=Response.Phase.TEST,
        )
        .exclude(status__in=[Response.Status.PENDING, Response.Status.SKIPPED])
        .values_list("pk", "participation_id", "example_id", "answer")
    )
    ratings: dict[Hashable, dict[Hashable, Hashable]] = defaultdict(dict)
    if classification:
        for _, pid, example_id, answer in rows:
            ratings[pid][example_id] = tuple(sorted(set(answer or [])))
        return ratings
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for response_id, start, end in AnswerSpan.objects.filter(response_id__in=[r[0] for r in rows]).values_list(
        "response_id", "start", "end"
    ):
        spans[response_id].append((start, end))
    texts = {e.pk: e.context_text for e in Example.objects.filter(pk__in={r[2] for r in rows}).only("id", "context")}
    for response_id, pid, example_id, answer in rows:
        text = texts[example_id]
        placed = spans.get(response_id) or spans_of_strings(text, answer or [])
        for index, mark in enumerate(token_marks(text, placed)):
            ratings[pid][(example_id, index)] = mark
    return ratings


def alpha_for(conditions: Iterable[Condition], *, classification: bool) -> dict[str, Any]:
    ratings = _ratings(conditions, classification)
    value = krippendorff_alpha_nominal(ratings)
    return {
        "measure": "krippendorff_alpha_nominal",
        "unit": UNIT_LABEL if classification else UNIT_TOKEN,
        "value": None if math.isnan(value) else round(value, 4),
        "coders": len(ratings),
    }


def task_alpha(study: Study) -> dict[str, Any]:
    """Alpha over every completed annotator of the study's conditions together."""
    return alpha_for(study.conditions.all(), classification=study.task.is_classification)
