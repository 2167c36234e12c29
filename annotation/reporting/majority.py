"""Majority vote over a condition's workers (FewCLUE's README): one answer per test item, scored with S1.

All the workers of a condition answer the same items (the whole test set, or the condition's sample), so
the vote is taken per item over the condition's completed workers. An answer wins when more than half of
the votes are for it; an item with no such answer counts as wrong (score 0) and is counted apart, so a
report can print the number beside the figure. A skip is a vote under the skip policy: ``zero`` a vote
that never earns credit, ``empty`` a vote for the empty answer, ``exclude`` no vote.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from annotation.models import Condition, Participation, Response
from annotation.reporting.agreement import Answer, strict_majority
from annotation.reporting.options import MetricOptions
from tasks_app import scoring
from tasks_app.scoring import s1

_SKIP = frozenset({"\x00skipped"})  # a vote no answer can equal: a skip under the zero policy


@dataclass(frozen=True)
class MajorityResult:
    correct: float  # the sum of the items' scores (0..1 each)
    items: int  # test items with at least one vote
    no_majority: int  # items whose vote had no majority (counted as wrong)
    workers: int

    @property
    def accuracy(self) -> float | None:
        """0..1; None without items."""
        return self.correct / self.items if self.items else None

    def plus(self, other: MajorityResult) -> MajorityResult:
        return MajorityResult(
            self.correct + other.correct,
            self.items + other.items,
            self.no_majority + other.no_majority,
            self.workers + other.workers,
        )


NONE = MajorityResult(0.0, 0, 0, 0)


def _vote(response: Response, policy: str) -> Answer | None:
    if response.status != Response.Status.SKIPPED:
        return scoring.answer_set(response.answer)
    if policy == scoring.SKIP_EXCLUDE:
        return None
    return scoring.answer_set(scoring.SKIP_ANSWER) if policy == scoring.SKIP_EMPTY else _SKIP


def condition_majority(*, condition: Condition, options: MetricOptions | None = None) -> MajorityResult:
    """The majority vote of the condition's completed workers on each test item they answered."""
    options = options or MetricOptions()
    responses = (
        Response.objects.filter(
            participation__condition=condition,
            participation__state=Participation.State.COMPLETED,
            phase=Response.Phase.TEST,
            attention_check__isnull=True,
        )
        .exclude(status=Response.Status.PENDING)
        .select_related("example")
        .only("status", "answer", "participation_id", "example__gold_answers")
    )
    votes: dict[int, list[Answer]] = defaultdict(list)
    gold: dict[int, list[str]] = {}
    workers = set()
    for response in responses:
        workers.add(response.participation_id)
        gold[response.example_id] = response.example.gold_answers
        vote = _vote(response, options.skip_policy)
        if vote is not None:
            votes[response.example_id].append(vote)
    correct, no_majority = 0.0, 0
    for example_id, answers in votes.items():
        winner = strict_majority(answers)
        if winner is None:
            no_majority += 1
        elif winner != _SKIP:
            correct += s1(winner, gold[example_id])
    return MajorityResult(correct, len(votes), no_majority, len(workers))
