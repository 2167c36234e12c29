"""The slot lifecycle: allowed transitions, their events and timestamps, and races on stale objects."""

from datetime import timedelta
from itertools import product

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import Participation, ParticipationEvent
from annotation.services.state import lifecycle
from tests.factories import ConditionFactory, ParticipationFactory, StudyFactory

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def zero_shot(db):
    return ConditionFactory(shots=0, study=StudyFactory(outcome_codes={"completed": {"code": "DONE42"}}))


@pytest.fixture
def few_shot(task):
    from annotation.services.studies import studies

    study = studies.study_create(task=task, slug="lc", shots=[10])
    return study.conditions.get()


ALLOWED = {(a, b) for a, targets in lifecycle.ALLOWED_TRANSITIONS.items() for b in targets}


@pytest.mark.parametrize("from_state, to_state", sorted(product(State.values, State.values)))
def test_only_the_allowed_transitions_happen(zero_shot, from_state, to_state):
    p = ParticipationFactory(condition=zero_shot, state=from_state)
    if (from_state, to_state) in ALLOWED:
        event = lifecycle.transition(p, to_state=to_state, reason="because")
        assert (event.from_state, event.to_state, event.reason) == (from_state, to_state, "because")
        p.refresh_from_db()
        assert p.state == to_state
    else:
        with pytest.raises(lifecycle.InvalidTransition):
            lifecycle.transition(p, to_state=to_state)
        p.refresh_from_db()
        assert p.state == from_state and not p.events.exists()


def test_a_transition_records_when_and_who_and_finishes_terminal_states(zero_shot):
    admin = get_user_model().objects.create_user("boss")
    p = ParticipationFactory(condition=zero_shot, state=State.TEST)
    at = timezone.now() - timedelta(minutes=5)
    event = lifecycle.transition(p, to_state=State.EXCLUDED, reason="too fast", actor=admin, at=at)
    assert (event.at, event.actor) == (at, admin)
    p.refresh_from_db()
    assert p.finished_at == at and p.last_activity_at == at
    lifecycle.transition(p, to_state=State.TEST, reason="readmitted")
    p.refresh_from_db()
    assert p.finished_at is None  # back in the study


def test_a_stale_object_cannot_move_a_slot_that_already_moved(zero_shot):
    p = ParticipationFactory(condition=zero_shot, state=State.TEST)
    stale = Participation.objects.get(pk=p.pk)
    lifecycle.transition(p, to_state=State.COMPLETED)
    with pytest.raises(lifecycle.InvalidTransition, match="participation is completed, not test"):
        lifecycle.transition(stale, to_state=State.ABANDONED)
    assert list(ParticipationEvent.objects.values_list("to_state", flat=True)) == ["completed"]


def test_begin_sends_zero_shot_to_the_test_and_few_shot_to_training(zero_shot, few_shot):
    zero = ParticipationFactory(condition=zero_shot, state=State.CLAIMED)
    few = ParticipationFactory(condition=few_shot, state=State.CLAIMED)
    lifecycle.begin(zero)
    lifecycle.begin(few)
    assert (zero.state, few.state) == (State.TEST, State.TRAINING)
    lifecycle.begin(few)  # a second call (reload) changes nothing
    assert few.events.count() == 1


def test_finish_test_completes_with_the_study_code_or_a_generated_one(zero_shot, few_shot):
    with_code = ParticipationFactory(condition=zero_shot, state=State.TEST)
    lifecycle.finish_test(with_code)
    with_code.refresh_from_db()
    assert (with_code.state, with_code.completion_code) == (State.COMPLETED, "DONE42")
    generated = ParticipationFactory(condition=few_shot, state=State.TEST)
    lifecycle.finish_test(generated)
    generated.refresh_from_db()
    assert len(generated.completion_code) == 8 and generated.finished_at is not None
    with pytest.raises(lifecycle.InvalidTransition):
        lifecycle.finish_test(generated)


def test_touch_records_activity(zero_shot):
    p = ParticipationFactory(condition=zero_shot, state=State.TEST)
    later = timezone.now() + timedelta(minutes=3)
    lifecycle.touch(p, at=later)
    p.refresh_from_db()
    assert p.last_activity_at == later


def test_touch_writes_at_most_once_per_interval_and_says_when_it_will(zero_shot):
    p = ParticipationFactory(condition=zero_shot, state=State.TEST)
    lifecycle.touch(p, at=timezone.now() + timedelta(hours=1))
    p.refresh_from_db()
    now = p.last_activity_at
    soon, later = now + lifecycle.TOUCH_INTERVAL / 2, now + lifecycle.TOUCH_INTERVAL
    assert not lifecycle.touch_due(p, soon)
    lifecycle.touch(p, at=soon)
    p.refresh_from_db()
    assert p.last_activity_at == now  # not written
    assert lifecycle.touch_due(p, later)
    assert lifecycle.touch_due(p, now - timedelta(seconds=1))  # a clock that went back writes too
    lifecycle.touch(p, at=later)
    p.refresh_from_db()
    assert p.last_activity_at == later


def test_the_events_give_the_time_spent_for_pay(zero_shot):
    start = timezone.now() - timedelta(minutes=30)
    p = ParticipationFactory(condition=zero_shot, state=State.CLAIMED)
    lifecycle.record_claim(p, at=start)
    lifecycle.transition(p, to_state=State.TEST, at=start + timedelta(minutes=2))
    lifecycle.transition(p, to_state=State.COMPLETED, at=start + timedelta(minutes=27))
    events = list(p.events.order_by("at"))
    assert [e.to_state for e in events] == ["claimed", "test", "completed"]
    assert events[-1].at - events[0].at == timedelta(minutes=27)
    assert events[0].reason == "joined"
