"""The training filter (annotation/services/verdicts/training_filter.py, training_s1.py, filter_groups.py)
pinned where mutation testing found it loose (scripts/mutation.sh training). Each worker's training scores are
written out below, and every S1, reference, floor, verdict and reason is worked out by hand from the rules in
the modules' docstrings (pass when training S1 >= threshold; relative: >= the others' mean - threshold)."""

import itertools
import logging
from datetime import UTC, datetime, timedelta

import pytest

from annotation.models import AuditEntry, FilterDecision, Participation, Response, Study
from annotation.services.studies import studies
from annotation.services.verdicts import filter_groups, training_filter, training_s1
from tests.factories import ExampleFactory, ParticipationFactory, ResponseFactory, make_classification_task

pytestmark = pytest.mark.django_db
State, Kind, Phase, Status = Participation.State, Participation.ExclusionKind, Response.Phase, Response.Status
Rule = Study.FilterRule
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
_slugs = itertools.count()


def _study(rule=Rule.RELATIVE, *, shots=(10,), workers=3, threshold=0.2, timeout=60) -> Study:
    n = next(_slugs)
    study = studies.study_create(
        task=make_classification_task(slug=f"tf{n}"),
        slug=f"tf-study-{n}",
        split_number=1,
        shots=shots,
        workers_per_condition=workers,
        filter_rule=rule,
        filter_threshold=threshold,
        filter_group_timeout_minutes=timeout,
    )
    studies.change_status(study=study, to_status=Study.Status.OPEN)
    return study


def _condition(study: Study, shots: int = 10):
    return study.conditions.get(shots=shots)


def _trained(condition, *scores, slot: int, state=State.TEST, at: datetime | None = None) -> Participation:
    """A worker whose locked training items scored ``scores``, judged by the filter as the end of training
    does (a pending verdict under the relative rule), at ``at``."""
    p = ParticipationFactory(condition=condition, slot_index=slot, state=State.TRAINING)
    for score in scores:
        ResponseFactory(
            participation=p, example=ExampleFactory(task=condition.study.task), phase=Phase.TRAINING, score=score
        )
    training_filter.evaluate(p)
    if at is not None:
        p.filter_decisions.update(at=at)
    Participation.all_objects.filter(pk=p.pk).update(state=state)
    p.refresh_from_db()
    return p


def _pending_decision(p: Participation, **fields) -> FilterDecision:
    values = {"rule": Rule.RELATIVE, "threshold": 0.2, "passed": True, "reason": "pending", "at": NOW}
    return FilterDecision.objects.create(participation=p, **{"pending_group": True, **values, **fields})


# --- Training S1 ------------------------------------------------------------------------------------------


def test_training_s1_per_worker_leaves_out_workers_without_a_locked_training_item():
    condition = _condition(_study())
    task = condition.study.task
    p = ParticipationFactory(condition=condition, slot_index=0)
    right, wrong = ExampleFactory(task=task), ExampleFactory(task=task)
    ResponseFactory(participation=p, example=right, phase=Phase.TRAINING, score=1.0)
    ResponseFactory(participation=p, example=wrong, phase=Phase.TRAINING, score=0.0)
    ResponseFactory(
        participation=p,
        example=ExampleFactory(task=task),
        phase=Phase.TRAINING,
        status=Status.PENDING,
        submitted_at=None,
    )
    ResponseFactory(participation=p, example=ExampleFactory(task=task), score=0.5)  # a test item
    q = ParticipationFactory(condition=condition, slot_index=1)  # test items only: no training S1
    ResponseFactory(participation=q, example=ExampleFactory(task=task), score=1.0)
    other = ParticipationFactory(condition=condition, slot_index=2)  # not asked about
    ResponseFactory(participation=other, example=ExampleFactory(task=task), phase=Phase.TRAINING, score=1.0)
    assert training_s1.by_participation([p.pk, q.pk]) == {p.pk: 0.5}  # (1 + 0) / 2
    assert training_s1.by_participation([p.pk], example_ids=[right.pk]) == {p.pk: 1.0}


# --- The absolute rule ------------------------------------------------------------------------------------


def test_the_absolute_rule_passes_a_worker_at_the_minimum_and_records_the_rule():
    condition = _condition(_study(Rule.ABSOLUTE, threshold=0.5))
    at = ParticipationFactory(condition=condition, slot_index=0, state=State.TRAINING)
    ResponseFactory(
        participation=at, example=ExampleFactory(task=condition.study.task), phase=Phase.TRAINING, score=0.5
    )
    below = ParticipationFactory(condition=condition, slot_index=1, state=State.TRAINING)
    ResponseFactory(
        participation=below, example=ExampleFactory(task=condition.study.task), phase=Phase.TRAINING, score=0.25
    )
    passed, failed = training_filter.evaluate(at), training_filter.evaluate(below)
    assert (passed.passed, passed.training_s1, passed.rule, passed.reference) == (True, 0.5, "absolute", "")
    assert passed.reason == "training S1 0.500 >= minimum 0.500"
    assert (failed.passed, failed.training_s1, failed.pending_group) == (False, 0.25, False)
    assert failed.reason == "training S1 0.250 < minimum 0.500"


