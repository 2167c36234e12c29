"""Two bonus runs at once pay each participant once: Prolific's bulk bonus payment is not idempotent, and the
claim of the row (uncertain, committed before any call) is the only thing between two runs paying twice."""

import threading
from decimal import Decimal

import pytest
from django.db import connections

from annotation.models import Participation, ProlificAction
from annotation.services.prolific import bonus, operations
from annotation.services.prolific.runs import TODO, CallLog, make_client
from tests.prolific.conftest import join
from tests.threads import WAIT_SECONDS, join_all, start_threads

State = Participation.State
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def owed(prolific_on, prolific_study):
    """p1 and p2 completed in 30 minutes at 12.00/h with 3.00 posted: each is owed a 3.00 bonus."""
    study, condition = prolific_study
    for i, pid in enumerate(("p1", "p2")):
        join(prolific_on, condition, pid, state=State.COMPLETED, slot=i)
    return study, prolific_on


def test_two_bonus_runs_at_once_pay_each_participant_once(owed):
    """Run B planned before run A claimed anything (both plans say "to do"); A claims p1's bonus and is held
    while setting it up; B then goes through its plan's rows, as its run would; A finishes."""
    study, standin = owed
    plan_b = operations.plan(operation="bonus", study=study)
    assert [(r.participant, r.state) for r in plan_b.rows] == [("p1", TODO), ("p2", TODO)]

    arrived, release = threading.Event(), threading.Event()
    lock, set_ups = threading.Lock(), []

    def hold_the_first_set_up(method, path):
        if not path.endswith("/submissions/bonus-payments/"):
            return
        with lock:
            set_ups.append(path)
            first = len(set_ups) == 1
        if first:
            arrived.set()
            assert release.wait(WAIT_SECONDS)

    standin.on_request = hold_the_first_set_up
    reports, errors = [], []

    def run_a():
        try:
            reports.append(operations.run(operation="bonus", study=study))
        except Exception as exc:  # reported below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    [thread] = start_threads(run_a, [()])
    assert arrived.wait(WAIT_SECONDS)  # A claimed p1's bonus and is setting it up
    client, log = make_client(), CallLog()
    for row in plan_b.rows:
        bonus.bonus_one(client, log, row)  # what run_each does with each row of B's plan
    release.set()
    join_all([thread])

    assert errors == []
    assert standin.paid_to("p1") == standin.paid_to("p2") == Decimal("3.00")
    assert sum(bulk["paid"] for bulk in standin.bulks.values()) == 2
    assert {r.participant: r.state for r in plan_b.rows} == {"p1": "uncertain", "p2": "done"}
    assert {r.participant: r.state for r in reports[0].rows} == {"p1": "done", "p2": "uncertain"}
    assert set(ProlificAction.objects.filter(kind="bonus").values_list("status", flat=True)) == {"done"}
