"""From the entry link to the finish page, over HTTP, as a scripted client would do it."""

import pytest

from annotation.models import Participation
from tests.entry_link import take_part
from tests.factories import ConditionFactory, StudyFactory, make_classification_task

pytestmark = pytest.mark.django_db


def test_a_worker_joins_starts_answers_everything_and_gets_the_code(client):
    task = make_classification_task(slug="e2e", n_test=3)
    study = StudyFactory(task=task, slug="e2e-study", outcome_codes={"completed": {"code": "DONE42"}})
    ConditionFactory(study=study, shots=0)

    assert client.get("/join/e2e-study/?worker_id=alice").status_code == 200  # the start page: no slot yet
    assert Participation.objects.count() == 0
    joined = take_part(client, "e2e-study", {"worker_id": "alice"})
    assert joined.status_code == 302 and joined["Location"] == "/work/"
    assert b'id="start-button"' in client.get("/work/").content

    client.post("/api/session/start/", content_type="application/json")
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        response = client.post(
            "/api/session/submit/",
            {"item": item["item"], "label": "negative", "confidence": 2},
            content_type="application/json",
        )
        assert response.status_code == 200

    finish = client.get("/work/").content.decode()
    assert "DONE42" in finish
    p = Participation.objects.get(worker__external_id="alice")
    assert p.state == "completed" and p.responses.filter(status="answered").count() == 3
