"""The researchers' API for withdrawal, and the withdrawn participant's removal from the Prolific group."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import AuditEntry, ProlificCall, ProlificGroup, Response, Withdrawal
from annotation.services.prolific.standin import TOKEN, StandIn
from tests.factories import ConditionFactory, StudyFactory, make_classification_task
from tests.rights.test_withdrawal import OTHER, PID, _answer_everything, _everything_stored

pytestmark = pytest.mark.django_db

URL = "/api/participants/withdraw/"


@pytest.fixture
def study():
    task = make_classification_task(slug="wtask", n_test=3)
    study = StudyFactory(
        task=task, slug="w-study", workers_per_condition=2, outcome_codes={"completed": {"code": "DONE42"}}
    )
    ConditionFactory(study=study, shots=0)
    return study


@pytest.fixture
def staff():
    User.objects.create_superuser("pi", "pi@example.org", "pw")
    c = Client()
    c.login(username="pi", password="pw")
    return c


def _post(staff, **data):
    return staff.post(URL, data, content_type="application/json")


def test_the_dry_run_changes_nothing_and_the_run_withdraws(client, study, staff):
    mine = _answer_everything(client, PID)
    before = _everything_stored()
    dry = _post(staff, platform="prolific", id=PID, study="w-study")
    assert dry.status_code == 200, dry.content
    body = dry.json()
    assert body["dry_run"] is True and "delete 3 answer(s)" in body["lines"]
    assert PID not in dry.content.decode()
    # Nothing changes but the audit trail, which records who looked (under the pseudonym).
    assert _everything_stored(but_the_trail=True) == _everything_stored(but_the_trail=True, dump=before)
    assert AuditEntry.objects.filter(action=AuditEntry.Action.WITHDRAW_DRY_RUN, actor_name="pi").count() == 1
    done = _post(staff, platform="prolific", id=PID, study="w-study", run=True)
    assert done.status_code == 200 and done.json()["dry_run"] is False
    assert not Response.objects.filter(participation=mine).exists()
    assert Withdrawal.objects.get().run_by == "pi"
    assert PID not in _everything_stored()


def test_bad_input_is_a_clear_4xx_and_changes_nothing(client, study, staff):
    _answer_everything(client, PID)
    other = StudyFactory(task=make_classification_task(slug="t2"), slug="other-study")
    ConditionFactory(study=other, shots=0)
    before = _everything_stored()
    unknown = _post(staff, platform="prolific", id="nobody", run=True)
    assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    assert "no prolific participant" in unknown.json()["detail"]
    elsewhere = _post(staff, platform="prolific", id=PID, study="other-study", run=True)
    assert elsewhere.status_code == 400 and elsewhere.json()["error"] == "withdrawal_refused"
    assert "did not take part in study 'other-study'" in elsewhere.json()["detail"]
    no_study = _post(staff, platform="prolific", id=PID, study="no-such-study", run=True)
    assert no_study.status_code == 404
    bad = _post(staff, platform="carrier-pigeon", id=PID, run=True)
    assert bad.status_code == 400 and bad.json()["error"] == "invalid" and "platform" in bad.json()["fields"]
    assert _everything_stored() == before
    assert _post(staff, platform="prolific", id=PID, run=True).status_code == 200
    after = _everything_stored()
    twice = _post(staff, platform="prolific", id=PID, run=True)
    assert twice.status_code == 409 and twice.json()["error"] == "already_withdrawn"
    assert _everything_stored() == after


def test_a_worker_cannot_call_it(client, study):
    _answer_everything(client, PID)
    answer = client.post(URL, {"platform": "prolific", "id": PID, "run": True}, content_type="application/json")
    assert answer.status_code in (401, 403)
    assert Response.objects.exists()


@pytest.fixture
def standin():
    server = StandIn().start()
    yield server
    server.stop()


@pytest.fixture
def grouped(settings, standin, client, study):
    """Two participants in the task's Prolific participant group, on the stand-in."""
    settings.PROLIFIC_API_TOKEN = TOKEN
    settings.PROLIFIC_API_URL = standin.url
    settings.PROLIFIC_TIMEOUT_SECONDS = 2
    _answer_everything(client, PID)
    client.logout()
    _answer_everything(client, OTHER)
    standin.groups["g1"] = {"id": "g1", "name": "Took part in wtask", "members": {PID, OTHER}}
    ProlificGroup.objects.create(task=study.task, group_id="g1", name="Took part in wtask")
    return standin


def test_a_withdrawn_participant_leaves_the_prolific_group_and_the_call_log_names_their_pseudonym(grouped, staff):
    dry = _post(staff, platform="prolific", id=PID).json()
    assert "remove from Prolific participant group 'Took part in wtask'" in dry["lines"]
    assert grouped.groups["g1"]["members"] == {PID, OTHER}  # the dry run sent nothing
    done = _post(staff, platform="prolific", id=PID, run=True).json()
    assert "removed from Prolific participant group 'Took part in wtask' (g1)" in done["lines"]
    assert grouped.groups["g1"]["members"] == {OTHER}
    [call] = ProlificCall.objects.all()
    assert (call.method, call.ok, call.request) == ("DELETE", True, {"participant_ids": [done["pseudonym"]]})
    assert PID not in _everything_stored()


def test_a_failed_group_removal_is_reported_and_the_erasure_stands(grouped, staff):
    grouped.groups.pop("g1")  # Prolific no longer knows the group: 404
    done = _post(staff, platform="prolific", id=PID, run=True).json()
    [note] = [line for line in done["lines"] if line.startswith("NOT removed from Prolific participant group")]
    assert "404" in note and "by hand" in note and PID not in note
    assert Withdrawal.objects.count() == 1 and PID not in _everything_stored()


def test_with_the_operations_off_the_report_says_the_group_was_left(settings, client, study, staff):
    settings.PROLIFIC_API_TOKEN = ""
    _answer_everything(client, PID)
    ProlificGroup.objects.create(task=study.task, group_id="g1", name="Took part in wtask")
    done = _post(staff, platform="prolific", id=PID, run=True).json()
    assert any("not removed from Prolific participant group" in line for line in done["lines"])
    assert Withdrawal.objects.count() == 1


def test_a_withdrawal_of_another_platform_sends_nothing_to_prolific(grouped, study):
    from annotation.models import Participation
    from annotation.services.rights import withdrawal
    from tests.factories import ParticipationFactory, WorkerFactory

    worker = WorkerFactory(platform="mturk", external_id="A1MTURKWORKER")
    ParticipationFactory(
        condition=study.conditions.get(), worker=worker, slot_index=5, state=Participation.State.COMPLETED
    )
    done = withdrawal.withdraw(platform="mturk", external_id="A1MTURKWORKER", run_by="pi")
    assert done.groups == [] and done.group_notes == [] and grouped.requests == []
    assert grouped.groups["g1"]["members"] == {PID, OTHER}
