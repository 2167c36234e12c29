"""Consent right after entry and the survey before training or after the test: pages and session API."""

import json

import pytest

from annotation.models import Participation, ParticipationEvent, SurveyResponse
from annotation.services.admission import consent
from annotation.services.state import lifecycle, slots
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State
API = "/api/session/"
TEXT = "## Consent\n\nYour answers are kept **anonymously**. <script>alert(1)</script>"
SURVEY = [
    {"key": "age", "type": "single", "label": "Your age", "options": ["18-29", "30-49", "50+"], "required": True},
    {"key": "years", "type": "number", "label": "Years annotating", "min": 0, "max": 60},
    {"key": "langs", "type": "multiple", "label": "Languages", "options": ["English", "German"]},
]


def post(client, path, body=None):
    return client.post(API + path, data=json.dumps(body if body is not None else {}), content_type="application/json")


@pytest.fixture
def consenting(sst_task, worker):
    p = make_participation(sst_task, state=State.CLAIMED, consent_required=True, consent_text=TEXT)
    return p, worker(p)


def test_the_consent_page_comes_first_and_renders_markdown_without_html(consenting):
    p, client = consenting
    html = client.get("/work/").content.decode()
    assert 'id="consent-agree"' in html and "<strong>anonymously</strong>" in html
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    session = client.get(API + "current/").json()
    assert session["pending"] == "consent" and session["consent"]["text_hash"] == consent.text_hash(TEXT)
    response = post(client, "start/")
    assert response.status_code == 409 and response.json()["error"] == "consent_required"
    p.refresh_from_db()
    assert p.state == State.CLAIMED


def test_agreeing_records_the_time_and_the_hash_of_the_text_shown(consenting):
    p, client = consenting
    response = client.post("/work/consent/", {"choice": "agree", "text_hash": consent.text_hash(TEXT)})
    assert response.status_code == 302
    p.refresh_from_db()
    assert p.consented_at is not None and p.consent_hash == consent.text_hash(TEXT) and p.state == State.CLAIMED
    assert 'id="start-button"' in client.get("/work/").content.decode()
    assert post(client, "start/").status_code == 200


def test_a_changed_text_must_be_read_again_and_stores_nothing(consenting):
    p, client = consenting
    response = post(client, "consent/", {"agree": True, "text_hash": consent.text_hash("an older text")})
    assert response.status_code == 409 and response.json()["error"] == "consent_changed"
    response = client.post("/work/consent/", {"choice": "agree", "text_hash": "0" * 64})
    assert response.status_code == 409 and "has changed" in response.content.decode()
    p.refresh_from_db()
    assert p.consented_at is None and p.consent_hash == ""


@pytest.mark.parametrize("body", [{}, {"agree": "yes"}, {"agree": True}])
def test_a_malformed_consent_answer_is_a_400(consenting, body):
    p, client = consenting
    response = post(client, "consent/", body)
    assert response.status_code == 400 and response.json()["error"] == "invalid_consent"
    p.refresh_from_db()
    assert p.consented_at is None and p.state == State.CLAIMED


def test_declining_ends_the_participation_frees_the_slot_and_shows_the_no_consent_code(consenting):
    p, client = consenting
    response = post(client, "consent/", {"agree": False})
    assert response.status_code == 200
    body = response.json()
    p.refresh_from_db()
    code = p.study.outcome_codes["declined"]["code"]
    assert p.state == State.DECLINED and p.finished_at is not None and p.completion_code == code
    assert body["completion"]["outcome"] == "declined" and body["completion"]["code"] == code
    assert ParticipationEvent.objects.filter(participation=p, to_state=State.DECLINED).exists()
    (counts,) = slots.condition_counts([p.study])[p.study.pk]
    assert (counts.filled, counts.declined) == (0, 1)
    html = client.get("/work/").content.decode()
    assert "chosen not to take part" in html and code in html
    # Deciding again changes nothing.
    assert post(client, "consent/", {"agree": True, "text_hash": consent.text_hash(TEXT)}).status_code == 409


