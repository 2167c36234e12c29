"""The worker pages: /work/ shows what the participation's state calls for."""

import pytest

from annotation.models import Participation, Worker
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State


def test_without_a_session_the_page_explains_how_to_join(client):
    response = client.get("/work/")
    assert response.status_code == 403
    assert b"open the study link" in response.content


def test_a_claimed_worker_sees_the_description_and_a_start_button(sst_task, worker):
    p = make_participation(sst_task, shots=10, state=State.CLAIMED)
    response = worker(p).get("/work/")
    html = response.content.decode()
    assert response.status_code == 200
    assert sst_task.description in html and 'id="start-button"' in html
    assert "Training: 10 examples" in html and "4 items" in html
    assert "csrftoken" in response.cookies


def test_a_worker_in_a_step_gets_the_item_page_with_shortcuts_and_the_confidence_scale(sst_task, worker):
    p = make_participation(sst_task, state=State.TEST)
    html = worker(p).get("/work/").content.decode()
    assert 'id="work"' in html and "worker/worker.js" in html
    for text in (
        "I am confident in my answer",
        "Strongly disagree",
        "Strongly agree",
        "1 … 2",
        "skip this item",
        "Instructions",
        sst_task.instructions,
    ):
        assert text in html
    assert "no answer (empty set)" not in html  # a classification task has labels instead


def test_span_tasks_list_the_span_shortcuts_and_training_has_no_skip(ner_task, worker):
    p = make_participation(ner_task, shots=10, state=State.TRAINING)
    html = worker(p).get("/work/").content.decode()
    assert "add the selection as a span" in html and "no answer (empty set)" in html
    assert "skip this item" not in html


def test_the_worker_pages_cannot_be_framed_or_cached(sst_task, worker):
    p = make_participation(sst_task, state=State.TEST)
    response = worker(p).get("/work/")
    assert response["X-Frame-Options"] == "DENY"
    assert "no-store" in response["Cache-Control"]


def test_an_excluded_worker_is_thanked_and_told_they_are_paid(sst_task, worker):
    p = make_participation(sst_task, shots=10, state=State.EXCLUDED)
    html = worker(p).get("/work/").content.decode()
    assert "You will be paid for the time you have spent" in html


def test_an_abandoned_session_says_so(sst_task, worker):
    p = make_participation(sst_task, state=State.ABANDONED)
    response = worker(p).get("/work/")
    assert response.status_code == 410 and b"expired" in response.content


def test_the_finish_page_shows_the_completion_code(sst_task, worker):
    p = make_participation(sst_task, state=State.COMPLETED)
    Participation.objects.filter(pk=p.pk).update(completion_code="C0DE1234")
    html = worker(p).get("/work/").content.decode()
    assert "C0DE1234" in html and "Copy this code" in html


def test_the_finish_page_sends_prolific_workers_back(sst_task, worker):
    p = make_participation(sst_task, state=State.COMPLETED)
    Worker.objects.filter(pk=p.worker_id).update(platform=Worker.Platform.PROLIFIC)
    html = worker(p).get("/work/").content.decode()
    assert 'http-equiv="refresh"' in html and "https://app.prolific.com/submissions/complete?cc=C0DE1234" in html


def test_the_finish_page_posts_the_mturk_form(sst_task, worker):
    p = make_participation(sst_task, state=State.COMPLETED)
    Worker.objects.filter(pk=p.worker_id).update(platform=Worker.Platform.MTURK)
    Participation.objects.filter(pk=p.pk).update(
        platform_data={"assignmentId": "A1", "turkSubmitTo": "https://workersandbox.mturk.com"}
    )
    html = worker(p).get("/work/").content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="A1"' in html and 'data-autosubmit="1"' in html


def test_the_session_api_reports_the_completion_target(sst_task, worker):
    p = make_participation(sst_task, state=State.COMPLETED)
    body = worker(p).get("/api/session/current/").json()
    assert body["completion"]["code"] == "C0DE1234" and body["completion"]["kind"] == "code"
