"""Two sends of the same bulk message at once: it reaches each participant once (the claim of its row,
committed before the call, is what keeps the second from sending; Prolific's bulk message is not idempotent)."""

import threading

import pytest
from django.db import connections

from annotation.models import Participation, ProlificMessage
from annotation.services.prolific import messages
from annotation.services.prolific.runs import CallLog, make_client
from tests.prolific.conftest import join
from tests.threads import WAIT_SECONDS, join_all, start_threads

State = Participation.State
pytestmark = pytest.mark.django_db(transaction=True)


def test_two_sends_at_once_send_the_message_once(prolific_on, prolific_study):
    study, condition = prolific_study
    for i, pid in enumerate(("p1", "p2")):
        join(prolific_on, condition, pid, state=State.COMPLETED, slot=i)
    # B planned before A claimed anything: its plan says "to do"; it then sends its plan's message, as send does.
    plan_b = messages.plan(study=study, kind="bulk", text="Hello")
    assert [i.state for i in plan_b] == ["to do"]
    arrived, release = threading.Event(), threading.Event()

    def hold_the_first(method, path):
        if path.endswith("/messages/bulk/") and not arrived.is_set():
            arrived.set()
            assert release.wait(WAIT_SECONDS)

    prolific_on.on_request = hold_the_first
    results, errors = [], []

    def send_a():
        try:
            results.append(messages.send(study=study, kind="bulk", text="Hello", sent_by="a"))
        except Exception as exc:  # reported below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    [thread] = start_threads(send_a, [()])
    assert arrived.wait(WAIT_SECONDS)  # A claimed the message and is sending it
    for item in plan_b:
        messages._send_one(make_client(), CallLog(), study, item, "b")
    third = messages.send(study=study, kind="bulk", text="Hello", sent_by="c")  # plans it as in flight
    release.set()
    join_all([thread])
    assert errors == []
    assert [i.state for i in plan_b] == ["uncertain"] and "another run" in plan_b[0].note
    assert [i.state for i in third] == ["uncertain"]
    assert [i.state for i in results[0]] == ["done"]
    assert prolific_on.inbox == {"p1": ["Hello"], "p2": ["Hello"]}
    assert ProlificMessage.objects.get().sent_by == "a"