# --- The group: who is in it, who waits -------------------------------------------------------------------


def test_the_group_is_the_conditions_workers_the_filter_itself_judged():
    study = _study(shots=(10, 20))
    ten = _condition(study)
    a = _trained(ten, 0.5, slot=0)
    ParticipationFactory(condition=ten, slot_index=1, state=State.TRAINING)  # still training: no decision
    overridden = ParticipationFactory(condition=ten, slot_index=2, state=State.EXCLUDED)
    _pending_decision(overridden, pending_group=False, is_override=True, passed=False, reason="an admin's")
    _trained(_condition(study, 20), 0.5, slot=0)  # another condition's
    assert list(filter_groups.trained(ten)) == [a]


def test_the_undecided_are_the_conditions_pending_workers_still_in_the_study():
    study = _study(shots=(10, 20))
    ten = _condition(study)
    a = _trained(ten, 0.5, slot=0)
    _trained(ten, 0.5, slot=1, state=State.EXCLUDED)  # excluded (say for attention) before the verdict
    done = _trained(ten, 0.5, slot=2, state=State.COMPLETED)
    _pending_decision(done, pending_group=False, reason="the group's verdict")
    ParticipationFactory(condition=ten, slot_index=3, state=State.TEST)  # no decision at all
    _trained(_condition(study, 20), 0.5, slot=0)  # another condition's pending worker
    assert list(filter_groups.undecided(ten)) == [a]


def test_a_group_is_ready_at_its_timeout_to_the_minute_and_not_before():
    study = _study(shots=(10, 20, 30), workers=3, timeout=60)
    ten, twenty, thirty = (_condition(study, s) for s in (10, 20, 30))
    assert filter_groups.is_ready(ten, now=NOW, force=True) is False  # nobody to judge
    _trained(ten, 0.5, slot=0, at=NOW)
    _trained(ten, 0.6, slot=1, at=NOW + timedelta(minutes=10))
    # Another condition's pending worker, waiting far longer, does not make this group's time.
    _trained(thirty, 0.5, slot=0, at=NOW - timedelta(hours=5))
    _trained(thirty, 0.5, slot=1, at=NOW - timedelta(hours=5))
    assert filter_groups.is_ready(ten, now=NOW + timedelta(minutes=59)) is False  # 2 of 3, 59 min
    assert filter_groups.is_ready(ten, now=NOW + timedelta(minutes=60)) is True  # the oldest: 60 min
    # Three trained (the whole group) but a fourth still in training: the group waits for them.
    for slot in range(3):
        _trained(twenty, 0.5, slot=slot, at=NOW)
    ParticipationFactory(condition=twenty, slot_index=3, state=State.TRAINING)
    assert filter_groups.is_ready(twenty, now=NOW + timedelta(minutes=1)) is False


# --- The verdicts -----------------------------------------------------------------------------------------


def test_a_worker_at_the_floor_passes_and_every_verdict_is_recorded_and_logged(caplog):
    condition = _condition(_study(threshold=0.25))
    a = _trained(condition, 0.25, slot=0)
    b = _trained(condition, 0.5, slot=1)
    c = _trained(condition, 0.5, slot=2)
    caplog.set_level(logging.INFO, logger=filter_groups.__name__)
    decisions = filter_groups.decide(condition, now=NOW, force=True)
    # a: others 0.5 and 0.5, mean 0.5, floor 0.5 - 0.25 = 0.25: exactly at it, passes.
    # b: others 0.25 and 0.5, mean 0.375, floor 0.125. c: the same as b.
    assert [d.participation_id for d in decisions] == [a.pk, b.pk, c.pk]
    first = decisions[0]
    assert (first.passed, first.rule, first.reference, first.reference_mean) == (True, "relative", "mean", 0.5)
    assert first.reason == (
        "training S1 0.250 >= 0.250 (others' mean 0.500 - 0.250; group of 3; others' training S1 0.500, 0.500)"
    )
    assert decisions[1].reason == (
        "training S1 0.500 >= 0.125 (others' mean 0.375 - 0.250; group of 3; others' training S1 0.250, 0.500)"
    )
    assert [r.getMessage() for r in caplog.records if r.name == filter_groups.__name__] == [
        f"training filter (relative, group) participation {p.pk} in condition {condition.pk}: passed; {d.reason}"
        for p, d in zip((a, b, c), decisions, strict=True)
    ]


