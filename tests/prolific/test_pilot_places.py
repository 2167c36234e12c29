"""A pilot launch on Prolific: the pilot's places, then "open the rest" raises them to the design's.

The stand-in keeps Prolific's state. The expected totals are counted here from the design: the pilot needs
conditions × its share (+ the exclusions that kept their place), the rest conditions × N (+ the same).
Each change is planned (the dry run: nothing sent), then run, then run again (nothing sent twice).
"""

from decimal import Decimal

import pytest

from annotation.models import Participation, Study
from annotation.services.admission import entry
from annotation.services.admission.entry import Outcome
from annotation.services.prolific import operations
from annotation.services.state import lifecycle
from annotation.services.state.platforms import EntryParams
from annotation.services.studies import launch, studies
from tests.factories import make_classification_task

State = Participation.State
CONDITIONS, N, SHARE = 2, 3, 1
PILOT_PLACES, DESIGN_PLACES = CONDITIONS * SHARE, CONDITIONS * N


@pytest.fixture
def pilot(prolific_on, db):
    """A draft of two conditions, three workers each, a pilot share of one, opted in to the places sync;
    the researcher made its Prolific study (PS1, reward 3.00) with the pilot's places, as docs/studies.md says."""
    task = make_classification_task(slug="pilot-task")
    study = studies.study_create(
        task=task,
        slug="pilot",
        shots=(0, 10),
        workers_per_condition=N,
        pilot_workers_per_condition=SHARE,
        prolific_sync_places=True,
        base_reward=Decimal("3.00"),
        currency="GBP",
    )
    standin = prolific_on
    standin.add_study(study_id="PS1", reward=300)
    standin.set_places("PS1", PILOT_PLACES)
    return study, standin


def arrive(standin, study, pid):
    """A Prolific participant opens the entry link (the service behind the page) and, if taken, submits."""
    params = EntryParams(
        platform="prolific", external_id=pid, platform_data={"STUDY_ID": "PS1", "SESSION_ID": f"sub-{pid}"}
    )
    result = entry.join_study(study=study, params=params)
    if result.outcome == Outcome.JOINED:
        standin.add_submission(submission_id=f"sub-{pid}", participant=pid, study_id="PS1")
    return result


def prolific(standin):
    return standin.places["PS1"]["total"], standin.studies["PS1"]["status"]


def study_rows(report):
    return [(r.action, r.state) for r in report.rows]


def test_the_pilot_then_the_rest_dry_run_and_for_real_each_once(pilot, django_capture_on_commit_callbacks):
    study, standin = pilot
    studies.change_status(study=study, to_status=Study.Status.OPEN, pilot=True)
    study.refresh_from_db()
    joined = [arrive(standin, study, f"p{i}") for i in range(PILOT_PLACES + 1)]
    assert [r.outcome for r in joined] == [Outcome.JOINED] * PILOT_PLACES + [Outcome.FULL]

    # The pilot: every pilot slot is held, so Prolific's study is paused; no place is added.
    dry = operations.plan(operation="places", study=study)
    assert study_rows(dry) == [("PAUSE", "to do")]
    assert f"the pilot opens {PILOT_PLACES} of the design's {DESIGN_PLACES} slots, 0 free" in dry.notes[0]
    assert standin.writes() == [] and prolific(standin) == (PILOT_PLACES, "ACTIVE")
    assert operations.run(operation="places", study=study).counts == {"done": 1}
    assert prolific(standin) == (PILOT_PLACES, "PAUSED")
    sent = len(standin.writes())
    assert operations.run(operation="places", study=study).rows == []
    assert len(standin.writes()) == sent

    # The rest: the dry run states the places to add and their cost, and sends nothing.
    with django_capture_on_commit_callbacks() as queued:
        launch.open_rest(study=study)
    study.refresh_from_db()
    dry = operations.plan(operation="places", study=study)
    added = DESIGN_PLACES - PILOT_PLACES
    assert study_rows(dry) == [(f"PLACES {PILOT_PLACES}→{DESIGN_PLACES}", "to do"), ("RESUME", "to do")]
    assert dry.total == Decimal("3.00") * added
    assert f"expected cost {added} × reward (3.00 GBP each)" in dry.rows[0].note
    assert len(standin.writes()) == sent and prolific(standin) == (PILOT_PLACES, "PAUSED")
    report = operations.run(operation="places", study=study)
    assert report.counts == {"done": 2}
    assert prolific(standin) == (DESIGN_PLACES, "ACTIVE")
    sent = len(standin.writes())
    for callback in queued:  # the sync "open the rest" queued (Celery eager): nothing left to send
        callback()
    assert operations.run(operation="places", study=study).rows == []
    assert len(standin.writes()) == sent
    patches = [r for r in standin.writes() if r[0] == "PATCH"]
    assert [body.get("total_available_places") for _, _, body in patches] == [DESIGN_PLACES]

    # The rest's workers fill the design; a pilot worker is no fresh worker.
    again = arrive(standin, study, "p0")
    assert again.outcome != Outcome.JOINED
    rest = [arrive(standin, study, f"r{i}") for i in range(added + 1)]
    assert [r.outcome for r in rest] == [Outcome.JOINED] * added + [Outcome.FULL]


def test_an_exclusion_in_the_pilot_gets_its_place_and_the_rest_counts_it(pilot, django_capture_on_commit_callbacks):
    study, standin = pilot
    studies.change_status(study=study, to_status=Study.Status.OPEN, pilot=True)
    study.refresh_from_db()
    first = [arrive(standin, study, f"p{i}") for i in range(PILOT_PLACES)]
    with django_capture_on_commit_callbacks(execute=True):  # the sync follows the slot, on commit
        lifecycle.exclude(first[0].participation, reason="low training score", kind="training_filter")
    assert prolific(standin) == (PILOT_PLACES + 1, "ACTIVE")  # the pilot's need + the excluded one's replacement
    with django_capture_on_commit_callbacks(execute=True):
        launch.open_rest(study=study)
    assert prolific(standin) == (DESIGN_PLACES + 1, "ACTIVE")


def test_a_prolific_study_made_with_every_place_is_paused_when_the_pilot_is_full(pilot):
    study, standin = pilot
    standin.set_places("PS1", DESIGN_PLACES)
    studies.change_status(study=study, to_status=Study.Status.OPEN, pilot=True)
    study.refresh_from_db()
    for i in range(PILOT_PLACES):
        arrive(standin, study, f"p{i}")
    report = operations.run(operation="places", study=study)
    assert study_rows(report) == [("PAUSE", "done")]
    assert any("cannot be lowered" in note for note in report.notes)
    assert prolific(standin) == (DESIGN_PLACES, "PAUSED")


def test_the_rest_opened_before_anyone_came_is_raised_at_the_first_arrival(pilot, django_capture_on_commit_callbacks):
    """The app learns which Prolific study is its own from an arrival's STUDY_ID: until then nothing is raised."""
    study, standin = pilot
    studies.change_status(study=study, to_status=Study.Status.OPEN, pilot=True)
    with django_capture_on_commit_callbacks(execute=True):
        launch.open_rest(study=study)
    assert prolific(standin) == (PILOT_PLACES, "ACTIVE") and standin.writes() == []
    study.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        arrive(standin, study, "first")
    assert prolific(standin) == (DESIGN_PLACES, "ACTIVE")
