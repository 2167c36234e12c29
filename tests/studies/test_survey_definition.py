"""A study's survey definition and consent settings: one check, used by the model, the admin and the API."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client

from annotation.models import Study
from annotation.protocol import survey as survey_definition
from annotation.services.admission import survey
from annotation.services.admission.survey import InvalidSurveyAnswers

pytestmark = pytest.mark.django_db

SURVEY = [
    {"key": "age", "type": "single", "label": "Your age", "options": ["18-29", "30-49", "50+"], "required": True},
    {"key": "langs", "type": "multiple", "label": "Languages", "options": ["English", "German", "French"]},
    {"key": "years", "type": "number", "label": "Years annotating", "min": 0, "max": 60},
    {"key": "native", "type": "text", "label": "Native language"},
]


def test_a_good_survey_passes():
    survey_definition.validate_definition(SURVEY)
    survey_definition.validate_definition([])


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"key": "a"}, "JSON list"),
        (["age"], "give an object"),
        ([{"key": "a b", "type": "text", "label": "A"}], "key must be"),
        ([{"key": "a", "type": "slider", "label": "A"}], "type must be one of"),
        ([{"key": "a", "type": "text", "label": ""}], "label is"),
        ([{"key": "a", "type": "single", "label": "A", "options": ["only"]}], "2 to 30 options"),
        ([{"key": "a", "type": "single", "label": "A", "options": ["x", "x"]}], "must differ"),
        ([{"key": "a", "type": "text", "label": "A", "options": ["x", "y"]}], "only single and multiple"),
        ([{"key": "a", "type": "number", "label": "A", "min": 5, "max": 1}], "min is above max"),
        ([{"key": "a", "type": "number", "label": "A", "min": "0"}], "min is a number"),
        ([{"key": "a", "type": "text", "label": "A", "required": "yes"}], "true or false"),
        ([{"key": "a", "type": "text", "label": "A"}, {"key": "a", "type": "text", "label": "B"}], "used twice"),
        ([{"key": "a", "type": "text", "label": "A", "hint": "x"}], "unknown field"),
    ],
)
def test_malformed_definitions_are_refused_with_the_reason(definition, message):
    with pytest.raises(ValidationError) as exc:
        survey_definition.validate_definition(definition)
    assert message in " ".join(exc.value.messages)


def test_answers_are_cleaned_and_unanswered_optional_questions_left_out():
    cleaned = survey.clean_answers(SURVEY, {"age": "30-49", "langs": ["French", "English"], "years": "3", "native": ""})
    assert cleaned == {"age": "30-49", "langs": ["English", "French"], "years": 3}


@pytest.mark.parametrize(
    ("answers", "key"),
    [
        ({"langs": ["English"]}, "age"),  # required
        ({"age": "17"}, "age"),  # not an option
        ({"age": "18-29", "langs": ["Klingon"]}, "langs"),
        ({"age": "18-29", "years": "many"}, "years"),  # number given text
        ({"age": "18-29", "years": 61}, "years"),
        ({"age": "18-29", "years": True}, "years"),
        ({"age": "18-29", "native": 7}, "native"),
        ({"age": "18-29", "shoe_size": "42"}, "shoe_size"),
    ],
)
def test_wrong_answers_name_their_question(answers, key):
    with pytest.raises(InvalidSurveyAnswers) as exc:
        survey.clean_answers(SURVEY, answers)
    assert key in exc.value.errors


def test_the_model_refuses_a_bad_survey_and_required_consent_without_text(make_study):
    with pytest.raises(ValidationError) as exc:
        make_study(survey=[{"key": "a", "type": "single", "label": "A"}], consent_required=True, consent_text="  ")
    assert set(exc.value.message_dict) >= {"consent_text"}
    with pytest.raises(ValidationError) as exc:
        make_study(survey=[{"key": "a", "type": "single", "label": "A"}])
    assert "options" in str(exc.value.message_dict["survey"])
    assert not Study.objects.exists()


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


def test_the_api_sets_consent_survey_codes_and_titles_and_refuses_bad_ones(admin_client, study):
    url = f"/api/studies/{study.pk}/"
    good = {
        "consent_required": True,
        "consent_text": "# Consent\n\nYou agree to **take part**.",
        "survey": SURVEY,
        "survey_placement": "before_training",
        "outcome_codes": {"declined": {"code": "NOCONSENT"}},
        "worker_title": "Movie review sentiment",
    }
    completed = Study.objects.get(pk=study.pk).outcome_codes["completed"]
    response = admin_client.patch(url, good, content_type="application/json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["outcome_codes"]["completed"] == completed  # the outcomes not named keep their codes
    assert body["survey"] == SURVEY and body["outcome_codes"]["declined"]["code"] == "NOCONSENT"
    assert set(body["outcome_codes"]) == {
        "completed",
        "screened_out",
        "attention_failed",
        "declined",
        "full",
        "already_took_part",
    }
    before = Study.objects.values().get(pk=study.pk)
    for bad, field in [
        ({"consent_text": ""}, "consent_text"),
        ({"survey": [{"key": "x", "type": "number", "label": "X", "min": 3, "max": 1}]}, "survey"),
        ({"survey": "not a list"}, "survey"),
        ({"survey": None}, "survey"),
        ({"outcome_codes": None}, "outcome_codes"),
        ({"outcome_codes": {"completed": {"code": "bad code"}}}, "outcome_codes"),
        ({"survey_placement": "during"}, "survey_placement"),
    ]:
        response = admin_client.patch(url, bad, content_type="application/json")
        assert response.status_code == 400, (bad, response.content)
        assert field in json.dumps(response.json()), response.json()
    after = Study.objects.values().get(pk=study.pk)
    assert {k: v for k, v in after.items() if k != "updated_at"} == {
        k: v for k, v in before.items() if k != "updated_at"
    }


def test_the_admin_form_shows_a_malformed_survey_next_to_the_field(admin_client, study):
    from tests.studies.test_admin import _change_data

    url = f"/admin/annotation/study/{study.pk}/change/"
    data = _change_data(study, survey=json.dumps([{"key": "x", "type": "single", "label": "X", "options": ["a"]}]))
    response = admin_client.post(url, data)
    assert response.status_code == 200 and "2 to 30 options" in response.content.decode()
    data = _change_data(study, survey="[not json")
    response = admin_client.post(url, data)
    assert response.status_code == 200 and "Enter a valid JSON" in response.content.decode()
    study.refresh_from_db()
    assert study.survey == []


def test_the_admin_study_page_lists_each_outcome_s_code_and_where_prolific_sends_it(admin_client, study):
    html = admin_client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    declined = study.outcome_codes["declined"]["code"]
    assert f"<code>{declined}</code>" in html
    assert f"https://app.prolific.com/submissions/complete?cc={declined}" in html
