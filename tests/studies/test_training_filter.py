"""The training filter: rules, logged decisions, exclusion that frees the slot, and admin overrides."""

import pytest
from django.contrib.auth import get_user_model

from annotation.models import FilterDecision, Participation, Response, Study
from annotation.services.admission import entry
from annotation.services.state import lifecycle
from annotation.services.verdicts import overrides, step_end, training_s1
from tests.factories import ExampleFactory, ParticipationFactory, ResponseFactory
from tests.studies.conftest import inhouse

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def condition(make_study):
    def build(rule=Study.FilterRule.NONE, threshold=0.0, workers=3):
        study = make_study(shots=[10], workers=workers, filter_rule=rule, filter_threshold=threshold)
        return study.conditions.get()

    return build


def _trained(condition, scores, *, slot=0, state=State.TRAINING):
    p = ParticipationFactory(condition=condition, slot_index=slot, state=state)
    for i, score in enumerate(scores):
        ResponseFactory(
            participation=p,
            example=ExampleFactory(task=condition.study.task),
            phase=Response.Phase.TRAINING,
            position=i,
            score=score,
        )
    return p


def test_training_s1_is_the_mean_over_locked_training_items_only(condition):
    p = _trained(condition(), [1.0, 0.0, 0.5])
    ResponseFactory(
        participation=p,
        example=ExampleFactory(task=p.task),
        phase=Response.Phase.TRAINING,
        position=9,
        status=Response.Status.PENDING,
        submitted_at=None,
        score=None,
    )
    ResponseFactory(participation=p, example=ExampleFactory(task=p.task), phase=Response.Phase.TEST, score=0.0)
    assert training_s1.of(p) == pytest.approx(0.5)


def test_without_a_scored_training_item_there_is_no_training_s1_none_not_zero_or_nan(condition):
    c = condition()
    assert training_s1.of(_trained(c, [None, None], slot=0)) is None
    assert training_s1.of(ParticipationFactory(condition=c, slot_index=1, state=State.TRAINING)) is None


@pytest.mark.parametrize("rule", [Study.FilterRule.ABSOLUTE, Study.FilterRule.RELATIVE])
def test_a_worker_without_a_training_s1_is_not_excluded_on_it(condition, rule):
    c = condition(rule, 0.5)
    Participation.objects.filter(pk=_trained(c, [0.0], slot=0).pk).update(state=State.COMPLETED)  # a reference
    p = _trained(c, [None], slot=1)
    decision = step_end.end_step(p).filter_decision
    assert decision.passed and decision.training_s1 is None and decision.reference_mean is None
    assert decision.reason == "no scored training item: no training S1 to filter on"
    assert p.state == State.TEST


def test_an_override_of_a_zero_shot_worker_records_no_training_s1(make_study):
    study = make_study(shots=[0], filter_rule=Study.FilterRule.ABSOLUTE, filter_threshold=0.9)
    p = ParticipationFactory(condition=study.conditions.get(), slot_index=0, state=State.TEST)
    decision = overrides.override(p, admit=False, reason="copied answers", actor=None)
    decision.refresh_from_db()
    assert (decision.passed, decision.training_s1) == (False, None)
    assert p.state == State.EXCLUDED


def test_the_longest_override_reason_fits_the_events_column_and_stays_whole_in_the_decision(make_study):
    # The API and the admin take 400 characters; the event's reason column holds 300 (PostgreSQL refuses more).
    study = make_study(shots=[0])
    p = ParticipationFactory(condition=study.conditions.get(), slot_index=0, state=State.TEST)
    reason = "r" * 400
    decision = overrides.override(p, admit=False, reason=reason, actor=None)
    event = p.events.order_by("at", "pk").last()
    assert len(event.reason) == 300 and event.reason.startswith("admin override: rrr") and event.reason.endswith("…")
    decision.refresh_from_db()
    assert decision.reason == reason


def test_without_a_rule_everyone_goes_on_to_the_test(condition):
    p = _trained(condition(), [0.0])
    decision = step_end.end_step(p).filter_decision
    assert decision.passed and "no filter" in decision.reason
    assert p.state == State.TEST


def test_absolute_rule_excludes_below_the_minimum_and_logs_why(condition):
    c = condition(Study.FilterRule.ABSOLUTE, 0.6)
    good, bad = _trained(c, [1.0, 0.5], slot=0), _trained(c, [0.5, 0.5], slot=1)
    assert step_end.end_step(good).filter_decision.passed
    decision = step_end.end_step(bad).filter_decision
    assert not decision.passed
    assert decision.reason == "training S1 0.500 < minimum 0.600"
    bad.refresh_from_db()
    assert bad.state == State.EXCLUDED and bad.finished_at is not None
    event = bad.events.get(to_state=State.EXCLUDED)
    assert event.reason.startswith("failed training filter: training S1 0.500")


def test_an_excluded_worker_s_slot_reopens_for_a_fresh_worker_and_they_stay_ineligible(condition, make_study):
    c = condition(Study.FilterRule.ABSOLUTE, 1.0, workers=1)
    study = c.study
    joined = entry.join_study(study=study, params=inhouse("weak")).participation
    lifecycle.begin(joined)
    ResponseFactory(
        participation=joined, example=ExampleFactory(task=study.task), phase=Response.Phase.TRAINING, score=0.0
    )
    assert entry.join_study(study=study, params=inhouse("waiting")).outcome == entry.Outcome.FULL
    step_end.end_step(joined)
    assert joined.state == State.EXCLUDED
    fresh = entry.join_study(study=study, params=inhouse("fresh"))
    assert fresh.outcome == entry.Outcome.JOINED and fresh.participation.slot_index == joined.slot_index
    back = entry.join_study(study=study, params=inhouse("weak"))  # back to the kind page, not to a slot
    assert back.outcome == entry.Outcome.RESUMED and back.participation.pk == joined.pk
    assert back.participation.state == State.EXCLUDED
    other = make_study(shots=[10], workers=1)
    assert entry.join_study(study=other, params=inhouse("weak")).outcome == entry.Outcome.ALREADY_TOOK_PART


