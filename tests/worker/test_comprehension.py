"""The comprehension check: after consent, before training; a second attempt after a failed first; a failed
second screens the worker out with the screened_out code, frees the slot and pays to the screen-out."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest

from annotation.models import ComprehensionAttempt, Participation, ParticipationEvent, Study
from annotation.reporting.statement import comprehension_facts
from annotation.services.admission import comprehension
from annotation.services.money import pay
from annotation.services.state import slots
from tasks_app.models import ExampleSet
from tests.entry_link import take_part
from tests.factories import ConditionFactory, StudyFactory
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State
API = "/api/session/"
CHECK = [
    {"key": "what", "label": "What do you choose?", "options": ["A label", "A colour"], "correct": ["A label"]},
    {
        "key": "when",
        "label": "When may you skip an item?",
        "options": ["Never", "When it is unclear", "When it is long"],
        "correct": ["When it is unclear"],
    },
]
RIGHT = {"what": "A label", "when": "When it is unclear"}
HALF_WRONG = {"what": "A label", "when": "Never"}


def post(client, path, body=None):
    return client.post(API + path, data=json.dumps(body if body is not None else {}), content_type="application/json")


@pytest.fixture
def checked(sst_task, worker):
    p = make_participation(sst_task, shots=10, state=State.CLAIMED, comprehension=CHECK)
    return p, worker(p)


def test_the_check_comes_before_training_and_passing_first_time_opens_the_start(checked):
    p, client = checked
    session = client.get(API + "current/").json()
    assert session["pending"] == "comprehension"
    assert session["comprehension"] == {
        "questions": [{**{k: q[k] for k in ("key", "label", "options")}, "multiple": False} for q in CHECK],
        "attempt": 1,
        "wrong": [],
    }
    assert "correct" not in json.dumps(session)  # the right options never leave the server
    refused = post(client, "start/")
    assert refused.status_code == 409 and refused.json()["error"] == "comprehension_required"
    body = post(client, "comprehension/", {"answers": RIGHT}).json()
    assert body["attempt_result"] == {"number": 1, "passed": True, "wrong": []}
    assert body["pending"] is None and body["state"] == State.CLAIMED
    assert post(client, "start/").json()["state"] == State.TRAINING
    assert list(ComprehensionAttempt.objects.filter(participation=p).values_list("number", "passed")) == [(1, True)]
    again = post(client, "comprehension/", {"answers": RIGHT})
    assert again.status_code == 409 and again.json()["error"] == "comprehension_not_due"


def test_failing_once_names_the_wrong_questions_not_the_answers_and_a_second_pass_goes_on(checked):
    p, client = checked
    body = post(client, "comprehension/", {"answers": HALF_WRONG}).json()
    assert body["attempt_result"] == {"number": 1, "passed": False, "wrong": ["when"]}
    assert body["pending"] == "comprehension" and body["comprehension"]["attempt"] == 2
    assert body["comprehension"]["wrong"] == ["when"] and body["state"] == State.CLAIMED
    html = client.get("/work/").content.decode()
    assert 'id="comprehension-retry"' in html and 'id="wrong-when"' in html and 'id="wrong-what"' not in html
    assert "last attempt" in html
    body = post(client, "comprehension/", {"answers": RIGHT}).json()
    assert body["attempt_result"]["passed"] and body["pending"] is None
    p.refresh_from_db()
    assert p.state == State.CLAIMED and p.exclusion_kind == ""
    assert post(client, "start/").status_code == 200


@pytest.mark.parametrize(
    ("answers", "key"),
    [({"what": "A label"}, "when"), ({**RIGHT, "what": "A shape"}, "what"), ({**RIGHT, "extra": "x"}, "extra")],
)
def test_a_malformed_attempt_is_a_400_and_spends_no_attempt(checked, answers, key):
    p, client = checked
    response = post(client, "comprehension/", {"answers": answers})
    assert response.status_code == 400 and response.json()["error"] == "invalid_comprehension"
    assert key in response.json()["errors"]
    assert post(client, "comprehension/", {"answers": "RIGHT"}).status_code == 400
    assert not ComprehensionAttempt.objects.filter(participation=p).exists()


def test_the_page_form_walks_fail_then_pass(checked):
    p, client = checked
    html = client.get("/work/").content.decode()
    assert 'id="comprehension-form"' in html and 'id="comprehension-instructions"' in html
    assert client.post("/work/comprehension/", {"what": "A label"}).status_code == 400  # one unanswered
    assert client.post("/work/comprehension/", {"what": "A colour", "when": "Never"}).status_code == 302
    assert 'id="wrong-what"' in client.get("/work/").content.decode()
    assert client.post("/work/comprehension/", RIGHT).status_code == 302
    assert 'id="start-button"' in client.get("/work/").content.decode()


@pytest.fixture
def one_slot_study(sst_task):
    study = StudyFactory(
        task=sst_task,
        consent_required=True,
        consent_text="You agree.",
        comprehension=CHECK,
        workers_per_condition=1,
        hourly_rate=Decimal("12.00"),
        base_reward=Decimal("0.50"),
    )
    training = ExampleSet.objects.get(task=sst_task, role=ExampleSet.Role.TRAIN, split__number=1, shots=10)
    ConditionFactory(study=study, shots=10, training_set=training)
    return study


def test_failing_twice_screens_out_with_the_code_frees_the_slot_and_pays_to_the_screen_out(one_slot_study, client):
    study: Study = one_slot_study
    assert take_part(client, study.slug, {"worker_id": "first"}).status_code == 302
    p = Participation.objects.get(study=study)
    post(client, "comprehension/", {"answers": HALF_WRONG})
    body = post(client, "comprehension/", {"answers": {"what": "A colour", "when": "Never"}}).json()
    assert body["attempt_result"] == {"number": 2, "passed": False, "wrong": ["what", "when"]}
    p.refresh_from_db()
    code = study.outcome_codes["screened_out"]["code"]
    assert (p.state, p.exclusion_kind, p.completion_code) == (State.EXCLUDED, "comprehension", code)
    assert body["state"] == State.EXCLUDED and body["pending"] is None
    assert body["completion"]["outcome"] == "screened_out" and body["completion"]["code"] == code
    html = client.get("/work/").content.decode()
    assert 'id="comprehension-screened-out"' in html and code in html
    assert post(client, "comprehension/", {"answers": RIGHT}).status_code == 409  # no third attempt
    # The slot is free again: a second worker takes it.
    (counts,) = slots.condition_counts([study])[study.pk]
    assert counts.filled == 0
    assert take_part(client, study.slug, {"worker_id": "second"}).status_code == 302
    assert Participation.objects.get(study=study, worker__external_id="second").state == State.CLAIMED
    # Paid from the claim (consent) to the screen-out, whatever happens to the row afterwards.
    events = {e.to_state: e.at for e in ParticipationEvent.objects.filter(participation=p)}
    Participation.objects.filter(pk=p.pk).update(last_activity_at=events[State.EXCLUDED] + timedelta(hours=1))
    p.refresh_from_db()
    seconds = pay.paid_seconds([p])[p.pk]
    assert seconds == (events[State.EXCLUDED] - events[State.CLAIMED]).total_seconds()
    assert pay.pay_lines(study=study, participations=[p])[p.pk].amount == Decimal("0.50")
    facts = comprehension_facts(study)
    assert "Of 1 worker who took it, 0 passed at the first attempt, 0 at the second and 1 was screened out" in facts


def test_a_study_without_a_check_asks_none(sst_task, worker):
    p = make_participation(sst_task, state=State.CLAIMED)
    client = worker(p)
    assert client.get(API + "current/").json()["comprehension"] is None
    assert not comprehension.due(p)
    assert post(client, "comprehension/", {"answers": RIGHT}).json()["error"] == "comprehension_not_due"
    assert comprehension_facts(p.study) == "Comprehension check: none."


def test_a_worker_screened_out_by_the_check_is_not_readmitted_by_an_admin(checked):
    from annotation.services.state import lifecycle
    from annotation.services.verdicts import overrides

    p, client = checked
    post(client, "comprehension/", {"answers": HALF_WRONG})
    post(client, "comprehension/", {"answers": HALF_WRONG})
    p.refresh_from_db()
    assert p.exclusion_kind == "comprehension"
    with pytest.raises(lifecycle.InvalidTransition, match="comprehension check"):
        overrides.override(p, admit=True, reason="let them in", actor=None)
    p.refresh_from_db()
    assert p.state == State.EXCLUDED
