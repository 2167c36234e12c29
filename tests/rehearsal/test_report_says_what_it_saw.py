"""The rehearsal report says only what it saw: behaviours its crowd never exercised (turned away "full") are
named as such, not "ok"; the launch check comes first; the planning section names a command that has the option
it suggests. Built from facts as the engine leaves them, without running a crowd (test_rehearse_study does)."""

import pytest
from django.core.management import call_command

from annotation.rehearsal import invariants
from annotation.rehearsal.client import Recorder
from annotation.rehearsal.report import Report
from annotation.reporting import planning
from annotation.services.studies import launch
from tests.factories import make_classification_task
from tests.reporting.builders import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def sst2():
    return make_classification_task(slug="sst2-fixture", n_test=4)


def _visit(behaviour: str, n: int, *, refused: int | None = None, study: str = "s") -> dict:
    return {"behaviour": behaviour, "worker_id": f"w{n}-{behaviour}", "study": study, "refused": refused}


def test_behaviours_turned_away_each_time_are_not_exercised():
    facts = {
        "design": {"study": "s"},
        "crowd": [
            _visit("skipper", 1),
            _visit("careful", 2),
            _visit("careful", 3, refused=409),
            _visit("average", 4, refused=409),
            _visit("average", 5, refused=409),
            _visit("guessing", 6, refused=409),
            _visit("careful", 7, study="s-second"),  # another study's visit counts for nothing here
        ],
    }
    assert invariants.not_exercised(facts) == ["average (refused 409 each time)", "guessing (refused 409 each time)"]
    facts["crowd"] = [v for v in facts["crowd"] if v["behaviour"] != "guessing"]
    assert invariants.not_exercised(facts)[-1] == "guessing (never drawn)"


def test_the_report_marks_what_was_not_exercised_and_puts_the_launch_check_first(sst2):
    study = make_study(sst2, shots=(0,), slug="seen")
    checked = [
        {"name": "every simulated worker followed the protocol", "passed": True, "detail": "9 visits",
         "not_exercised": ["guessing (refused 409 each time)"]},
        {"name": "nobody paid twice", "passed": True, "detail": "paid once"},
    ]  # fmt: skip
    report = Report.build(
        study=study.slug,
        seed=0,
        scratch={"engine": "sqlite"},
        design={"workers_per_condition": 2, "shots": [0], "assumed": {"base_reward": "0.00"}},
        invariants=checked,
        recorder=Recorder(),
        wall_seconds=1,
        crowd_seconds=1,
        crowd=[],
        prolific={},
        launch=launch.launch_check(study),
    )
    text = report.markdown()
    assert (
        "| ok, partly not exercised | every simulated worker followed the protocol | 9 visits. Not exercised: " in text
    )
    assert "| ok | nobody paid twice |" in text
    assert "Not exercised by the crowd, so not checked: guessing (refused 409 each time)." in text
    assert "the copy assumed base_reward = 0.00" in text
    head, rest = text.split("## Launch check\n\n", 1)
    assert "## Invariants" not in head and rest.startswith("BLOCKS the launch (1):\n- No posted reward")
    assert text.count("No posted reward") == 1  # named once
    assert report.as_dict()["not_exercised"] == ["guessing (refused 409 each time)"]
    assert report.as_dict()["launch_check"]["blockers"][0]["code"] == "no_posted_reward"


def test_the_planning_section_suggests_a_command_that_has_the_option(sst2):
    study = make_study(sst2, shots=(0,), slug="unpiloted")
    error = planning.rehearsal_section(study.slug)["error"]
    assert "manage.py plan_study unpiloted --accuracy 0.85" in error
    # ... and that command takes it as written.
    call_command("plan_study", "unpiloted", "--accuracy", "0.85", "--simulations", "5", "--workers", "3")
