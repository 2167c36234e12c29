"""Re-derive every stored item score from the stored answer and the gold, with the pure scorer.

An answered item is S1(answer, gold); a skipped one is ``stored_skip_score(gold)``
(the empty answer's S1, whatever skip policy a report applies later), the same
two functions the live path scores with at lock time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.utils import timezone

from annotation.models import Response, Study
from tasks_app.scoring import s1, stored_skip_score

_TOLERANCE = 1e-9


@dataclass
class Recomputation:
    checked: int = 0
    mismatches: list[dict] = field(default_factory=list)
    fixed: int = 0

    @property
    def ok(self) -> bool:
        return not self.mismatches


def recompute_item_scores(
    *, study_ids: list[int] | None = None, fix: bool = False, chunk_size: int = 2000
) -> Recomputation:
    """Compare every locked response's score with the recomputed one; optionally store the recomputed one."""
    result = Recomputation()
    responses = Response.objects.exclude(status=Response.Status.PENDING)
    if study_ids is not None:
        responses = responses.filter(participation__study_id__in=study_ids)
    rows = responses.values_list(
        "pk", "status", "answer", "score", "example__gold_answers", "participation__study_id"
    ).order_by("pk")
    changed: set[int] = set()  # the studies whose stored scores were rewritten
    for pk, status, answer, stored, gold, study_id in rows.iterator(chunk_size=chunk_size):
        result.checked += 1
        expected = stored_skip_score(gold) if status == Response.Status.SKIPPED else s1(answer or [], gold)
        if stored is None or not math.isclose(stored, expected, abs_tol=_TOLERANCE):
            result.mismatches.append({"response": pk, "stored": stored, "recomputed": expected})
            if fix and Response.objects.filter(pk=pk).update(score=expected):
                result.fixed += 1
                changed.add(study_id)
    if changed:
        # A score rewritten in place is no write the dashboard's figure keys see (figure_keys): mark the
        # studies as updated, so that their figures are computed again.
        Study.objects.filter(pk__in=changed).update(updated_at=timezone.now())
    return result
