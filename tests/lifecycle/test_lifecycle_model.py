"""The lifecycle model (tests/lifecycle/machine.py) run by hypothesis: a bounded number of examples in CI
(on SQLite and PostgreSQL), many more with LIFECYCLE_PROFILE=long before a release."""

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.lifecycle.machine import LifecycleMachine

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(1800)]

PROFILES = {
    "ci": {"max_examples": int(os.environ.get("LIFECYCLE_EXAMPLES", "15")), "stateful_step_count": 30},
    "long": {"max_examples": int(os.environ.get("LIFECYCLE_EXAMPLES", "1000")), "stateful_step_count": 60},
}


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
