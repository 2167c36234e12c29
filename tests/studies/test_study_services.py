"""Configuring studies: conditions, the standard design and status rules."""

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Condition, Participation, Study
from annotation.services.studies import studies
from tasks_app.models import ExampleSet, TrainingSplit
from tests.factories import (
    ExampleFactory,
    ExampleSetFactory,
    ParticipationFactory,
    TaskFactory,
    TrainingSplitFactory,
    add_examples_to_set,
    make_classification_task,
)

pytestmark = pytest.mark.django_db
State = Participation.State


def _messages(exc_info) -> dict:
    return exc_info.value.message_dict


def test_create_makes_a_draft_with_one_condition_per_shot_level_bound_to_the_split(task):
    study = studies.study_create(task=task, slug="s1", split_number=1, shots=[0, 10, 30])
    assert study.status == Study.Status.DRAFT
    conditions = {c.shots: c for c in study.conditions.all()}
    assert sorted(conditions) == [0, 10, 30]
    assert conditions[0].training_set is None
    assert conditions[10].training_set == ExampleSet.objects.get(task=task, split__number=1, shots=10)
    assert conditions[30].training_set.shots == 30


def test_zero_shot_only_study_needs_no_training_split(db):
    task = TaskFactory(slug="bare")
    study = studies.study_create(task=task, slug="zero", split_number=3, shots=[0])
    assert list(study.conditions.values_list("shots", "training_set")) == [(0, None)]


@pytest.mark.parametrize(
    "shots, field, text",
    [
        ([], "shots", "at least one condition"),
        ([0, 15], "shots", "no [15]-shot training set"),
        ([-1], "shots", "whole numbers"),
    ],
)
def test_create_refuses_bad_conditions_with_a_clear_message_and_creates_nothing(task, shots, field, text):
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="bad", split_number=1, shots=shots)
    assert text in " ".join(_messages(exc_info)[field])
    assert not Study.objects.exists() and not Condition.objects.exists()


def test_create_refuses_a_missing_split(task):
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="bad", split_number=4, shots=[0, 10])
    assert "no training split 4" in _messages(exc_info)["split_number"][0]


def test_create_refuses_an_empty_training_set(task):
    split = TrainingSplit.objects.get(task=task, number=1)
    ExampleSetFactory(task=task, role=ExampleSet.Role.TRAIN, split=split, shots=5)
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="bad", split_number=1, shots=[5])
    assert "empty" in _messages(exc_info)["shots"][0]


def test_create_refuses_a_duplicate_slug_and_unknown_fields(task):
    studies.study_create(task=task, slug="dup", shots=[0])
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="dup", shots=[0])
    assert "slug" in _messages(exc_info)
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="other", shots=[0], status="open")
    assert "status" in _messages(exc_info)
    assert Study.objects.count() == 1


def test_create_validates_the_study_fields(task):
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="x", shots=[0], workers_per_condition=0, split_number=1)
    assert "workers_per_condition" in _messages(exc_info)
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="y", shots=[0], split_number=7)
    assert "split_number" in _messages(exc_info)


def test_available_shots_lists_zero_and_the_split_levels(task):
    assert studies.available_shots(task=task, split_number=1) == [0, 10, 20, 30]
    assert studies.available_shots(task=task, split_number=2) == [0]


def test_standard_design_is_four_conditions_of_three_on_nested_sets(task):
    study = studies.create_standard_design(task=task, split_number=1)
    assert study.slug == "sst2-split1"
    assert study.workers_per_condition == 3
    assert sorted(study.conditions.values_list("shots", flat=True)) == [0, 10, 20, 30]
    again = studies.create_standard_design(task=task, split_number=1, open_now=True)
    assert again.slug == "sst2-split1-2" and again.status == Study.Status.OPEN


def test_standard_design_refuses_a_split_that_is_not_nested(task):
    TrainingSplit.objects.filter(task=task).update(is_nested=False, nested_built=False)
    with pytest.raises(ValidationError) as exc_info:
        studies.create_standard_design(task=task, split_number=1)
    assert "not nested" in _messages(exc_info)["split_number"][0]
    assert not Study.objects.exists()


def test_standard_design_accepts_a_split_whose_nested_sets_were_built_at_import(task):
    TrainingSplit.objects.filter(task=task).update(is_nested=False, nested_built=True)
    assert studies.create_standard_design(task=task, split_number=1).conditions.count() == 4


def test_standard_design_refuses_a_split_flagged_nested_whose_sets_are_not(db):
    task = TaskFactory(slug="liar")
    split = TrainingSplitFactory(task=task, number=1, is_nested=True)
    for shots in (10, 20, 30):
        examples = [ExampleFactory(task=task) for _ in range(shots)]  # disjoint sets
        add_examples_to_set(ExampleSetFactory(task=task, role="train", split=split, shots=shots), examples)
    with pytest.raises(ValidationError) as exc_info:
        studies.create_standard_design(task=task, split_number=1)
    assert "does not contain the smaller sets" in _messages(exc_info)["split_number"][0]


