"""The integrity rule: per worker, the page's signals summed over the test step, and the study's verdict.

Each locked item carries the signals its page sent (``services.session.signals``: time visible, time and times
away, copies) and the reading-time estimate for its text. Over a worker's test step (attention checks
included: they are items the worker reads too) this module counts

- ``copied_items``: items of which text was copied;
- ``fast_items``: answered items (not skipped) whose observed time is below the reading-time estimate;
  the observed time is the page's ``visible_ms``, or the server's ``active_ms`` where the page sent no
  signals (so leaving them out does not escape the check);
- ``hidden_items``: items during which the page was away (unfocused or hidden) for more than the
  study's ``integrity_hidden_seconds`` in total.

The study's rule (``Study.integrity_*``) sets up to three limits: more copied items than
``integrity_max_copies``, a larger share of fast items than ``integrity_max_fast_share`` (of the answered
items), a larger share of hidden items than ``integrity_max_hidden_share`` (of the items). A worker over
any limit is flagged for review (still completed) or excluded (``exclusion_kind = "integrity"``, paid and
given a code as any excluded worker), by ``integrity_action``. ``judge`` records an ``IntegrityDecision``
with the figures at the end of every test step (``step_end.end_step``), rule or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from annotation.models import IntegrityDecision, Participation, Response, Study

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL

REASON_PREFIX = "integrity: "  # the reason of the exclusion event (exclusion_kind says it too)
Status = Response.Status


@dataclass(frozen=True)
class Figures:
    """One worker's test step as the rule reads it."""

    items: int = 0
    answered: int = 0
    with_signals: int = 0
    copies: int = 0
    copied_items: int = 0
    fast_items: int = 0
    hidden_items: int = 0
    hidden_ms: int = 0

    @property
    def fast_share(self) -> float:
        return self.fast_items / self.answered if self.answered else 0.0

    @property
    def hidden_share(self) -> float:
        return self.hidden_items / self.items if self.items else 0.0


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def has_rule(study: Study) -> bool:
    limits = (study.integrity_max_copies, study.integrity_max_fast_share, study.integrity_max_hidden_share)
    return any(limit is not None for limit in limits)


def figures(participation_ids: Iterable[int], *, hidden_seconds: int) -> dict[int, Figures]:
    """Participation id -> its locked test items' figures (one query)."""
    answered = Q(status__in=(Status.ANSWERED, Status.NO_ANSWER))
    observed = Coalesce("visible_ms", "active_ms")
    rows = (
        Response.all_objects.filter(
            participation_id__in=list(participation_ids), phase=Response.Phase.TEST, submitted_at__isnull=False
        )
        .values("participation_id")
        .annotate(
            items=Count("id"),
            answered=Count("id", filter=answered),
            with_signals=Count("id", filter=Q(visible_ms__isnull=False)),
            copies=Coalesce(Sum("copy_count"), 0),
            copied_items=Count("id", filter=Q(copy_count__gt=0)),
            fast_items=Count("id", filter=answered & Q(reading_ms__isnull=False, reading_ms__gt=observed)),
            hidden_items=Count("id", filter=Q(hidden_ms__gt=hidden_seconds * 1000)),
            hidden_ms=Coalesce(Sum("hidden_ms"), 0),
        )
        .order_by()
    )
    return {r.pop("participation_id"): Figures(**r) for r in rows}


def breaches(study: Study, f: Figures) -> list[str]:
    """The limits of the study's rule that ``f`` goes beyond, each with its figures; [] within the rule."""
    found = []
    if study.integrity_max_copies is not None and f.copied_items > study.integrity_max_copies:
        found.append(f"copied text of {_items(f.copied_items)} (limit {study.integrity_max_copies})")
    if study.integrity_max_fast_share is not None and f.fast_share > study.integrity_max_fast_share:
        found.append(
            f"{f.fast_items} of {f.answered} answers faster than reading time "
            f"({f.fast_share:.0%}, limit {study.integrity_max_fast_share:.0%})"
        )
    if study.integrity_max_hidden_share is not None and f.hidden_share > study.integrity_max_hidden_share:
        found.append(
            f"away over {study.integrity_hidden_seconds} s on {f.hidden_items} of {f.items} items "
            f"({f.hidden_share:.0%}, limit {study.integrity_max_hidden_share:.0%})"
        )
    return found


