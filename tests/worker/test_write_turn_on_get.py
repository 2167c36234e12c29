"""GET /api/session/current/ on the SQLite default: reads run beside a writer, a due write waits its turn.

The suite's in-memory database does not queue writes, so ``queues_writes`` is switched on here; another
thread holds the process's write turn as a writing request would.
"""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.db import sqlite_queue
from annotation.models import Participation
from annotation.services.session import steps
from tests.factories import make_classification_task
from tests.worker.conftest import login, make_participation

pytestmark = pytest.mark.django_db
State = Participation.State


class TurnHolder(threading.Thread):
    """Holds the write turn from another thread until told to let go (or ``seconds`` pass)."""

    def __init__(self, seconds: float):
        super().__init__(daemon=True)
        self.seconds = seconds
        self.held, self.let_go, self.released = threading.Event(), threading.Event(), threading.Event()

    def run(self):
        with sqlite_queue._write_turn:
            self.held.set()
            self.let_go.wait(self.seconds)
            self.released.set()

    def __enter__(self):
        self.start()
        assert self.held.wait(10)
        return self

    def __exit__(self, *exc):
        self.let_go.set()
        self.join(10)


@pytest.fixture
def working(client, monkeypatch):
    monkeypatch.setattr(sqlite_queue, "queues_writes", lambda: True)
    p = make_participation(make_classification_task(slug="turn", n_test=3), state=State.TEST)
    steps.current_item(participation=p)
    login(client, p)
    assert client.get("/api/session/current/").status_code == 200  # the item is shown, activity recorded
    return p


def test_a_get_with_nothing_to_write_does_not_wait_for_the_write_turn(client, working):
    with TurnHolder(seconds=10) as holder:
        assert client.get("/api/session/current/").status_code == 200
        assert not holder.released.is_set()  # answered while a writer held the turn


def test_a_get_that_must_write_waits_for_the_turn(client, working):
    Participation.objects.filter(pk=working.pk).update(last_activity_at=timezone.now() - timedelta(minutes=5))
    with TurnHolder(seconds=0.3) as holder:
        assert client.get("/api/session/current/").status_code == 200
        assert holder.released.is_set()  # the activity touch waited for the writer to finish
    working.refresh_from_db()
    assert timezone.now() - working.last_activity_at < timedelta(minutes=1)
