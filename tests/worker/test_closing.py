"""A worker already in a study when it closes: goes on until the grace deadline, then is stopped and paid."""

import json
from datetime import UTC, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Participation, Response, Study
from annotation.services.admission import closing
from annotation.services.studies import studies
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State
API = "/api/session/"


def post(client, path, body=None):
    return client.post(API + path, data=json.dumps(body or {}), content_type="application/json")


def close(participation, *, grace_minutes=60):
    studies.change_status(study=participation.study, to_status=Study.Status.CLOSED, grace_minutes=grace_minutes)


def expire(participation):
    Study.objects.filter(pk=participation.study_id).update(closes_at=timezone.now() - timedelta(seconds=1))


def pending(participation):
    return Response.objects.filter(participation=participation, status=Response.Status.PENDING).count()


@pytest.fixture
def in_test(sst_task, worker):
    p = make_participation(sst_task, state=State.TEST, outcome_codes={})
    client = worker(p)
    item = client.get(API + "current/").json()["item"]["item"]  # lays the step out
    return p, client, item


def test_during_the_grace_period_the_worker_goes_on_and_is_shown_the_deadline(in_test):
    p, client, item = in_test
    close(p, grace_minutes=45)
    deadline = Study.objects.get(pk=p.study_id).closes_at
    page = client.get("/work/").content.decode()
    # The date is shown too when the deadline falls on another day (UTC) than today: near midnight.
    today = deadline.astimezone(UTC).date() == timezone.now().astimezone(UTC).date()
    shown = deadline.astimezone(UTC).strftime("%H:%M" if today else "%Y-%m-%d %H:%M")
    assert f"This study closes at {shown} UTC; please finish by then" in page
    assert client.get(API + "current/").json()["closes_at"] == deadline.isoformat()
    response = post(client, "submit/", {"item": item, "label": "positive", "confidence": 3})
    assert response.status_code == 200, response.content


def test_after_the_deadline_a_submit_is_refused_with_study_closed_and_stores_nothing(in_test):
    p, client, item = in_test
    close(p)
    expire(p)
    before = pending(p)
    response = post(client, "submit/", {"item": item, "label": "positive", "confidence": 3})
    assert response.status_code == 409
    assert response.json()["error"] == "study_closed" and "closed" in response.json()["detail"]
    assert pending(p) == before
    p.refresh_from_db()
    assert p.state == State.EXCLUDED and p.completion_code  # closed out: paid for the time spent
    assert p.events.last().reason == closing.CLOSED_REASON
    # Nothing more is taken, and the session says why with the code.
    assert post(client, "submit/", {"item": item, "label": "positive", "confidence": 3}).status_code == 409
    body = client.get(API + "current/").json()
    assert body["state"] == "excluded" and body["completion"]["code"] == p.completion_code


def test_after_the_deadline_a_skip_is_refused_with_study_closed(in_test):
    p, client, item = in_test
    close(p, grace_minutes=0)
    response = post(client, "skip/", {"item": item})
    assert response.status_code == 409 and response.json()["error"] == "study_closed"
    assert Response.objects.filter(participation=p, status=Response.Status.SKIPPED).count() == 0


def test_after_the_deadline_the_page_shows_the_completion_code_and_the_way_back(in_test):
    p, client, _ = in_test
    close(p, grace_minutes=0)
    response = client.get("/work/")
    html = response.content.decode()
    p.refresh_from_db()
    assert response.status_code == 200 and "This study has closed" in html
    assert p.completion_code and p.completion_code in html and "You will be paid" in html
    assert "This study has closed" in client.get("/work/").content.decode()  # and on every later visit


def test_a_worker_who_had_not_started_cannot_start_after_the_deadline_and_gets_no_code(sst_task, worker):
    p = make_participation(sst_task, state=State.CLAIMED, outcome_codes={})
    client = worker(p)
    close(p, grace_minutes=0)
    response = post(client, "start/")
    assert response.status_code == 409 and response.json()["error"] == "study_closed"
    p.refresh_from_db()
    assert p.state == State.ABANDONED and not p.completion_code
    assert not Response.objects.filter(participation=p).exists()
    html = client.get("/work/").content.decode()
    assert "closed before you started" in html and "return the study" in html


def test_a_worker_can_start_during_the_grace_period(sst_task, worker):
    p = make_participation(sst_task, state=State.CLAIMED)
    client = worker(p)
    close(p)
    assert "please finish by then" in client.get("/work/").content.decode()
    assert post(client, "start/").json()["state"] == "test"


def test_a_finished_worker_keeps_their_finish_page_after_the_deadline(sst_task, worker):
    p = make_participation(sst_task, state=State.COMPLETED)
    Participation.objects.filter(pk=p.pk).update(completion_code="C0DE1234")
    close(p, grace_minutes=0)
    html = worker(p).get("/work/").content.decode()
    assert "C0DE1234" in html and "This study has closed" not in html


def test_pausing_does_not_stop_a_worker_already_in(in_test):
    p, client, item = in_test
    studies.change_status(study=p.study, to_status=Study.Status.PAUSED)
    response = post(client, "submit/", {"item": item, "label": "positive", "confidence": 3})
    assert response.status_code == 200, response.content
    assert "closes at" not in client.get("/work/").content.decode()
    assert client.get(API + "current/").json()["closes_at"] is None


def test_the_closing_check_adds_no_query_to_a_submission(sst_task, worker):
    """The check reads the study loaded with the participation: a submit in the grace period runs the
    same statements as one in an open study."""

    def middle_submit_count(p):
        client = worker(p)
        first = client.get(API + "current/").json()["item"]["item"]
        assert post(client, "submit/", {"item": first, "label": "positive", "confidence": 3}).status_code == 200
        current = client.get(API + "current/").json()["item"]["item"]
        with CaptureQueriesContext(connection) as ctx:
            reply = post(client, "submit/", {"item": current, "label": "positive", "confidence": 3})
        assert reply.status_code == 200, reply.content
        return len(ctx.captured_queries)

    open_count = middle_submit_count(make_participation(sst_task, state=State.TEST))
    closing_one = make_participation(sst_task, state=State.TEST)
    close(closing_one)
    assert middle_submit_count(closing_one) == open_count
