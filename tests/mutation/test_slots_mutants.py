"""Slot accounting (annotation/services/state/slots.py) pinned where mutation testing found it loose
(scripts/mutation.sh slots). Expectations counted by hand from the rule in the module's docstring."""

import pytest
from django.utils import timezone

from annotation.models import Participation
from annotation.services.state import slots
from tasks_app.models import ExampleSet
from tests.factories import (
    ConditionFactory,
    ExampleSetFactory,
    ParticipationFactory,
    StudyFactory,
    TrainingSplitFactory,
)

State = Participation.State


def test_free_count_never_below_zero():
    assert slots.free_count(slots=3, filled=1) == 2
    assert slots.free_count(slots=3, filled=3) == 0
    assert slots.free_count(slots=2, filled=5) == 0


def test_free_numbers_lowest_unheld_as_many_as_are_free():
    assert slots.free_numbers(set(), 3) == [0, 1, 2]
    assert slots.free_numbers({1}, 3) == [0, 2]
    assert slots.free_numbers({0, 1, 2}, 3) == []
    # N lowered to 2 with holders 0 and 5: nothing free (two holders), though slot 1 is unheld.
    assert slots.free_numbers({0, 5}, 2) == []
    # N = 4, a holder above it at 7 and one at 0: two free, the lowest unheld numbers 1 and 2.
    assert slots.free_numbers({0, 7}, 4) == [1, 2]


def test_holding_names_the_holding_states_through_a_prefix():
    assert slots.holding() == slots.Q(state__in=Participation.HOLDING_STATES)
    assert slots.holding("participations__") == slots.Q(participations__state__in=Participation.HOLDING_STATES)
    assert set(Participation.HOLDING_STATES) == {State.CLAIMED, State.TRAINING, State.TEST, State.COMPLETED}


def _study(workers=3, **fields):
    study = StudyFactory(workers_per_condition=workers, **fields)
    split = TrainingSplitFactory(task=study.task)
    training = ExampleSetFactory(task=study.task, role=ExampleSet.Role.TRAIN, split=split, shots=4)
    # The few-shot condition made first: ordered by shots, it still comes second.
    four = ConditionFactory(study=study, shots=4, training_set=training)
    return study, ConditionFactory(study=study, shots=0), four


def _p(condition, slot, state, **fields):
    return ParticipationFactory(condition=condition, slot_index=slot, state=state, **fields)


@pytest.mark.django_db
def test_held_numbers_count_holders_only_and_can_leave_one_out():
    study, zero, four = _study()
    a = _p(zero, 0, State.TEST)
    _p(zero, 1, State.ABANDONED)  # keeps its number, holds nothing
    _p(zero, 2, State.COMPLETED, withdrawn_at=timezone.now())  # withdrawn: the place was used, still held
    _p(four, 1, State.CLAIMED)  # another condition
    ParticipationFactory(condition=zero, slot_index=None, is_preview=True, state=State.TEST)
    assert slots.held_numbers(zero.pk) == {0, 2}
    assert slots.held_numbers(zero.pk, exclude_participation=a.pk) == {2}
    assert slots.held_numbers(four.pk) == {1}
    assert slots.free_by_condition([zero, four], 3) == {zero.pk: [1], four.pk: [0, 2]}
    assert slots.free_by_condition([], 3) == {}


@pytest.mark.django_db
def test_slot_for_return_takes_back_the_own_number_or_the_lowest_free():
    study, zero, _ = _study()
    back = _p(zero, 2, State.ABANDONED)
    _p(zero, 0, State.TEST)
    assert slots.slot_for_return(back, slots=3) == 2  # 1 and 2 free: their own
    _p(zero, 2, State.CLAIMED)  # someone took 2 meanwhile
    assert slots.slot_for_return(back, slots=3) == 1
    _p(zero, 1, State.TRAINING)
    assert slots.slot_for_return(back, slots=3) is None  # full
    # A holder taking their own slot back (a readmission counts the others only): their own number.
    holder = Participation.objects.get(condition=zero, slot_index=0)
    assert slots.slot_for_return(holder, slots=3) == 0


@pytest.mark.django_db
def test_lock_study_returns_the_study_and_its_conditions_in_id_order():
    study, zero, four = _study()
    StudyFactory()  # another study's conditions are not locked
    locked, conditions = slots.lock_study(study.pk)
    assert locked == study and conditions == [four, zero]  # by id


@pytest.mark.django_db
def test_condition_counts_one_per_state_and_the_holders():
    study, zero, four = _study(workers=4)
    _p(zero, 0, State.CLAIMED)
    _p(zero, 1, State.TRAINING)
    _p(zero, 2, State.TEST)
    _p(zero, 3, State.COMPLETED)
    _p(zero, 0, State.EXCLUDED)
    _p(zero, 1, State.ABANDONED)
    _p(zero, 2, State.ABANDONED)
    _p(zero, 3, State.DECLINED)
    ParticipationFactory(condition=zero, slot_index=None, is_preview=True, state=State.TEST)
    _p(four, 0, State.COMPLETED)
    empty_study = StudyFactory()
    counts = slots.condition_counts([study, empty_study])
    assert counts[empty_study.pk] == []
    first, second = counts[study.pk]
    assert first == slots.ConditionCounts(
        condition_id=zero.pk,
        study_id=study.pk,
        shots=0,
        slots=4,
        filled=4,
        claimed=1,
        in_training=1,
        in_test=1,
        completed=1,
        excluded=1,
        abandoned=2,
        declined=1,
        design_slots=4,  # no pilot: the slots open now are the design's
    )
    assert first.free == 0
    assert [first.in_state(s) for s in (State.CLAIMED, State.ABANDONED, State.DECLINED)] == [1, 2, 1]
    assert (second.condition_id, second.shots, second.filled, second.completed, second.free) == (four.pk, 4, 1, 1, 3)


def test_the_slots_open_now_are_the_pilots_share_only_while_piloting():
    assert slots.open_slots_of(workers=3, pilot=2, piloting=True) == 2
    assert slots.open_slots_of(workers=3, pilot=5, piloting=True) == 3  # a share above the design: the design
    assert slots.open_slots_of(workers=3, pilot=2, piloting=False) == 3  # the rest opened, or never piloted
    assert slots.open_slots_of(workers=3, pilot=None, piloting=True) == 3
    assert slots.open_slots_of(workers=3, pilot=0, piloting=True) == 3


@pytest.mark.django_db
def test_a_studys_open_slots_and_counts_follow_its_pilot():
    now = timezone.now()
    piloting = StudyFactory(workers_per_condition=3, pilot_workers_per_condition=1, pilot_opened_at=now)
    opened = StudyFactory(
        workers_per_condition=3, pilot_workers_per_condition=1, pilot_opened_at=now, rest_opened_at=now
    )
    planned = StudyFactory(workers_per_condition=3, pilot_workers_per_condition=1)  # a share, never opened
    for study in (piloting, opened, planned):
        ConditionFactory(study=study, shots=0)
    assert [slots.open_slots(s) for s in (piloting, opened, planned)] == [1, 3, 3]
    counts = slots.condition_counts([piloting, opened, planned])
    assert [(counts[s.pk][0].slots, counts[s.pk][0].design_slots) for s in (piloting, opened, planned)] == [
        (1, 3),
        (3, 3),
        (3, 3),
    ]
