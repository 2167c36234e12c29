"""Past participants for the platforms' exclusion lists, and blocking workers everywhere."""

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from annotation.models import Participation
from annotation.services.admission import blocklist, entry
from annotation.services.state.platforms import EntryParams
from tests.factories import ParticipationFactory, WorkerFactory, make_classification_task

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def took_part(make_study):
    """Prolific, MTurk and in-house workers in two studies of the task, in all kinds of states."""
    first, second = make_study(), make_study()
    rows = [
        ("prolific", "P2", first, State.COMPLETED),
        ("prolific", "P1", first, State.ABANDONED),
        ("prolific", "P3", second, State.EXCLUDED),
        ("mturk", "A9", first, State.TEST),
        ("mturk", "A1", second, State.CLAIMED),
        ("inhouse", "local", first, State.COMPLETED),
    ]
    for slot, (platform, wid, study, state) in enumerate(rows):
        condition = study.conditions.get(shots=(0, 10, 20, 30)[slot % 4])
        ParticipationFactory(
            condition=condition,
            worker=WorkerFactory(platform=platform, external_id=wid),
            state=state,
            slot_index=slot // 4,
        )
    other = make_study(for_task=make_classification_task(slug="mnli"))
    ParticipationFactory(
        condition=other.conditions.get(shots=0), worker=WorkerFactory(platform="prolific", external_id="OTHER")
    )
    return first.task


def test_participant_ids_are_every_worker_of_the_task_in_any_state_and_study(took_part):
    assert blocklist.participant_ids(task=took_part, platform="prolific") == ["P1", "P2", "P3"]
    assert blocklist.participant_ids(task=took_part, platform="mturk") == ["A1", "A9"]


def test_prolific_blocklist_is_one_participant_id_a_line(took_part):
    assert blocklist.prolific_blocklist(task=took_part) == "P1\nP2\nP3\n"


def test_mturk_csv_assigns_the_qualification_to_every_past_worker(took_part):
    content = blocklist.mturk_qualification_csv(task=took_part)
    rows = list(csv.reader(io.StringIO(content)))
    assert rows == [["Worker ID", "UPDATE-took-part-sst2"], ["A1", "1"], ["A9", "1"]]
    named = blocklist.mturk_qualification_csv(task=took_part, qualification_name="Did CLUES SST-2")
    assert named.splitlines()[0] == "Worker ID,UPDATE-Did CLUES SST-2"


@pytest.mark.parametrize("name", ["a,b", 'say "x"'])
def test_mturk_qualification_names_that_break_the_csv_are_refused(took_part, name):
    with pytest.raises(ValidationError):
        blocklist.mturk_qualification_csv(task=took_part, qualification_name=name)


def test_export_names_the_file_and_refuses_an_unknown_format(took_part):
    _, content_type, filename = blocklist.export_participants(task=took_part, fmt="prolific")
    assert (content_type, filename) == ("text/plain; charset=utf-8", "sst2-prolific-blocklist.txt")
    assert blocklist.export_participants(task=took_part, fmt="mturk")[2] == "sst2-mturk-qualification.csv"
    with pytest.raises(ValidationError, match="Unknown format"):
        blocklist.export_participants(task=took_part, fmt="xlsx")


def test_a_blocked_worker_cannot_join_any_study_and_unblocking_lets_them(make_study):
    admin = get_user_model().objects.create_user("boss")
    worker = WorkerFactory(platform="prolific", external_id="P7")
    blocklist.block_worker(worker=worker, reason="bot-like answers", actor=admin)
    worker.refresh_from_db()
    assert worker.blocked and worker.blocked_reason == "bot-like answers (by boss)"
    params = EntryParams(platform="prolific", external_id="P7")
    study = make_study()
    assert entry.join_study(study=study, params=params).outcome == entry.Outcome.BLOCKED
    blocklist.unblock_worker(worker=worker)
    worker.refresh_from_db()
    assert not worker.blocked and worker.blocked_reason == ""
    assert entry.join_study(study=study, params=params).outcome == entry.Outcome.JOINED


def test_blocking_needs_a_reason(db):
    worker = WorkerFactory()
    with pytest.raises(ValidationError):
        blocklist.block_worker(worker=worker, reason=" ")
    worker.refresh_from_db()
    assert not worker.blocked
