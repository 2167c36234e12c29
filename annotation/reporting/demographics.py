"""The demographics of a study's workers: its survey questions marked ``demographic``, as counts.

Never per person: a choice question gives the count of workers per option, a number question its
median (and how many answered), a text question is not summarised. A count below ``MIN_CELL``
(but above 0) is shown as "fewer than 3", and a number question answered by fewer than ``MIN_CELL``
workers has no median, so that no cell points at one or two people. The statement says so.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from annotation.models import Study, SurveyResponse

MIN_CELL = 3
SUPPRESSION_NOTE = f"counts below {MIN_CELL} are shown as “fewer than {MIN_CELL}”, never per person"


@dataclass(frozen=True)
class QuestionSummary:
    key: str
    label: str
    kind: str
    answered: int
    counts: dict[str, str]  # option -> a count, or "fewer than 3"
    median: float | None  # number questions with MIN_CELL answers or more

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "type": self.kind,
            "answered": _count(self.answered),
            "counts": self.counts,
            "median": self.median,
        }

    def text(self) -> str:
        answered = _count(self.answered)
        if self.kind in ("single", "multiple"):
            parts = ", ".join(f"{option} {n}" for option, n in self.counts.items())
            return f"{self.label}: {parts} ({answered} answered)"
        if self.kind == "number":
            if self.median is None:
                return f"{self.label}: {answered} answered, not summarised"
            return f"{self.label}: median {self.median:g} ({answered} answered)"
        return f"{self.label}: free text, not summarised ({answered} answered)"


def _count(n: int) -> str:
    return f"fewer than {MIN_CELL}" if 0 < n < MIN_CELL else str(n)


def demographic_questions(study: Study) -> list[dict[str, Any]]:
    return [q for q in study.survey or [] if isinstance(q, dict) and q.get("demographic")]


def summarise(study: Study) -> list[QuestionSummary]:
    """One summary per demographic question, from the answers of the study's workers (previews left out)."""
    questions = demographic_questions(study)
    if not questions:
        return []
    answers = list(
        SurveyResponse.objects.filter(participation__study=study, participation__is_preview=False).values_list(
            "answers", flat=True
        )
    )
    summaries = []
    for q in questions:
        given = [a[q["key"]] for a in answers if isinstance(a, dict) and a.get(q["key"]) not in (None, "", [])]
        counts: dict[str, str] = {}
        median = None
        if q["type"] in ("single", "multiple"):
            seen = Counter(v for value in given for v in (value if isinstance(value, list) else [value]))
            counts = {option: _count(seen.get(option, 0)) for option in q.get("options", [])}
        elif q["type"] == "number" and len(given) >= MIN_CELL:
            median = float(statistics.median(float(v) for v in given))
        summaries.append(QuestionSummary(q["key"], q.get("label", q["key"]), q["type"], len(given), counts, median))
    return summaries
