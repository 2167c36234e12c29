"""The lifecycle model (tests/lifecycle/machine.py) with the audit trail checked after every step.

Each staff rule of the model (exclude, readmit, edit the attention rule, change the status, run a Prolific
operation) and each close-out the ledger expects is turned into the entry the trail must gain, written from
the ledger's own before and after (never read from the trail or the database); after every step the new
entries must be exactly those. A worker's own steps and the platform's events add nothing to the trail."""

from __future__ import annotations

from collections import Counter
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import initialize, invariant, rule, run_state_machine_as_test

from annotation.models import AuditEntry, Study
from tests.lifecycle.machine import ACTIVE, WORKERS, Entry, LifecycleMachine, State

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(1800)]
A = AuditEntry.Action
Status = Study.Status

# The action a change of status is recorded as, written out: (from, to) -> action.
STATUS_ACTION = {
    (Status.OPEN, Status.PAUSED): A.STUDY_PAUSE,
    (Status.PAUSED, Status.OPEN): A.STUDY_REOPEN,
    (Status.OPEN, Status.CLOSED): A.STUDY_CLOSE,
    (Status.PAUSED, Status.CLOSED): A.STUDY_CLOSE,
}


def _ms(value: Any) -> str | None:
    """A datetime as the JSON column keeps it (DjangoJSONEncoder: milliseconds, Z for UTC)."""
    if value is None:
        return None
    fraction = f".{value.microsecond // 1000:03d}" if value.microsecond else ""
    return value.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


CHECKED: Counter[str] = Counter()  # the actions the runs checked, to show they were exercised


