"""Majority vote over a condition's workers (FewCLUE's README): one answer per test item, scored with S1.

All the workers of a condition answer the same items (the whole test set, or the condition's sample), so
the vote is taken per item over the condition's completed workers. The README votes without saying what a
tie does, so two rules are reported side by side:

- strict: an answer wins when more than half of the votes are for it; an item with no such answer counts as
  wrong (score 0) and is counted apart, so a report can print the number beside the figure;
- plurality: the answer with the most votes wins; a tie is broken by a draw seeded with the condition's
  sample seed and the item (``tie_break``), so anyone can redo it; the ties are counted.

A skip is a vote under the skip policy: ``zero`` a vote that never earns credit, ``empty`` a vote for the
empty answer, ``exclude`` no vote (the votes cast are then the answers given).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.models import Condition, Participation, Response
from annotation.reporting.agreement import Answer, strict_majority
from annotation.reporting.options import MetricOptions
from tasks_app import scoring
from tasks_app.scoring import s1

_SKIP = frozenset({"\x00skipped"})  # a vote no answer can equal: a skip under the zero policy


@dataclass(frozen=True)
class MajorityResult:
    correct: float  # strict rule: the sum of the items' scores (0..1 each)
    items: int  # test items with at least one vote
    no_majority: int  # items whose vote had no strict majority (counted as wrong under the strict rule)
    workers: int
    plurality_correct: float = 0.0  # plurality rule: the sum of the items' scores
    ties: int = 0  # items whose plurality was a tie, broken by the seeded draw

    @property
    def accuracy(self) -> float | None:
        """Strict rule, 0..1; None without items."""
        return self.correct / self.items if self.items else None

    @property
    def plurality_accuracy(self) -> float | None:
        """Plurality rule with the seeded tie-break, 0..1; None without items."""
        return self.plurality_correct / self.items if self.items else None

    def plus(self, other: MajorityResult) -> MajorityResult:
        return MajorityResult(
            self.correct + other.correct,
            self.items + other.items,
            self.no_majority + other.no_majority,
            self.workers + other.workers,
            self.plurality_correct + other.plurality_correct,
            self.ties + other.ties,
        )


NONE = MajorityResult(0.0, 0, 0, 0)


def _order(answer: Answer) -> tuple[str, ...]:
    return tuple(sorted(answer))


def tie_break(answers: Sequence[Answer], *, seed: int, item: str) -> tuple[Answer, bool]:
    """The plurality of ``answers`` and whether it was a tie: among the answers with the most votes (sorted,
    so the draw does not depend on the order the votes came in) one is drawn by ``random.Random`` seeded with
    ``"{seed}:{item}"`` (the item's id in its source file)."""
    counts = Counter(answers)
    top = max(counts.values())
    tied = sorted((a for a, n in counts.items() if n == top), key=_order)
    if len(tied) == 1:
        return tied[0], False
    return random.Random(f"{seed}:{item}").choice(tied), True


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
        .only("status", "answer", "participation_id", "example__gold_answers", "example__source_id")
    )
    votes: dict[int, list[Answer]] = defaultdict(list)
    gold: dict[int, list[str]] = {}
    source: dict[int, str] = {}
    workers = set()
    for response in responses:
        workers.add(response.participation_id)
        gold[response.example_id] = response.example.gold_answers
        source[response.example_id] = response.example.source_id
        vote = _vote(response, options.skip_policy)
        if vote is not None:
            votes[response.example_id].append(vote)
    correct, no_majority, plurality, ties = 0.0, 0, 0.0, 0
    seed = condition.sample_seed or 0
    for example_id, answers in votes.items():
        winner = strict_majority(answers)
        if winner is None:
            no_majority += 1
        elif winner != _SKIP:
            correct += s1(winner, gold[example_id])
        most, tied = tie_break(answers, seed=seed, item=source[example_id])
        ties += tied
        if most != _SKIP:
            plurality += s1(most, gold[example_id])
    return MajorityResult(correct, len(votes), no_majority, len(workers), plurality, ties)