def test_standard_design_refuses_a_split_missing_a_level(db):
    task = make_classification_task(slug="partial")
    ExampleSet.objects.filter(task=task, shots=20).delete()
    with pytest.raises(ValidationError) as exc_info:
        studies.create_standard_design(task=task, split_number=1)
    assert "no [20]-shot training set" in _messages(exc_info)["shots"][0]


def test_update_changes_settings_and_conditions_before_anyone_joined(task):
    study = studies.study_create(task=task, slug="s", shots=[0, 10])
    studies.study_update(
        study=study, shots=[0, 20, 30], hourly_rate="15.50", filter_rule="absolute", filter_threshold=0.5
    )
    study.refresh_from_db()
    assert sorted(study.conditions.values_list("shots", flat=True)) == [0, 20, 30]
    assert str(study.hourly_rate) == "15.50" and study.filter_rule == "absolute"


def test_update_freezes_the_design_once_workers_joined(study):
    ParticipationFactory(condition=study.conditions.get(shots=10), state=State.TRAINING)
    with pytest.raises(ValidationError) as exc_info:
        studies.study_update(study=study, shots=[0, 10])
    assert "already joined" in _messages(exc_info)["shots"][0]
    with pytest.raises(ValidationError):
        studies.study_update(study=study, split_number=2)
    studies.study_update(study=study, hourly_rate="20.00")  # other settings may change
    assert study.conditions.count() == 4


def test_update_refuses_fewer_workers_than_slots_held(study):
    condition = study.conditions.get(shots=0)
    for slot in range(2):
        ParticipationFactory(condition=condition, slot_index=slot, state=State.TEST)
    with pytest.raises(ValidationError) as exc_info:
        studies.study_update(study=study, workers_per_condition=1)
    assert "holds 2" in _messages(exc_info)["workers_per_condition"][0]
    assert studies.study_update(study=study, workers_per_condition=2).workers_per_condition == 2


def test_delete_only_while_nobody_joined(task, study):
    draft = studies.study_create(task=task, slug="gone", shots=[0])
    studies.study_delete(study=draft)
    assert not Study.objects.filter(slug="gone").exists()
    ParticipationFactory(condition=study.conditions.first())
    with pytest.raises(ValidationError):
        studies.study_delete(study=study)


def test_status_goes_draft_open_paused_open_closed(task):
    study = studies.study_create(task=task, slug="s", shots=[0, 10])
    for status in ("open", "paused", "open", "closed"):
        studies.change_status(study=study, to_status=status)
        study.refresh_from_db()
        assert study.status == status


@pytest.mark.parametrize("start, target", [("closed", "open"), ("closed", "paused"), ("draft", "paused")])
def test_status_refuses_changes_outside_the_rules(task, start, target):
    study = studies.study_create(task=task, slug="s", shots=[0])
    Study.objects.filter(pk=study.pk).update(status=start)
    with pytest.raises(ValidationError) as exc_info:
        studies.change_status(study=study, to_status=target)
    assert f"A {start} study cannot become {target}" in _messages(exc_info)["status"][0]
    study.refresh_from_db()
    assert study.status == start


def test_status_refuses_an_unknown_status(study):
    with pytest.raises(ValidationError):
        studies.change_status(study=study, to_status="running")


def test_cannot_open_without_conditions(task):
    study = studies.study_create(task=task, slug="s", shots=[0])
    Condition.objects.filter(study=study).delete()
    with pytest.raises(ValidationError) as exc_info:
        studies.change_status(study=study, to_status="open")
    assert "without conditions" in _messages(exc_info)["status"][0]


def test_cannot_open_a_task_without_a_test_set(db):
    task = TaskFactory(slug="notest")
    study = studies.study_create(task=task, slug="s", shots=[0])
    with pytest.raises(ValidationError) as exc_info:
        studies.change_status(study=study, to_status="open")
    assert "no test set" in _messages(exc_info)["task"][0]


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan"), float("inf")])
def test_a_filter_threshold_outside_0_to_1_is_refused_and_nothing_is_saved(task, threshold):
    with pytest.raises(ValidationError) as exc_info:
        studies.study_create(task=task, slug="bad", filter_rule="absolute", filter_threshold=threshold)
    assert "from 0 to 1" in _messages(exc_info)["filter_threshold"][0]
    assert not Study.objects.filter(slug="bad").exists()
    study = studies.study_create(task=task, slug="good", filter_rule="relative", filter_threshold=0.2)
    with pytest.raises(ValidationError):
        studies.study_update(study=study, filter_threshold=threshold)
    study.refresh_from_db()
    assert study.filter_threshold == 0.2


def test_the_test_order_is_fixed_once_workers_joined(study):
    studies.study_update(study=study, test_order="shuffled")  # nobody yet: allowed
    studies.study_update(study=study, test_order="fixed")
    ParticipationFactory(condition=study.conditions.get(shots=0), state=State.TEST)
    with pytest.raises(ValidationError) as exc_info:
        studies.study_update(study=study, test_order="shuffled")
    assert "reorder the items" in _messages(exc_info)["test_order"][0]
    study.refresh_from_db()
    assert study.test_order == "fixed"
    studies.study_update(study=study, test_order="fixed", hourly_rate="13.00")  # unchanged: fine