def test_an_admin_can_readmit_an_excluded_worker_with_a_logged_reason(condition):
    admin = get_user_model().objects.create_user("boss")
    c = condition(Study.FilterRule.ABSOLUTE, 0.9)
    p = _trained(c, [0.5])
    step_end.end_step(p)
    decision = overrides.override(p, admit=True, reason="network trouble in training", actor=admin)
    assert (decision.passed, decision.is_override, decision.decided_by) == (True, True, admin)
    assert decision.reason == "network trouble in training"
    assert p.state == State.TEST and p.finished_at is None
    event = p.events.get(from_state=State.EXCLUDED)
    assert (event.to_state, event.actor) == (State.TEST, admin)
    assert event.reason == "admin override: network trouble in training"
    assert [d.is_override for d in FilterDecision.objects.filter(participation=p)] == [False, True]


def test_an_admin_can_exclude_a_completed_worker_and_readmitting_completes_them_again(condition):
    p = _trained(condition(), [1.0], state=State.COMPLETED)
    ResponseFactory(participation=p, example=ExampleFactory(task=p.task), phase=Response.Phase.TEST, score=1.0)
    overrides.override(p, admit=False, reason="copied answers", actor=None)
    assert p.state == State.EXCLUDED
    overrides.override(p, admit=True, reason="checked: not copied", actor=None)
    assert p.state == State.COMPLETED  # every test item was answered: back to completed, not to an empty test


def test_an_admin_can_exclude_a_worker_who_passed(condition):
    p = _trained(condition(), [1.0])
    step_end.end_step(p)
    decision = overrides.override(p, admit=False, reason="copied answers", actor=None)
    assert not decision.passed and p.state == State.EXCLUDED


def test_readmitting_is_refused_once_the_slot_went_to_someone_else_and_the_condition_is_full(condition):
    c = condition(Study.FilterRule.ABSOLUTE, 0.9)
    p = _trained(c, [0.0], slot=0)
    step_end.end_step(p)
    for slot in range(3):  # fresh workers took slot 0 and the two others
        ParticipationFactory(condition=c, slot_index=slot, state=State.TRAINING)
    with pytest.raises(lifecycle.InvalidTransition, match="slot has been given to another worker"):
        overrides.override(p, admit=True, reason="sorry", actor=None)
    p.refresh_from_db()
    assert (p.state, p.slot_index) == (State.EXCLUDED, 0)
    assert not FilterDecision.objects.filter(is_override=True).exists()
    assert not p.events.filter(reason__startswith="admin override").exists()


def test_a_readmitted_worker_whose_slot_was_retaken_gets_another_free_slot_and_the_log_says_so(condition):
    c = condition(Study.FilterRule.ABSOLUTE, 0.9)
    p = _trained(c, [0.0], slot=0)
    step_end.end_step(p)
    ParticipationFactory(condition=c, slot_index=0, state=State.TRAINING)  # a fresh worker took slot 0
    overrides.override(p, admit=True, reason="sorry", actor=None)
    assert (p.state, p.slot_index) == (State.TEST, 1)
    assert p.events.get(to_state=State.TEST).reason == "admin override: sorry (slot 0 was taken meanwhile: now slot 1)"
    held = Participation.objects.filter(condition=c, state__in=Participation.HOLDING_STATES)
    assert sorted(held.values_list("slot_index", flat=True)) == [0, 1]


def test_an_excluded_worker_gets_a_completion_code_so_the_platform_pays_them(condition):
    c = condition(Study.FilterRule.ABSOLUTE, 0.9)
    p = _trained(c, [0.0])
    step_end.end_step(p)
    p.refresh_from_db()
    codes = c.study.outcome_codes
    assert p.state == State.EXCLUDED and p.completion_code == codes["screened_out"]["code"]
    assert len(p.completion_code) == 8 and p.completion_code != codes["completed"]["code"]
    passed = _trained(c, [1.0], slot=1)
    overrides.override(passed, admit=False, reason="copied answers", actor=None)
    assert passed.completion_code == codes["screened_out"]["code"]


def test_an_excluded_worker_gets_the_study_s_screened_out_code_when_it_has_one(make_study):
    study = make_study(
        shots=[10],
        filter_rule=Study.FilterRule.ABSOLUTE,
        filter_threshold=0.9,
        outcome_codes={"completed": {"code": "DONE1"}, "screened_out": {"code": "PAYME"}},
    )
    p = _trained(study.conditions.get(), [0.0])
    step_end.end_step(p)
    p.refresh_from_db()
    assert p.completion_code == "PAYME"


def test_an_override_needs_a_reason(condition):
    p = _trained(condition(), [1.0], state=State.EXCLUDED)
    with pytest.raises(ValueError, match="needs a reason"):
        overrides.override(p, admit=True, reason="  ", actor=None)
    assert not FilterDecision.objects.exists()


def test_an_override_from_a_state_that_does_not_allow_it_changes_nothing(condition):
    p = _trained(condition(), [1.0], state=State.ABANDONED)
    with pytest.raises(lifecycle.InvalidTransition):
        overrides.override(p, admit=False, reason="late", actor=None)
    assert not FilterDecision.objects.exists()