def test_a_returning_worker_who_declined_sees_the_page_again(sst_task, client):
    from tests.factories import StudyFactory

    study = StudyFactory(task=sst_task, consent_required=True, consent_text=TEXT)
    study.conditions.create(shots=0)
    assert client.get(f"/join/{study.slug}/", {"worker_id": "w1"}).status_code == 200  # the text, no slot
    client.post(f"/join/{study.slug}/?worker_id=w1", {"choice": "decline"})
    response = client.get(f"/join/{study.slug}/", {"worker_id": "w1"})
    assert response.status_code == 200 and "chosen not to take part" in response.content.decode()


@pytest.fixture
def surveyed(sst_task, worker):
    def build(placement, state=State.CLAIMED):
        p = make_participation(sst_task, state=state, survey=SURVEY, survey_placement=placement)
        return p, worker(p)

    return build


def test_a_survey_before_training_is_due_before_the_start(surveyed):
    p, client = surveyed("before_training")
    html = client.get("/work/").content.decode()
    assert 'id="survey-form"' in html and "Your age" in html
    session = client.get(API + "current/").json()
    assert session["pending"] == "survey" and session["survey"]["questions"] == SURVEY
    assert post(client, "start/").json()["error"] == "survey_required"
    response = post(client, "survey/", {"answers": {"age": "30-49", "years": 4, "langs": ["German"]}})
    assert response.status_code == 200 and response.json()["pending"] is None
    stored = SurveyResponse.objects.get(participation=p)
    assert (stored.placement, stored.answers) == ("before_training", {"age": "30-49", "years": 4, "langs": ["German"]})
    assert 'id="start-button"' in client.get("/work/").content.decode()
    # Once only.
    assert post(client, "survey/", {"answers": {"age": "50+"}}).json()["error"] == "survey_not_due"


@pytest.mark.parametrize(
    ("answers", "key"),
    [({"years": 3}, "age"), ({"age": "12"}, "age"), ({"age": "50+", "years": "lots"}, "years")],
)
def test_wrong_survey_answers_are_a_400_naming_the_question_and_store_nothing(surveyed, answers, key):
    p, client = surveyed("before_training")
    response = post(client, "survey/", {"answers": answers})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_survey" and key in response.json()["errors"]
    assert not SurveyResponse.objects.exists()


def test_the_survey_form_shows_errors_and_keeps_what_was_entered(surveyed):
    p, client = surveyed("before_training")
    response = client.post("/work/survey/", {"years": "lots", "langs": ["English"]})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="error-age"' in html and 'id="error-years"' in html
    assert 'value="lots"' in html and 'value="English" checked' in html
    assert not SurveyResponse.objects.exists()
    response = client.post("/work/survey/", {"age": "18-29", "years": "2,5"})
    assert response.status_code == 302
    assert SurveyResponse.objects.get(participation=p).answers == {"age": "18-29", "years": 2.5}


def test_a_survey_after_the_test_comes_before_the_finish_page(surveyed):
    p, client = surveyed("after_test", state=State.TEST)
    assert client.get(API + "current/").json()["pending"] is None  # not yet
    lifecycle.finish_test(p)
    html = client.get("/work/").content.decode()
    assert 'id="survey-form"' in html and 'id="completion-code"' not in html
    assert client.post("/work/survey/", {"age": "50+"}).status_code == 302
    html = client.get("/work/").content.decode()
    assert 'id="completion-code"' in html
    assert SurveyResponse.objects.get(participation=p).placement == "after_test"


def test_no_survey_is_due_without_one(sst_worker_without_survey):
    p, client = sst_worker_without_survey
    assert post(client, "survey/", {"answers": {}}).json()["error"] == "survey_not_due"


@pytest.fixture
def sst_worker_without_survey(sst_task, worker):
    p = make_participation(sst_task, state=State.CLAIMED)
    return p, worker(p)


def test_the_admin_shows_a_participation_s_consent_and_survey_answers(surveyed, admin_client):
    p, client = surveyed("before_training")
    post(client, "survey/", {"answers": {"age": "50+"}})
    html = admin_client.get(f"/admin/annotation/participation/{p.pk}/change/").content.decode()
    assert "Before the training step" in html and "50+" in html
