"""Workers see a neutral title and the question the researcher chose, never the dataset's name."""

import pytest
from django.utils import timezone

from annotation.models import Participation
from tests.entry_link import take_part
from tests.factories import make_classification_task
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State
API = "/api/session/"


@pytest.fixture
def mnli(db):
    task = make_classification_task(slug="mnli", labels=("entailment", "neutral", "contradiction"), n_test=3)
    task.name = "MNLI"
    task.worker_title = "How do two sentences relate?"
    task.worker_question = "What is the relationship between these sentences?"
    task.save()
    task.examples.update(question="entailment, neutral or contraction?")
    return task


def _assert_neutral(text: str) -> None:
    assert "MNLI" not in text and "mnli" not in text.lower(), text[:2000]


@pytest.mark.parametrize("state", [State.CLAIMED, State.TEST, State.COMPLETED, State.EXCLUDED, State.ABANDONED])
def test_no_worker_page_or_session_payload_names_the_dataset(mnli, worker, state):
    p = make_participation(mnli, state=state, name="MNLI split 1")
    client = worker(p)
    html = client.get("/work/").content.decode()
    _assert_neutral(html)
    if state != State.ABANDONED:
        assert "How do two sentences relate?" in html
    _assert_neutral(client.get(API + "current/").content.decode())


def test_the_question_shown_is_the_override_while_the_example_keeps_the_release_text(mnli, worker):
    p = make_participation(mnli, state=State.TEST)
    item = worker(p).get(API + "current/").json()["item"]
    assert item["question"] == "What is the relationship between these sentences?"
    assert set(mnli.examples.values_list("question", flat=True)) == {"entailment, neutral or contraction?"}


def test_a_study_s_own_title_and_description_win_over_the_task_s(mnli, worker):
    p = make_participation(mnli, state=State.CLAIMED, worker_title="Sentence pairs", worker_description="Read two.")
    session = worker(p).get(API + "current/").json()
    assert (session["task"]["name"], session["task"]["description"]) == ("Sentence pairs", "Read two.")


def test_the_entry_pages_show_the_neutral_title_not_the_study_name(mnli, client):
    p = make_participation(mnli, state=State.CLAIMED, name="MNLI split 1", workers_per_condition=1)
    response = take_part(client, p.study.slug, {"worker_id": "late"})
    assert response.status_code == 409
    _assert_neutral(response.content.decode().replace(p.study.slug, ""))
    preview = client.get(f"/join/{p.study.slug}/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    _assert_neutral(preview.content.decode().replace(p.study.slug, ""))


def test_the_start_page_states_items_duration_pay_finality_and_resuming(sst_task, worker):
    p = make_participation(sst_task, shots=10, state=State.CLAIMED)
    html = worker(p).get("/work/").content.decode()
    # 10 training + 4 test items at the task kind's default of 15 s: 3.5 -> 4 minutes.
    assert "14 items in all" in html and "About 4 minutes" in html
    assert "12.00 USD per hour" in html and "Answers are final" in html and "same link" in html


def test_the_estimate_uses_the_study_s_own_median_once_known(sst_task, worker):
    from annotation.models import Response
    from tests.factories import ExampleFactory, ParticipationFactory

    p = make_participation(sst_task, shots=0, state=State.CLAIMED)
    done = ParticipationFactory(condition=p.condition, slot_index=1, state=State.COMPLETED)
    for i in range(20):
        Response.objects.create(
            participation=done,
            example=ExampleFactory(task=sst_task),
            phase="test",
            position=i,
            status="answered",
            active_ms=60_000,
            submitted_at=timezone.now(),
        )
    html = worker(p).get("/work/").content.decode()
    assert "About 4 minutes" in html and "other participants" in html  # 4 items x 60 s


def _timed(task, condition, seconds: list[float], *, slot: int):
    from annotation.models import Response
    from tests.factories import ExampleFactory, ParticipationFactory

    done = ParticipationFactory(condition=condition, slot_index=slot, state=State.COMPLETED)
    for i, s in enumerate(seconds):
        Response.objects.create(
            participation=done,
            example=ExampleFactory(task=task),
            phase="test",
            position=i,
            status="answered",
            active_ms=int(s * 1000),
            submitted_at=timezone.now(),
        )


def test_one_fast_worker_cannot_cut_the_estimate_below_half_the_default(sst_task):
    from annotation.services.session import presentation

    p = make_participation(sst_task, shots=0, state=State.CLAIMED)
    default, from_study = presentation.seconds_per_item(p.study)
    assert not from_study
    _timed(sst_task, p.condition, [1.0] * 20, slot=1)  # 20 items at 1 s: one speeder
    assert presentation.seconds_per_item(p.study) == (default * 0.5, True)


def test_the_estimate_is_the_median_of_several_workers_medians(sst_task):
    from annotation.services.session import presentation

    p = make_participation(sst_task, shots=0, state=State.CLAIMED)
    # Three workers, medians 2 s, 10 s and 40 s; the speeder answers most items (pooled median: 2 s).
    _timed(sst_task, p.condition, [2.0] * 30, slot=1)
    _timed(sst_task, p.condition, [9.0, 10.0, 11.0], slot=2)
    _timed(sst_task, p.condition, [40.0, 40.0, 40.0], slot=3)
    assert presentation.seconds_per_item(p.study) == (10.0, True)
