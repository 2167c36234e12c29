"""The attention checks' report: per crowd worker, checks passed, failed and pending, and the decision."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import AttentionDecision, Participation, Study
from annotation.services.verdicts.attention.rule import tallies


@dataclass(frozen=True)
class WorkerReport:
    participation_id: int
    worker: str
    platform: str
    shots: int
    state: str
    checks: int
    passed: int
    failed: int
    pending: int
    decision: str  # the last AttentionDecision's, "" before the end of the test step

    def as_dict(self) -> dict:
        return {
            "participation": self.participation_id,
            "worker": self.worker,
            "platform": self.platform,
            "shots": self.shots,
            "state": self.state,
            "checks": self.checks,
            "passed": self.passed,
            "failed": self.failed,
            "pending": self.pending,
            "decision": self.decision,
        }


REPORT_FIELDS = [
    "participation",
    "worker",
    "platform",
    "shots",
    "state",
    "checks",
    "passed",
    "failed",
    "pending",
    "decision",
]


def report(study: Study) -> list[WorkerReport]:
    """Per crowd worker of the study who has been given checks: passed / failed, and the rule's decision."""
    participations = list(
        Participation.objects.filter(study=study)
        .select_related("worker", "condition")
        .order_by("condition__shots", "slot_index", "id")
    )
    counts = tallies(p.pk for p in participations)
    decisions: dict[int, str] = {}
    for pid, decision in AttentionDecision.objects.filter(participation__in=participations).values_list(
        "participation_id", "decision"
    ):
        decisions[pid] = decision  # ordered by time: the last one stays
    return [
        WorkerReport(
            participation_id=p.pk,
            worker=p.worker.external_id,
            platform=p.worker.platform,
            shots=p.condition.shots,
            state=p.state,
            checks=t.checks,
            passed=t.passed,
            failed=t.failed,
            pending=t.pending,
            decision=decisions.get(p.pk, ""),
        )
        for p in participations
        if (t := counts.get(p.pk)) is not None
    ]
