"""The integrity rule (annotation/services/verdicts/integrity.py) pinned where mutation testing found it loose
(scripts/mutation.sh integrity). Every row's signals are written out below and each figure, share, reason and
rule phrase is worked out by hand from the module's docstring, never read back from the code."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User

from annotation.models import IntegrityDecision, Participation, Response, Study, Worker
from annotation.services.verdicts import integrity
from annotation.services.verdicts.integrity import Figures
from tasks_app.models import ExampleSet
from tests.factories import (
    ConditionFactory,
    ExampleFactory,
    ExampleSetFactory,
    ParticipationFactory,
    ResponseFactory,
    StudyFactory,
    TrainingSplitFactory,
    WorkerFactory,
)

State, Status, Phase = Participation.State, Response.Status, Response.Phase
Decision, Action = IntegrityDecision.Decision, Study.AttentionAction
AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# A worker breaching all three limits of RULE (10 s away counts as long): items written as
# (visible ms, reading-time estimate ms, copies, ms away), all answered.
RULE = {
    "integrity_max_copies": 1,
    "integrity_max_fast_share": 0.5,
    "integrity_max_hidden_share": 0.5,
    "integrity_hidden_seconds": 10,
}
BREACHER = [
    (20_000, 5_000, 2, 0),  # copied
    (1_000, 5_000, 1, 20_000),  # copied, fast, away
    (1_000, 5_000, 0, 20_000),  # fast, away
]
# Copied 2 items > 1; 2 of 3 answers fast = 67 % > 50 %; 2 of 3 items away = 67 % > 50 %.
BREACHES = (
    "copied text of 2 items (limit 1); "
    "2 of 3 answers faster than reading time (67%, limit 50%); "
    "away over 10 s on 2 of 3 items (67%, limit 50%)"
)


def _worker(study: Study, rows, *, condition=None, slot=0, **fields) -> Participation:
    p = ParticipationFactory(condition=condition or study.conditions.get(), slot_index=slot, **fields)
    for visible, reading, copies, away in rows:
        ResponseFactory(
            participation=p,
            example=ExampleFactory(task=study.task),
            visible_ms=visible,
            reading_ms=reading,
            copy_count=copies,
            hidden_ms=away,
        )
    return p


def _study(**rule) -> Study:
    study = StudyFactory(**rule)
    ConditionFactory(study=study, shots=0)
    return study


# --- The figures ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_figures_count_only_the_asked_workers_locked_test_items():
    study = _study(integrity_hidden_seconds=10)
    p = ParticipationFactory(condition=study.conditions.get(), slot_index=0)
    row = {"participation": p, "reading_ms": 5_000}

    def item(**fields):
        ResponseFactory(example=ExampleFactory(task=study.task), **{**row, **fields})

    item(visible_ms=20_000, hidden_ms=11_000, copy_count=2)  # away (11 s > 10 s), copied
    item(status=Status.NO_ANSWER, active_ms=1_000)  # no signals: the server's 1 s < 5 s is fast
    item(status=Status.SKIPPED, visible_ms=500, hidden_ms=10_005, copy_count=0)  # skipped: never fast; away
    item(visible_ms=100, reading_ms=None, hidden_ms=10_000, copy_count=1)  # no estimate: not fast; 10 s: not away
    item(phase=Phase.TRAINING, visible_ms=100, hidden_ms=50_000, copy_count=5)  # training: not counted
    item(status=Status.PENDING, submitted_at=None)  # not locked: not counted
    # A worker whose page sent nothing: no copies, no time away (0, not None).
    q = ParticipationFactory(condition=study.conditions.get(), slot_index=1)
    ResponseFactory(participation=q, example=ExampleFactory(task=study.task), active_ms=9_000)
    other = ParticipationFactory(condition=study.conditions.get(), slot_index=2)
    ResponseFactory(participation=other, example=ExampleFactory(task=study.task), copy_count=3)
    assert integrity.figures([p.pk, q.pk], hidden_seconds=10) == {
        p.pk: Figures(
            items=4,
            answered=3,
            with_signals=3,
            copies=3,
            copied_items=2,
            fast_items=1,
            hidden_items=2,
            hidden_ms=11_000 + 10_005 + 10_000,
        ),
        q.pk: Figures(items=1, answered=1, with_signals=0, copies=0, copied_items=0, hidden_ms=0),
    }


# --- The decision -----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_judged_directly_a_breacher_of_an_excluding_rule_is_excluded_with_the_rule_recorded():
    study = _study(**RULE, integrity_action=Action.EXCLUDE)
    decision = integrity.judge(_worker(study, BREACHER), at=AT)  # no readmission said: none assumed
    assert (decision.decision, decision.decided_by) == (Decision.EXCLUDED, None)
    assert decision.reason == BREACHES + ": excluded"
    recorded = (decision.max_copies, decision.max_fast_share, decision.max_hidden_share, decision.hidden_seconds)
    assert recorded == (1, 0.5, 0.5, 10)
    assert decision.action == Action.EXCLUDE
    counts = (decision.items, decision.answered, decision.with_signals)
    assert counts + (decision.copied_items, decision.fast_items, decision.hidden_items) == (3, 3, 3, 2, 2, 2)
    # The study's rule edited since: the decision still reads as the rule it was made under.
    study.integrity_max_copies, study.integrity_hidden_seconds = 5, 60
    study.integrity_action = Action.REVIEW
    study.save()
    assert integrity.decision_rule_text(decision) == (
        "a worker who copied text of more than 1 item or answered more than 50% of items faster than reading "
        "time or left the page for more than 10 s on more than 50% of items was excluded"
    )


@pytest.mark.django_db
def test_a_readmitted_breacher_is_flagged_by_the_admin_who_readmitted_them():
    study = _study(**RULE, integrity_action=Action.EXCLUDE)
    admin = User.objects.create_user("admin-readmits")
    decision = integrity.judge(_worker(study, BREACHER), at=AT, readmitted=True, readmitted_by=admin)
    assert (decision.decision, decision.decided_by) == (Decision.REVIEW, admin)
    assert decision.reason == BREACHES + ": readmitted by an admin"


@pytest.mark.django_db
def test_a_breacher_of_a_reviewing_rule_is_flagged_by_nobody():
    study = _study(**RULE, integrity_action=Action.REVIEW)
    admin = User.objects.create_user("admin-irrelevant")
    decision = integrity.judge(_worker(study, BREACHER), at=AT, readmitted=True, readmitted_by=admin)
    assert (decision.decision, decision.decided_by) == (Decision.REVIEW, None)
    assert decision.reason == BREACHES + ": flagged for review"
    assert decision.action == Action.REVIEW


@pytest.mark.django_db
def test_a_worker_without_a_locked_item_under_no_rule_passes_with_no_action():
    study = _study(integrity_action=Action.EXCLUDE)  # an action, but no limit: no rule
    decision = integrity.judge(_worker(study, []), at=AT)
    assert (decision.decision, decision.action, decision.items) == (Decision.PASSED, "", 0)
    assert decision.reason == "0 copied, 0 fast, 0 away of 0 items (no rule)"


def test_a_limit_of_zero_is_a_rule_and_none_is_none():
    assert integrity.has_rule(Study()) is False
    zeros = Study(integrity_max_copies=0, integrity_max_fast_share=0.0, integrity_max_hidden_share=0.0)
    assert integrity.has_rule(zeros) is True


# --- The rule in words ------------------------------------------------------------------------------------


def test_the_rule_in_words_names_only_its_limits_and_its_action():
    assert integrity.rule_text(Study()) == "no rule (the signals are only reported)"
    fast = Study(integrity_max_fast_share=0.25, integrity_action=Action.EXCLUDE)
    assert (
        integrity.rule_text(fast)
        == "a worker who answered more than 25% of items faster than reading time was excluded"
    )
    away = integrity.limits_text(
        max_copies=None, max_fast_share=None, max_hidden_share=0.1, hidden_seconds=45, action=Action.REVIEW
    )
    assert away == "a worker who left the page for more than 45 s on more than 10% of items was flagged for review"
    only_fast = integrity.limits_text(
        max_copies=None, max_fast_share=0.25, max_hidden_share=None, hidden_seconds=45, action=Action.REVIEW
    )
    assert only_fast == "a worker who answered more than 25% of items faster than reading time was flagged for review"


# --- The report -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_report_lists_workers_with_a_locked_item_by_condition_and_slot(django_assert_num_queries):
    study = _study(integrity_hidden_seconds=10)
    zero = study.conditions.get()
    split = TrainingSplitFactory(task=study.task)
    training = ExampleSetFactory(task=study.task, role=ExampleSet.Role.TRAIN, split=split, shots=4)
    four = ConditionFactory(study=study, shots=4, training_set=training)
    one_item = [(1_000, None, 0, 0)]
    a = _worker(study, one_item, condition=four, slot=0, worker=WorkerFactory(external_id="w-a"))
    # b: 1 of 3 answers fast, 2 of 3 items away (20 s each > 10 s).
    rows = [(1_000, 5_000, 0, 20_000), (9_000, 5_000, 0, 20_000), (9_000, 5_000, 0, 0)]
    prolific = WorkerFactory(external_id="w-b", platform=Worker.Platform.PROLIFIC)
    b = _worker(study, rows, condition=zero, slot=1, worker=prolific, state=State.COMPLETED)
    c = _worker(study, one_item, condition=zero, slot=0, worker=WorkerFactory(external_id="w-c"))
    _worker(study, [], condition=zero, slot=2)  # nothing locked yet: not in the report
    integrity.judge(b, at=AT)
    with django_assert_num_queries(3):  # the workers, their figures, their decisions: no query per worker
        rows = integrity.report(study)
    assert [r.participation_id for r in rows] == [c.pk, b.pk, a.pk]  # shots 0 before 4, then by slot
    assert rows[1].as_dict() == {
        "participation": b.pk,
        "worker": "w-b",
        "platform": "prolific",
        "shots": 0,
        "state": "completed",
        "items": 3,
        "answered": 3,
        "with_signals": 3,
        "copies": 0,
        "copied_items": 0,
        "fast_items": 1,
        "fast_share": 0.3333,
        "hidden_items": 2,
        "hidden_share": 0.6667,
        "hidden_ms": 40_000,
        "decision": "passed",
        "reason": "0 copied, 1 fast, 2 away of 3 items (no rule)",
    }
    assert (rows[2].shots, rows[2].state, rows[2].platform, rows[2].decision, rows[2].reason) == (
        4,
        "test",
        "inhouse",
        "",
        "",
    )
