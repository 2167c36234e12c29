"""The attention rule: where checks sit in a worker's test step, their tally, and the rule's decision.

``step_end`` calls ``judge`` once every test item is locked and acts on its decision (completes the
worker, flags them for review, or excludes them with ``REASON_PREFIX`` before the reason).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import Count, Q

from annotation.models import AttentionCheck, AttentionDecision, Participation, Response, Study

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

REASON_PREFIX = "attention: "  # the reason of the exclusion event (exclusion_kind says it too)


# --- The worker's test step -------------------------------------------------------------------


def interleave(test_ids: Sequence[int], checks: Iterable[tuple[int, int, int]]) -> list[tuple[int, int | None]]:
    """The test step's items as (example id, check id or None): ``checks`` are (position, example id, check
    id) and each takes item number ``position`` (one past the end at most, if checks were removed)."""
    items: list[tuple[int, int | None]] = [(example_id, None) for example_id in test_ids]
    for position, example_id, check_id in sorted(checks):
        items.insert(min(position - 1, len(items)), (example_id, check_id))
    return items


def checks_of(study_id: int) -> list[tuple[int, int, int]]:
    """(position, example id, check id) of the study's checks, for ``interleave``."""
    return list(AttentionCheck.objects.filter(study_id=study_id).values_list("position", "example_id", "id"))


@dataclass(frozen=True)
class Tally:
    checks: int
    passed: int
    failed: int
    pending: int


def _passed() -> Q:
    return Q(status=Response.Status.ANSWERED, score__gte=1.0)


def tallies(participation_ids: Iterable[int]) -> dict[int, Tally]:
    """Participation id -> its checks passed, failed and not yet answered (one query)."""
    rows = (
        Response.all_objects.filter(attention_check__isnull=False, participation_id__in=list(participation_ids))
        .values("participation_id")
        .annotate(
            n=Count("id"),
            passed=Count("id", filter=_passed()),
            pending=Count("id", filter=Q(status=Response.Status.PENDING)),
        )
        .order_by()
    )
    return {
        r["participation_id"]: Tally(r["n"], r["passed"], r["n"] - r["passed"] - r["pending"], r["pending"])
        for r in rows
    }


def judge(
    participation: Participation,
    *,
    at: datetime,
    readmitted: bool = False,
    readmitted_by: User | None = None,
) -> AttentionDecision | None:
    """All test items are locked: the attention rule's decision on the worker, recorded; None without checks.

    ``step_end.end_step`` acts on it (completes, or excludes on ``EXCLUDED``). An admin's readmission
    (``readmitted``) has the last word: a worker the rule would exclude is flagged for review instead.
    """
    tally = tallies([participation.pk]).get(participation.pk)
    if tally is None:
        return None
    study = participation.study
    limit = study.attention_fail_limit
    flagged = limit > 0 and tally.failed >= limit
    summary = f"failed {tally.failed} of {tally.checks} attention checks"
    decided_by = None
    if not flagged:
        decision = AttentionDecision.Decision.PASSED
        reason = f"{summary} (limit {limit})" if limit else f"{summary} (no rule)"
    elif study.attention_action == Study.AttentionAction.EXCLUDE and not readmitted:
        decision, reason = AttentionDecision.Decision.EXCLUDED, f"{summary} (limit {limit}): excluded"
    elif study.attention_action == Study.AttentionAction.EXCLUDE:
        decision, reason = AttentionDecision.Decision.REVIEW, f"{summary} (limit {limit}): readmitted by an admin"
        decided_by = readmitted_by
    else:
        decision, reason = AttentionDecision.Decision.REVIEW, f"{summary} (limit {limit}): flagged for review"
    return AttentionDecision.objects.create(
        participation=participation,
        checks=tally.checks,
        passed_count=tally.passed,
        failed_count=tally.failed,
        fail_limit=limit,
        action=study.attention_action if limit else "",
        decision=decision,
        reason=reason,
        decided_by=decided_by,
        at=at,
    )


def failed_attention(participation: Participation) -> bool:
    """Whether the worker was excluded by the attention rule (the ``attention_failed`` outcome)."""
    return (
        participation.state == Participation.State.EXCLUDED
        and participation.exclusion_kind == Participation.ExclusionKind.ATTENTION
    )
