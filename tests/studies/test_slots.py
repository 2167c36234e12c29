"""Slot accounting: who holds a slot, which numbers are free, the lock order, and the counts."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotation.models import Participation
from annotation.services.state import slots
from tests.factories import ParticipationFactory

State = Participation.State


def test_the_holding_states_are_the_ones_the_unique_slot_index_is_built_from():
    assert Participation.HOLDING_STATES == (State.CLAIMED, State.TRAINING, State.TEST, State.COMPLETED)
    (constraint,) = [c for c in Participation._meta.constraints if c.name == "participation_one_active_per_slot"]
    assert constraint.condition.children == [("state__in", list(Participation.HOLDING_STATES))]
    assert set(Participation.ACTIVE_STATES) == set(Participation.HOLDING_STATES) - {State.COMPLETED}


@pytest.mark.parametrize(
    ("held", "n", "free"),
    [
        (set(), 3, [0, 1, 2]),
        ({1}, 3, [0, 2]),
        ({0, 1, 2}, 3, []),
        ({0, 3}, 3, [1]),  # N lowered below a holder's number: the holder still takes room
        ({0, 3, 4}, 3, []),
    ],
)
def test_free_numbers_are_the_lowest_unheld_below_n_as_many_as_there_is_room_for(held, n, free):
    assert slots.free_numbers(held, n) == free
    assert slots.free_count(slots=n, filled=len(held)) == len(free)


@pytest.mark.django_db
def test_free_by_condition_counts_only_holders(study):
    ten, twenty = study.conditions.get(shots=10), study.conditions.get(shots=20)
    ParticipationFactory(condition=ten, slot_index=0, state=State.COMPLETED)
    ParticipationFactory(condition=ten, slot_index=1, state=State.ABANDONED)
    ParticipationFactory(condition=twenty, slot_index=2, state=State.EXCLUDED)
    ParticipationFactory(condition=twenty, slot_index=1, state=State.TEST)
    free = slots.free_by_condition(study.conditions.all(), 3)
    assert (free[ten.pk], free[twenty.pk]) == ([1, 2], [0, 2])


@pytest.mark.django_db
def test_lock_study_returns_the_study_and_its_conditions_in_id_order(study):
    with transaction.atomic():
        locked, conditions = slots.lock_study(study.pk)
    assert locked == study
    assert [c.pk for c in conditions] == sorted(study.conditions.values_list("pk", flat=True))


@pytest.mark.django_db
def test_a_returning_worker_gets_their_own_slot_back_else_the_lowest_free_else_none(study):
    condition = study.conditions.get(shots=10)
    back = ParticipationFactory(condition=condition, slot_index=1, state=State.EXCLUDED)
    assert slots.slot_for_return(back, slots=3) == 1
    ParticipationFactory(condition=condition, slot_index=1, state=State.TRAINING)
    assert slots.slot_for_return(back, slots=3) == 0
    ParticipationFactory(condition=condition, slot_index=0, state=State.TRAINING)
    ParticipationFactory(condition=condition, slot_index=2, state=State.TRAINING)
    assert slots.slot_for_return(back, slots=3) is None


@pytest.mark.django_db
def test_counts_per_condition_for_several_studies_in_one_query(make_study):
    study, other = make_study(), make_study(shots=[0], workers=2)
    by_shots = {c.shots: c for c in study.conditions.all()}
    for slot, state in enumerate([State.CLAIMED, State.TRAINING, State.TEST]):
        ParticipationFactory(condition=by_shots[10], slot_index=slot, state=state)
    ParticipationFactory(condition=by_shots[20], slot_index=0, state=State.COMPLETED)
    ParticipationFactory(condition=by_shots[20], slot_index=0, state=State.EXCLUDED)
    ParticipationFactory(condition=by_shots[20], slot_index=1, state=State.ABANDONED)
    ParticipationFactory(condition=other.conditions.get(), slot_index=1, state=State.TEST)
    with CaptureQueriesContext(connection) as queries:
        result = slots.condition_counts([study, other])
    assert len(queries) == 1
    assert [c.shots for c in result[study.pk]] == [0, 10, 20, 30]
    counts = {c.shots: c for c in result[study.pk]}
    ten, twenty, zero = counts[10], counts[20], counts[0]
    assert (ten.filled, ten.claimed, ten.in_training, ten.in_test, ten.free) == (3, 1, 1, 1, 0)
    assert (twenty.filled, twenty.completed, twenty.excluded, twenty.abandoned, twenty.free) == (1, 1, 1, 1, 2)
    assert (zero.filled, zero.free, zero.slots) == (0, 3, 3)
    assert [twenty.in_state(s) for s in State.values] == [0, 0, 0, 1, 1, 1, 0]
    (only,) = result[other.pk]
    assert (only.slots, only.filled, only.free, only.in_state(State.TEST)) == (2, 1, 1, 1)
