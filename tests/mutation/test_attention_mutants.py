"""The attention rule (annotation/services/verdicts/attention/rule.py) pinned where mutation testing found it
loose (scripts/mutation.sh attention). Each worker's checks are written out below and every tally, decision
and reason is counted by hand from the rule in the package's docstring: a check is passed when answered with
S1 = 1, a skip or any other answer fails; N failures or more (limit N > 0) flag or exclude."""

import itertools
from datetime import UTC, datetime

import pytest

from annotation.models import AttentionDecision, Participation, Response, Study
from annotation.services.verdicts import attention
from annotation.services.verdicts.attention.rule import Tally
from tests.factories import (
    ConditionFactory,
    ParticipationFactory,
    ResponseFactory,
    StudyFactory,
    make_classification_task,
)

pytestmark = pytest.mark.django_db
State, Kind, Status = Participation.State, Participation.ExclusionKind, Response.Status
Decision, Action = AttentionDecision.Decision, Study.AttentionAction
AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
_slugs = itertools.count()


def _study(n_checks: int, **rule) -> tuple[Study, list]:
    study = StudyFactory(task=make_classification_task(slug=f"att{next(_slugs)}"), **rule)
    ConditionFactory(study=study, shots=0)
    checks = [
        attention.definitions.create_check(
            study=study, position=i + 1, context="Read this.", question="Choose 'negative'.", expected_label="negative"
        )
        for i in range(n_checks)
    ]
    return study, checks


def _worker(study: Study, checks: list, answers: list[tuple[str, float | None]]) -> Participation:
    """A worker whose check responses have the given (status, stored score), one per check in order."""
    condition = study.conditions.get()
    p = ParticipationFactory(condition=condition, state=State.TEST, slot_index=condition.participations.count())
    for check, (status, score) in zip(checks, answers, strict=True):
        submitted = None if status == Status.PENDING else AT
        ResponseFactory(
            participation=p,
            example=check.example,
            attention_check=check,
            status=status,
            score=score,
            submitted_at=submitted,
        )
    return p


def test_the_tally_counts_pending_checks_apart_and_a_skip_as_a_failure():
    study, checks = _study(4)
    # Right (passed), wrong (failed), not answered yet (pending), skipped with a stored score of 1 (the stored
    # score serves the reports' skip policies; for the rule a skip fails whatever it stores).
    a = _worker(
        study, checks, [(Status.ANSWERED, 1.0), (Status.ANSWERED, 0.0), (Status.PENDING, None), (Status.SKIPPED, 1.0)]
    )
    b = _worker(study, checks, [(Status.ANSWERED, 0.0)] * 4)
    assert attention.rule.tallies([a.pk]) == {a.pk: Tally(checks=4, passed=1, failed=2, pending=1)}
    assert attention.rule.tallies([b.pk]) == {b.pk: Tally(checks=4, passed=0, failed=4, pending=0)}


def test_judged_directly_a_failer_of_an_excluding_rule_is_excluded():
    study, checks = _study(1, attention_fail_limit=1, attention_action=Action.EXCLUDE)
    p = _worker(study, checks, [(Status.ANSWERED, 0.0)])
    decision = attention.rule.judge(p, at=AT)  # no readmission said: none assumed
    assert decision.decision == Decision.EXCLUDED
    assert decision.reason == "failed 1 of 1 attention checks (limit 1): excluded"
    assert decision.action == Action.EXCLUDE


def test_a_worker_within_a_limit_passes_under_the_rule_and_its_action():
    study, checks = _study(2, attention_fail_limit=2, attention_action=Action.REVIEW)
    p = _worker(study, checks, [(Status.ANSWERED, 0.0), (Status.ANSWERED, 1.0)])
    decision = attention.rule.judge(p, at=AT)
    assert (decision.decision, decision.fail_limit, decision.action) == (Decision.PASSED, 2, Action.REVIEW)
    assert decision.reason == "failed 1 of 2 attention checks (limit 2)"


def test_without_a_limit_nobody_is_judged_and_no_action_is_recorded():
    study, checks = _study(1, attention_fail_limit=0, attention_action=Action.EXCLUDE)
    p = _worker(study, checks, [(Status.ANSWERED, 0.0)])
    decision = attention.rule.judge(p, at=AT)
    assert (decision.decision, decision.fail_limit, decision.action) == (Decision.PASSED, 0, "")
    assert decision.reason == "failed 1 of 1 attention checks (no rule)"


def test_only_an_attention_exclusion_is_an_attention_failure():
    study, _ = _study(0)
    condition = study.conditions.get()
    excluded = ParticipationFactory(condition=condition, state=State.EXCLUDED, exclusion_kind=Kind.ATTENTION)
    other = ParticipationFactory(condition=condition, state=State.EXCLUDED, exclusion_kind=Kind.INTEGRITY, slot_index=1)
    # Readmitted after an attention exclusion: completed now (a kind left over says nothing).
    back = ParticipationFactory(condition=condition, state=State.COMPLETED, exclusion_kind=Kind.ATTENTION, slot_index=2)
    assert attention.rule.failed_attention(excluded) is True
    assert attention.rule.failed_attention(other) is False
    assert attention.rule.failed_attention(back) is False