def test_a_worker_without_a_training_s1_passes_and_one_without_others_to_compare_with_too(caplog):
    condition = _condition(_study())
    unscored = _trained(condition, None, slot=0)  # no scored item: passed at once, in the group still
    alone = _trained(condition, 0.7, slot=1)
    gone = _trained(condition, 0.1, slot=2)
    # gone's score is no longer there by the verdict (an item whose score was cleared): nothing to judge.
    Response.objects.filter(participation=gone).update(score=None)
    caplog.set_level(logging.INFO, logger=filter_groups.__name__)
    decisions = {d.participation_id: d for d in filter_groups.decide(condition, now=NOW, force=True)}
    assert unscored.pk not in decisions
    assert (decisions[alone.pk].passed, decisions[alone.pk].reference_mean) == (True, None)
    assert decisions[alone.pk].reason == (
        "training S1 0.700; nobody else in the group has a training S1 (group of 3; others' training S1 none)"
    )
    assert (decisions[gone.pk].passed, decisions[gone.pk].reference_mean) == (True, None)
    assert decisions[gone.pk].reason == "no scored training item: no training S1 to filter on"


def test_a_long_groups_reason_is_cut_to_its_500_characters():
    condition = _condition(_study(workers=62))
    for slot in range(62):
        _trained(condition, 0.5, slot=slot)
    decisions = filter_groups.decide(condition, now=NOW, force=True)
    # 61 others of 0.500: the figures alone run to 61 * 7 - 2 = 425 characters after an 85-character head.
    head = "training S1 0.500 >= 0.300 (others' mean 0.500 - 0.200; group of 62; others' training S1 0.500, 0.500"
    assert {len(d.reason) for d in decisions} == {500}
    assert all(d.reason.startswith(head) for d in decisions)


# --- The sweep --------------------------------------------------------------------------------------------


def test_a_forced_sweep_judges_every_group_and_audits_each_with_its_counts(caplog):
    study = _study(shots=(10, 20))
    ten, twenty = _condition(study, 10), _condition(study, 20)
    a, b = _trained(ten, 0.9, slot=0), _trained(ten, 0.1, slot=1)
    c, d = _trained(twenty, 0.8, slot=0), _trained(twenty, 0.8, slot=1)
    caplog.set_level(logging.INFO, logger=filter_groups.__name__)
    made = filter_groups.decide_due(now=NOW, study=study, force=True)
    # ten: a against 0.1 (floor -0.1) passes, b against 0.9 (floor 0.7) fails; twenty: both at 0.8 vs 0.6 pass.
    assert sorted((m.participation_id, m.passed) for m in made) == [
        (a.pk, True),
        (b.pk, False),
        (c.pk, True),
        (d.pk, True),
    ]
    failed = "training S1 0.100 < 0.700 (others' mean 0.900 - 0.200; group of 2; others' training S1 0.900)"
    assert [m.reason for m in made if not m.passed] == [failed]
    logged = [r.getMessage() for r in caplog.records if r.name == filter_groups.__name__]
    assert f"training filter (relative, group) participation {b.pk} in condition {ten.pk}: excluded; {failed}" in logged
    b.refresh_from_db()
    assert (b.state, b.exclusion_kind) == (State.EXCLUDED, Kind.TRAINING_FILTER)
    assert b.events.get(to_state=State.EXCLUDED).at == NOW
    audits = AuditEntry.objects.filter(action=AuditEntry.Action.FILTER_FORCED).order_by("id")
    ten_pks = sorted(m.pk for m in made if m.participation.condition_id == ten.pk)
    twenty_pks = sorted(m.pk for m in made if m.participation.condition_id == twenty.pk)
    assert [(x.after, sorted(x.detail["decisions"])) for x in audits] == [
        ({"shots": 10, "judged": 2, "excluded": 1}, ten_pks),
        ({"shots": 20, "judged": 2, "excluded": 0}, twenty_pks),
    ]


def test_the_sweeps_own_verdicts_are_not_audited_as_forced():
    condition = _condition(_study(workers=2))
    _trained(condition, 0.5, slot=0)
    _trained(condition, 0.5, slot=1)  # the group complete, nobody training: due now
    assert len(filter_groups.decide_due(now=NOW)) == 2
    assert not AuditEntry.objects.filter(action=AuditEntry.Action.FILTER_FORCED).exists()


def test_a_failing_verdict_after_the_commit_is_left_to_the_sweep(monkeypatch, django_capture_on_commit_callbacks):
    condition = _condition(_study())

    def broken(condition, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(filter_groups, "decide", broken)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        filter_groups.decide_after_commit(condition.pk)  # the worker's request goes on
    assert len(callbacks) == 1