class AuditedMachine(LifecycleMachine):
    def __init__(self) -> None:
        super().__init__()
        self.expected: list[tuple] = []
        self.seen = AuditEntry.objects.order_by("-id").values_list("id", flat=True).first() or 0

    def pk_of(self, worker: str) -> int:
        found = self.participation(worker)
        assert found is not None
        return found.pk

    @initialize(pilot=st.booleans(), asks=st.booleans(), joined=st.integers(0, 2), session=st.booleans())
    def set_up(self, pilot: bool, asks: bool, joined: int = 0, session: bool = True) -> None:
        """The launch and the set-up are the fixture's, not a step: their entries (the opening, the settings
        the set-up edits) are tested one by one in test_study_actions; the trail is checked from here on."""
        super().set_up(pilot, asks, joined, session)
        self.seen = AuditEntry.objects.order_by("-id").values_list("id", flat=True).first() or 0
        self.expected = []

    @rule(worker=st.sampled_from(WORKERS), session=st.booleans(), agrees=st.booleans())
    def open_the_link(self, worker: str, session: bool, agrees: bool) -> None:
        super().open_the_link(worker, session, agrees)  # a release of idle slots is the system's, not staff's

    # --- the staff rules, each with the entry it must leave --------------------------------------

    @rule(worker=st.sampled_from(WORKERS))
    def exclude(self, worker: str) -> None:
        worker = self.one_of(worker, (*ACTIVE, State.COMPLETED))  # whom the base rule acts on
        entry = self.ledger.entries.get(worker)
        before = (entry.state, entry.kind) if entry else None
        super().exclude(worker)
        if entry is not None and before is not None and before[0] != "excluded" and entry.state == "excluded":
            assert before is not None
            self.expected.append((A.EXCLUDE, self.pk_of(worker), *before, "excluded", "admin"))

    @rule(worker=st.sampled_from(WORKERS))
    def readmit(self, worker: str) -> None:
        worker = self.one_of(worker, (State.EXCLUDED,))
        entry = self.ledger.entries.get(worker)
        before = (entry.state, entry.kind) if entry else None
        super().readmit(worker)
        if entry is not None and before is not None and before[0] == "excluded" and entry.state != "excluded":
            self.expected.append((A.READMIT, self.pk_of(worker), *before, entry.state, ""))

    @rule(limit=st.sampled_from([0, 1, 2]))
    def edit_the_attention_rule(self, limit: int) -> None:
        old = self.ledger.fail_limit
        super().edit_the_attention_rule(limit)
        if old != limit:
            self.expected.append(
                (A.STUDY_SETTINGS, None, f'{{"attention_fail_limit": {old}}}', f'{{"attention_fail_limit": {limit}}}')
            )

    @rule(
        to=st.sampled_from([Status.OPEN, Status.PAUSED, Status.CLOSED]),
        grace=st.sampled_from([0, 30]),
        then_places=st.booleans(),
    )
    def change_status(self, to: str, grace: int, then_places: bool = False) -> None:
        old = self.ledger.status
        expected = len(self.expected)
        super().change_status(to, grace, then_places)  # the places run after it appends its own entry
        new = self.ledger.status
        if new != old:
            closes_at = _ms(self.ledger.closes_at) if new == Status.CLOSED else None
            self.expected.insert(expected, (STATUS_ACTION[(old, new)], None, old, new, closes_at))

    @rule()
    def open_the_rest(self) -> None:
        old, piloting = self.ledger.status, self.ledger.pilot is not None
        super().open_the_rest()
        if piloting and self.ledger.pilot is None:
            self.expected.append((A.STUDY_OPEN_REST, None, old, Status.OPEN, None))

    @rule(worker=st.sampled_from(WORKERS))
    def withdraw(self, worker: str) -> None:
        entry = self.ledger.entries.get(worker)
        was = entry is not None and entry.withdrawn
        found = self.participation(worker)  # before: a withdrawn participation leaves the default manager
        super().withdraw(worker)
        if entry is not None and found is not None and entry.withdrawn and not was:
            self.expected.append((A.WITHDRAW, found.pk, "staff"))

    @rule(operation=st.sampled_from(["review", "bonus", "group", "places"]))
    def run_a_prolific_operation(self, operation: str) -> None:
        super().run_a_prolific_operation(operation)
        self.expected.append((A.PROLIFIC_RUN, None, operation))

    def close_out(self, entry: Entry) -> None:
        before = (entry.state, entry.kind)
        super().close_out(entry)
        if (entry.state, entry.kind) != before:
            self.expected.append((A.STUDY_CLOSE_OUT, self.pk_of(entry.worker), *before, entry.state, entry.kind))

    # --- the trail against the expectation -------------------------------------------------------

    @staticmethod
    def shown(e: AuditEntry) -> tuple:
        if e.action in (A.EXCLUDE, A.READMIT, A.STUDY_CLOSE_OUT):
            b, a = e.before, e.after
            return (e.action, e.participation_id, b["state"], b["exclusion_kind"], a["state"], a["exclusion_kind"])
        if e.action == A.STUDY_SETTINGS:
            import json

            return (e.action, None, json.dumps(e.before), json.dumps(e.after))
        if e.action in (*STATUS_ACTION.values(), A.STUDY_OPEN_REST):
            return (e.action, None, e.before["status"], e.after["status"], e.after.get("closes_at"))
        if e.action == A.WITHDRAW:
            return (e.action, e.participation_id, e.actor_name)
        if e.action == A.PROLIFIC_RUN:
            return (e.action, None, e.detail["operation"])
        return (e.action, e.target)  # anything else is unexpected here

    @invariant()
    def the_trail_holds(self) -> None:
        new = list(AuditEntry.objects.filter(id__gt=self.seen).order_by("id"))
        got = Counter(self.shown(e) for e in new)
        assert got == Counter(self.expected), f"trail {sorted(got)} != expected {sorted(Counter(self.expected))}"
        # The model's staff act as nobody in particular; a withdrawal names who ran it (the model's "staff").
        assert all(e.actor_name.startswith("system") or e.action == A.WITHDRAW for e in new)
        if new:
            self.seen = new[-1].pk
        CHECKED.update(e.action for e in new)
        self.expected = []


def test_the_trail_follows_the_lifecycle_model():
    CHECKED.clear()
    run_state_machine_as_test(
        AuditedMachine,
        settings=settings(
            derandomize=True,  # the same examples every run, so that what they exercise can be asserted
            max_examples=12,
            stateful_step_count=30,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
    # What these examples reach (exclusions and readmissions are checked one by one in test_participant_actions).
    # (close-outs: test_study_actions; the withdrawal: the fixed sequence below, which these may not reach.)
    exercised = {A.STUDY_SETTINGS, A.STUDY_PAUSE, A.STUDY_CLOSE, A.PROLIFIC_RUN, A.STUDY_OPEN_REST}
    assert exercised <= set(CHECKED), sorted(CHECKED)


def test_a_withdrawal_in_the_model_leaves_its_entry():
    """The withdrawal as a fixed sequence of the audited model's rules: a worker takes the whole test (four
    answers: three items and the check), then staff withdraw them, and the trail gains the one entry expected."""
    CHECKED.clear()
    machine = AuditedMachine()
    try:
        machine.set_up(pilot=False, asks=False, joined=0, session=True)
        sitting = [(True, 1, 0)] * 4
        for step in (lambda: machine.take_the_test("w0", True, sitting), lambda: machine.withdraw("w0")):
            step()
            machine.the_ledger_holds()
            machine.the_trail_holds()
        assert CHECKED[A.WITHDRAW] == 1
    finally:
        machine.teardown()
