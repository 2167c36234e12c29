"""The lifecycle model (tests/lifecycle/machine.py) run by hypothesis: a bounded number of examples in CI
(on SQLite and PostgreSQL), many more with LIFECYCLE_PROFILE=long before a release."""

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.lifecycle.machine import LifecycleMachine

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(1800)]

# LIFECYCLE_EXAMPLES and LIFECYCLE_STEPS override a profile's examples and steps per example. CI's examples
# are the same every run (derandomize): a red CI is the code's, never the draw's; the long profile, before a
# release, explores at random (each sequence it finds is kept in test_found_sequences.py).
PROFILES = {
    "ci": {"max_examples": 15, "stateful_step_count": 30, "derandomize": True},
    "long": {"max_examples": 1000, "stateful_step_count": 60},
}
for _profile in PROFILES.values():
    _profile["max_examples"] = int(os.environ.get("LIFECYCLE_EXAMPLES", _profile["max_examples"]))
    _profile["stateful_step_count"] = int(os.environ.get("LIFECYCLE_STEPS", _profile["stateful_step_count"]))


def test_the_lifecycle_keeps_the_ledger():
    profile = PROFILES[os.environ.get("LIFECYCLE_PROFILE", "ci")]
    run_state_machine_as_test(
        LifecycleMachine,
        settings=settings(
            deadline=None,
            database=None,  # no example database in the repository: a failure prints its steps instead
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            **profile,
        ),
    )


def test_a_pilot_then_the_rest_keeps_the_ledger():
    """The pilot's path as one fixed sequence of the model's rules (the bounded run above may not reach it):
    a pilot of one slot refuses the second arrival, its places are the pilot's, the rest opens the design."""
    machine = LifecycleMachine()
    try:
        machine.set_up(pilot=True, asks=False, joined=0)
        steps = [
            lambda: machine.open_the_link("w0", True, agrees=True),
            lambda: machine.open_the_link("w1", True, agrees=True),  # refused: the pilot's one slot is held
            lambda: machine.run_a_prolific_operation("places"),
            lambda: machine.open_as_a_pilot_again(),
            lambda: machine.open_the_rest(),
            lambda: machine.open_the_rest(),  # refused: the rest is open already
            lambda: machine.open_the_link("w2", False, agrees=True),
            lambda: machine.run_a_prolific_operation("places"),
            lambda: machine.open_the_link("w3", True, agrees=True),  # refused: the design's two slots are held
        ]
        for step in steps:
            step()
            machine.the_ledger_holds()
        assert sorted(machine.ledger.entries) == ["w0", "w2"]
        assert machine.standin.places["PS1"]["total"] == 2
    finally:
        machine.teardown()
