"""The worker's hot path runs a fixed number of queries, whatever the size of the study.

Not timed (speed is measured by bench/replay.py): these tests count the SQL
statements of one request with CaptureQueriesContext, for a small and a large
test set, and pin both the constancy and the number.
"""

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Participation
from tests.factories import make_classification_task, make_span_task
from tests.worker.conftest import login, make_participation

State = Participation.State


def submit_queries(*, spans: bool) -> int:
    """A test-step submit in the middle of the step (the worker is named by a signed cookie: no session
    read): the participation with its pending rows and the task's label words (one statement); the lock,
    the spans' INSERT and marking the next item shown. On PostgreSQL that write is one statement, atomic
    by itself, so no transaction is opened around it; elsewhere it is one statement each inside a
    transaction (its SAVEPOINT and RELEASE are counted here, a BEGIN and COMMIT outside tests). The
    activity is written at most every 10 seconds."""
    if connection.vendor == "postgresql":
        return 2
    return 6 if spans else 5


CURRENT_QUERIES = 1  # the participation with its pending rows and the task's labels (for the help pop-ups)


def _in_test_step(task) -> Client:
    client = login(Client(), make_participation(task, state=State.TEST))
    assert client.get("/api/session/current/").status_code == 200  # lays the step out
    return client


def _post(client: Client, url: str, body: dict):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def _count(fn) -> tuple[int, object]:
    """Statements run by ``fn`` (psycopg prepares statements within the protocol: no statement of their own)."""
    with CaptureQueriesContext(connection) as ctx:
        result = fn()
    return len(ctx.captured_queries), result


def _middle_submit_count(client: Client, answer: dict) -> int:
    """Queries of a submit that is neither the step's first nor its last."""
    first = client.get("/api/session/current/").json()["item"]["item"]
    assert _post(client, "/api/session/submit/", {"item": first, "confidence": 3, **answer}).status_code == 200
    current = client.get("/api/session/current/").json()["item"]["item"]
    count, reply = _count(lambda: _post(client, "/api/session/submit/", {"item": current, "confidence": 3, **answer}))
    assert reply.status_code == 200, reply.content
    return count


@pytest.mark.django_db
def test_a_classification_submit_runs_the_same_few_queries_for_10_and_300_items():
    small = _middle_submit_count(
        _in_test_step(make_classification_task(slug="small", n_test=10)), {"label": "positive"}
    )
    large = _middle_submit_count(
        _in_test_step(make_classification_task(slug="large", n_test=300)), {"label": "positive"}
    )
    assert small == large == submit_queries(spans=False)


@pytest.mark.django_db
def test_a_span_submit_runs_the_same_few_queries_for_10_and_300_items():
    def count(slug: str, n: int) -> int:
        client = _in_test_step(make_span_task(slug=slug, n_test=n))
        item = client.get("/api/session/current/").json()["item"]
        assert (
            _post(
                client, "/api/session/submit/", {"item": item["item"], "confidence": 3, "no_answer": True}
            ).status_code
            == 200
        )
        item = client.get("/api/session/current/").json()["item"]
        context = item["context"]
        word = context.split()[0]
        spans = [{"start": 0, "end": len(word), "text": word}]
        queries, reply = _count(
            lambda: _post(client, "/api/session/submit/", {"item": item["item"], "confidence": 3, "spans": spans})
        )
        assert reply.status_code == 200, reply.content
        return queries

    small, large = count("small-ner", 10), count("large-ner", 300)
    assert small == large == submit_queries(spans=True)


@pytest.mark.django_db
def test_loading_the_current_item_runs_the_same_few_queries_for_10_and_300_items():
    def count(slug: str, n: int) -> int:
        client = _in_test_step(make_classification_task(slug=slug, n_test=n))
        item = client.get("/api/session/current/").json()["item"]["item"]
        assert (
            _post(client, "/api/session/submit/", {"item": item, "confidence": 3, "label": "negative"}).status_code
            == 200
        )
        queries, reply = _count(lambda: client.get("/api/session/current/"))
        assert reply.status_code == 200
        return queries

    small, large = count("small-cur", 10), count("large-cur", 300)
    assert small == large == CURRENT_QUERIES