def judge(
    participation: Participation,
    *,
    at: datetime,
    readmitted: bool = False,
    readmitted_by: User | None = None,
) -> IntegrityDecision:
    """All test items are locked: the integrity rule's decision on the worker, recorded with its figures.

    ``step_end.end_step`` acts on it (excludes on ``EXCLUDED``). An admin's readmission has the last word:
    a worker the rule would exclude is flagged for review instead.
    """
    study = participation.study
    f = figures([participation.pk], hidden_seconds=study.integrity_hidden_seconds).get(participation.pk, Figures())
    found = breaches(study, f)
    summary = "; ".join(found) or (
        f"{f.copied_items} copied, {f.fast_items} fast, {f.hidden_items} away of {f.items} items"
    )
    decided_by = None
    Decision = IntegrityDecision.Decision
    if not has_rule(study):
        decision, reason = Decision.PASSED, f"{summary} (no rule)"
    elif not found:
        decision, reason = Decision.PASSED, f"{summary} (within the rule)"
    elif study.integrity_action == Study.AttentionAction.EXCLUDE and not readmitted:
        decision, reason = Decision.EXCLUDED, f"{summary}: excluded"
    elif study.integrity_action == Study.AttentionAction.EXCLUDE:
        decision, reason, decided_by = Decision.REVIEW, f"{summary}: readmitted by an admin", readmitted_by
    else:
        decision, reason = Decision.REVIEW, f"{summary}: flagged for review"
    return IntegrityDecision.objects.create(
        participation=participation,
        items=f.items,
        answered=f.answered,
        with_signals=f.with_signals,
        copied_items=f.copied_items,
        fast_items=f.fast_items,
        hidden_items=f.hidden_items,
        max_copies=study.integrity_max_copies,
        max_fast_share=study.integrity_max_fast_share,
        max_hidden_share=study.integrity_max_hidden_share,
        hidden_seconds=study.integrity_hidden_seconds,
        action=study.integrity_action if has_rule(study) else "",
        decision=decision,
        reason=reason[:300],
        decided_by=decided_by,
        at=at,
    )


def rule_text(study: Study) -> str:
    """The study's rule in one phrase, for the dashboard and the statement."""
    return limits_text(
        max_copies=study.integrity_max_copies,
        max_fast_share=study.integrity_max_fast_share,
        max_hidden_share=study.integrity_max_hidden_share,
        hidden_seconds=study.integrity_hidden_seconds,
        action=study.integrity_action,
    )


def decision_rule_text(decision: IntegrityDecision) -> str:
    """The rule a decision was made under (its recorded limits), in the same phrase as ``rule_text``."""
    return limits_text(
        max_copies=decision.max_copies,
        max_fast_share=decision.max_fast_share,
        max_hidden_share=decision.max_hidden_share,
        hidden_seconds=decision.hidden_seconds,
        action=decision.action,
    )


def limits_text(
    *,
    max_copies: int | None,
    max_fast_share: float | None,
    max_hidden_share: float | None,
    hidden_seconds: int,
    action: str,
) -> str:
    if max_copies is None and max_fast_share is None and max_hidden_share is None:
        return "no rule (the signals are only reported)"
    limits = []
    if max_copies is not None:
        limits.append(f"copied text of more than {_items(max_copies)}")
    if max_fast_share is not None:
        limits.append(f"answered more than {max_fast_share:.0%} of items faster than reading time")
    if max_hidden_share is not None:
        limits.append(f"left the page for more than {hidden_seconds} s on more than {max_hidden_share:.0%} of items")
    verdict = "excluded" if action == Study.AttentionAction.EXCLUDE else "flagged for review"
    return f"a worker who {' or '.join(limits)} was {verdict}"


# --- The report -----------------------------------------------------------------------------------

REPORT_FIELDS = [
    "participation",
    "worker",
    "platform",
    "shots",
    "state",
    "items",
    "answered",
    "with_signals",
    "copies",
    "copied_items",
    "fast_items",
    "fast_share",
    "hidden_items",
    "hidden_share",
    "hidden_ms",
    "decision",
    "reason",
]


@dataclass(frozen=True)
class WorkerReport:
    participation_id: int
    worker: str
    platform: str
    shots: int
    state: str
    figures: Figures
    decision: str  # the last IntegrityDecision's, "" before the end of the test step
    reason: str

    def as_dict(self) -> dict:
        f = self.figures
        return {
            "participation": self.participation_id,
            "worker": self.worker,
            "platform": self.platform,
            "shots": self.shots,
            "state": self.state,
            "items": f.items,
            "answered": f.answered,
            "with_signals": f.with_signals,
            "copies": f.copies,
            "copied_items": f.copied_items,
            "fast_items": f.fast_items,
            "fast_share": round(f.fast_share, 4),
            "hidden_items": f.hidden_items,
            "hidden_share": round(f.hidden_share, 4),
            "hidden_ms": f.hidden_ms,
            "decision": self.decision,
            "reason": self.reason,
        }


def report(study: Study) -> list[WorkerReport]:
    """Per crowd worker of the study with a locked test item: the figures and the rule's last decision."""
    participations = list(
        Participation.objects.filter(study=study)
        .select_related("worker", "condition")
        .order_by("condition__shots", "slot_index", "id")
    )
    counts = figures((p.pk for p in participations), hidden_seconds=study.integrity_hidden_seconds)
    decisions: dict[int, tuple[str, str]] = {}
    for pid, decision, reason in IntegrityDecision.objects.filter(participation__in=participations).values_list(
        "participation_id", "decision", "reason"
    ):
        decisions[pid] = (decision, reason)  # ordered by time: the last one stays
    return [
        WorkerReport(
            participation_id=p.pk,
            worker=p.worker.external_id,
            platform=p.worker.platform,
            shots=p.condition.shots,
            state=p.state,
            figures=f,
            decision=decisions.get(p.pk, ("", ""))[0],
            reason=decisions.get(p.pk, ("", ""))[1],
        )
        for p in participations
        if (f := counts.get(p.pk)) is not None
    ]
