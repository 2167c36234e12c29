"""Racing submissions of one item on PostgreSQL: exactly one lock wins, the others see it locked."""

import json

import pytest
from django.db import connections
from django.test import Client

from annotation.models import AnswerSpan, Participation, Response
from annotation.services.session import steps
from tests.threads import bounded_barrier, join_all, start_threads
from tests.worker.conftest import login, make_participation, make_task_with_items

State = Participation.State


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_submissions_of_one_item_lock_it_once():
    task = make_task_with_items(slug="race", test=[("Ada met Bob .", ["Ada"]), ("Cy met Di .", ["Cy"])])
    p = make_participation(task, state=State.TEST)
    item = steps.current_item(participation=p)
    barrier = bounded_barrier(8)
    results = []

    def submit(i):
        try:
            client = login(Client(), p)
            body = {
                "item": item.pk,
                "confidence": 1 + i % 5,
                "spans": [{"start": 0, "end": 3, "text": "Ada"}] if i % 2 else [{"start": 8, "end": 11, "text": "Bob"}],
            }
            barrier.wait()
            response = client.post("/api/session/submit/", data=json.dumps(body), content_type="application/json")
            results.append((response.status_code, response.json()))
        finally:
            connections.close_all()

    join_all(start_threads(submit, [(i,) for i in range(8)]))
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] + [409] * 7
    winner = next(body for status, body in results if status == 200)
    row = Response.objects.get(pk=item.pk)
    assert row.answer == winner["answer"]["answer"] and AnswerSpan.objects.filter(response=row).count() == 1
    for status, body in results:
        if status == 409:
            assert body["error"] == "already_locked" and body["answer"]["answer"] == row.answer
