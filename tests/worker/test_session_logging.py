"""A refused submission is logged at debug where the session API answers it: the code, never the answer's text."""

import json
import logging

import pytest

from annotation.models import Participation
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
API = "/api/session/"
LOGGER = "annotation.api.worker_auth"


def post(client, path, body):
    return client.post(API + path, data=json.dumps(body), content_type="application/json")


def test_a_refused_submission_is_logged_at_debug_without_the_answer(ner_task, worker, caplog):
    p = make_participation(ner_task, state=Participation.State.TEST)
    client = worker(p)
    item = client.get(API + "current/").json()["item"]
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    spans = [{"start": 0, "end": 3, "text": "Zanzibar"}]
    response = post(client, "submit/", {"item": item["item"], "confidence": 3, "spans": spans})
    assert (response.status_code, response.json()["error"]) == (400, "text_mismatch")
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.DEBUG
    message = record.getMessage()
    assert "text_mismatch" in message and f"participation {p.pk}" in message
    assert p.worker.external_id not in caplog.text  # logs keep no platform identifier
    assert "Zanzibar" not in caplog.text


def test_a_repeated_submission_logs_its_refusal_but_not_the_stored_answer(ner_task, worker, caplog):
    p = make_participation(ner_task, state=Participation.State.TEST)
    client = worker(p)
    item = client.get(API + "current/").json()["item"]
    ctx = item["context"]
    first = {"item": item["item"], "confidence": 2, "spans": [{"start": 0, "end": 12, "text": ctx[:12]}]}
    assert post(client, "submit/", first).status_code == 200
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    again = post(client, "submit/", first)
    assert (again.status_code, again.json()["error"]) == (409, "already_locked")
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(messages) == 1 and "already_locked" in messages[0]
    assert ctx[:12] not in caplog.text


def test_nothing_is_logged_above_debug_for_a_refusal(ner_task, worker, caplog):
    p = make_participation(ner_task, state=Participation.State.TEST)
    client = worker(p)
    client.get(API + "current/")
    caplog.set_level(logging.INFO, logger=LOGGER)
    assert post(client, "submit/", {"item": "first"}).json()["error"] == "invalid_item"
    assert not [r for r in caplog.records if r.name == LOGGER]
