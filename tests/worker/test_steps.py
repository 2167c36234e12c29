"""Laying out a step: order, shuffling with a recorded seed, idempotence, progress."""

import pytest

from annotation.models import Participation, Response, Study
from annotation.services.session import steps
from annotation.services.state import lifecycle
from tasks_app.models import ExampleSet
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State


def test_the_training_step_is_the_conditions_training_set_in_file_order(sst_task):
    p = make_participation(sst_task, shots=10, state=State.TRAINING)
    assert steps.lay_out_current(participation=p) == 10
    expected = list(ExampleSet.objects.get(task=sst_task, shots=10).ordered_examples().values_list("id", flat=True))
    rows = Response.objects.filter(participation=p, phase="training").order_by("position")
    assert [r.example_id for r in rows] == expected
    assert all(r.status == Response.Status.PENDING for r in rows)


def test_a_fixed_test_order_is_the_test_files_order(sst_task):
    p = make_participation(sst_task, state=State.TEST)
    steps.lay_out_current(participation=p)
    expected = list(ExampleSet.objects.get(task=sst_task, role="test").ordered_examples().values_list("id", flat=True))
    assert [r.example_id for r in Response.objects.filter(participation=p).order_by("position")] == expected
    p.refresh_from_db()
    assert p.test_seed is None


def test_a_shuffled_test_order_is_reproducible_from_the_recorded_seed(db):
    from tests.factories import make_classification_task

    task = make_classification_task(slug="big", n_test=40, n_train=30)
    p = make_participation(task, state=State.TEST, test_order=Study.TestOrder.SHUFFLED)
    steps.lay_out_current(participation=p)
    p.refresh_from_db()
    assert p.test_seed is not None
    order = list(Response.objects.filter(participation=p).order_by("position").values_list("example_id", flat=True))
    file_order = list(ExampleSet.objects.get(task=task, role="test").ordered_examples().values_list("id", flat=True))
    assert sorted(order) == sorted(file_order) and order != file_order
    import random

    replay = list(file_order)
    random.Random(p.test_seed).shuffle(replay)
    assert replay == order


def test_laying_out_twice_changes_nothing(sst_task):
    p = make_participation(sst_task, state=State.TEST)
    steps.lay_out_current(participation=p)
    before = list(Response.objects.filter(participation=p).values_list("id", "example_id", "position"))
    assert steps.lay_out_current(participation=p) == 4
    assert list(Response.objects.filter(participation=p).values_list("id", "example_id", "position")) == before


def test_the_current_item_is_the_first_pending_one_and_progress_counts_locked_ones(sst_task):
    p = make_participation(sst_task, state=State.TEST)
    first = steps.current_item(participation=p)  # lays the step out on first use
    assert first.position == 0
    Response.objects.filter(pk=first.pk).update(status="answered", submitted_at=first.example.task.created_at)
    assert steps.current_item(participation=p).position == 1
    progress = steps.progress(participation=p).as_dict()
    assert progress == {"phase": "test", "done": 1, "total": 4, "number": 2, "finished": False, "text": "Item 2 of 4"}


def test_a_participation_outside_a_step_has_no_current_item(sst_task):
    p = make_participation(sst_task, state=State.CLAIMED)
    assert steps.current_item(participation=p) is None
    with pytest.raises(steps.StepUnavailable):
        steps.lay_out_current(participation=p)


def test_begin_then_lay_out_starts_zero_shot_workers_in_the_test_step(sst_task):
    p = make_participation(sst_task, state=State.CLAIMED)
    lifecycle.begin(p)
    assert p.state == State.TEST
    assert steps.lay_out_current(participation=p) == 4
