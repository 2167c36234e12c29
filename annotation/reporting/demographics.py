"""The demographics of a study's workers: its survey questions marked ``demographic``, as counts.

Never per person: a choice question gives the count of workers per option, a number question its
median (and how many answered), a text question is not summarised. A count below ``MIN_CELL``
(but above 0) is shown as "fewer than 3", and a number question answered by fewer than ``MIN_CELL``
workers has no median, so that no cell points at one or two people. The statement says so.

Suppression that subtraction undoes is no suppression: "Woman 4, Man 0, Non-binary fewer than 3
(5 answered)" gives Non-binary = 1. So ``suppress`` adds complementary cells until no hidden count can
be worked out from the others and the number who answered: the smallest count still shown is hidden
too (a 0 as "fewer than 3", a larger one as "3 or more"), and, were that not enough, the number who
answered. Whether a count can be worked out is decided from what a reader sees (``feasible``).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from annotation.models import Study, SurveyResponse

MIN_CELL = 3
FEWER = f"fewer than {MIN_CELL}"
AT_LEAST = f"{MIN_CELL} or more"
NOT_SHOWN = "not shown"
SUPPRESSION_NOTE = (
    f"counts below {MIN_CELL} are shown as “{FEWER}”, never per person, and as many other counts "
    f"(“{FEWER}”, “{AT_LEAST}”) or totals as it takes to keep them from being worked out by subtraction"
)


@dataclass(frozen=True)
class QuestionSummary:
    key: str
    label: str
    kind: str
    answered: str  # a count, "fewer than 3", or "not shown" (complementary suppression)
    counts: dict[str, str]  # option -> a count, "fewer than 3" or "3 or more"
    median: float | None  # number questions with MIN_CELL answers or more

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "type": self.kind,
            "answered": self.answered,
            "counts": self.counts,
            "median": self.median,
        }

    def text(self) -> str:
        answered = f"{self.answered} answered" if self.answered != NOT_SHOWN else "number answered not shown"
        if self.kind in ("single", "multiple"):
            parts = ", ".join(f"{option} {n}" for option, n in self.counts.items())
            return f"{self.label}: {parts} ({answered})"
        if self.kind == "number":
            if self.median is None:
                return f"{self.label}: {answered}, not summarised"
            return f"{self.label}: median {self.median:g} ({answered})"
        return f"{self.label}: free text, not summarised ({answered})"


def _count(n: int) -> str:
    return FEWER if 0 < n < MIN_CELL else str(n)


def _range(shown: str, total: int) -> tuple[int, int]:
    """The values a reader can give a shown count (``total``: the most any count can be)."""
    if shown == FEWER:
        return 0, MIN_CELL - 1
    if shown == AT_LEAST:
        return MIN_CELL, max(MIN_CELL, total)
    return int(shown), int(shown)


def feasible(cells: list[str], answered: str, *, exact_sum: bool, most: int) -> list[tuple[int, int]]:
    """For each shown cell, the lowest and highest value a reader can work out for it from all the cells
    and the number who answered (``exact_sum``: one answer each, so the cells add up to it; otherwise each
    answer ticks at least one, so they add up to it or more). ``most`` bounds any count (the workers)."""
    ranges = [_range(c, most) for c in cells]
    if answered == NOT_SHOWN:
        return ranges
    low_total, high_total = _range(answered, most)
    if answered == FEWER:
        low_total = 1  # a question nobody answered shows 0
    result = []
    for i, (lo, hi) in enumerate(ranges):
        others_lo = sum(r[0] for j, r in enumerate(ranges) if j != i)
        others_hi = sum(r[1] for j, r in enumerate(ranges) if j != i)
        low = max(lo, low_total - others_hi)
        high = min(hi, high_total - others_lo) if exact_sum else hi
        result.append((low, high))
    return result


def suppress(counts: dict[str, int], answered: int, *, exact_sum: bool) -> tuple[dict[str, str], str]:
    """The cells and the number who answered as shown: counts below ``MIN_CELL`` hidden, and complementary
    cells (then the total) hidden until no hidden count can be worked out exactly."""
    shown = {option: _count(n) for option, n in counts.items()}
    total = _count(answered)
    most = max([answered, *counts.values()])

    def disclosed() -> bool:
        cells = list(shown.values())
        bounds = feasible(cells, total, exact_sum=exact_sum, most=most)
        return any(c in (FEWER, AT_LEAST) and lo == hi for c, (lo, hi) in zip(cells, bounds, strict=True))

    while any(c == FEWER for c in shown.values()) and disclosed():
        visible = [(n, option) for option, n in counts.items() if shown[option] not in (FEWER, AT_LEAST)]
        if not visible:
            total = NOT_SHOWN
            break
        n, option = min(visible)
        shown[option] = FEWER if n < MIN_CELL else AT_LEAST
    return shown, total


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
        answered = _count(len(given))
        median = None
        if q["type"] in ("single", "multiple"):
            seen = Counter(v for value in given for v in (value if isinstance(value, list) else [value]))
            exact = q["type"] == "single"
            counts, answered = suppress(
                {option: seen.get(option, 0) for option in q.get("options", [])}, len(given), exact_sum=exact
            )
        elif q["type"] == "number" and len(given) >= MIN_CELL:
            median = float(statistics.median(float(v) for v in given))
        summaries.append(QuestionSummary(q["key"], q.get("label", q["key"]), q["type"], answered, counts, median))
    return summaries
