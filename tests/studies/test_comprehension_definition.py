"""The comprehension check's definition: validated strictly, by the model, the admin and configure_study."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation.protocol.comprehension import validate_definition, wrong_keys
from tests.factories import StudyFactory

GOOD = [
    {"key": "what", "label": "What do you mark?", "options": ["Names", "Places", "Dates"], "correct": ["Names"]},
    {
        "key": "skip",
        "label": "Which may you skip?",
        "options": ["None", "Unclear items", "Long items"],
        "correct": ["Unclear items", "Long items"],
        "multiple": True,
    },
]


def test_a_good_definition_and_none_pass():
    validate_definition(GOOD)
    validate_definition([])
    validate_definition(None)


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"key": "x"}, "JSON list of questions"),
        ([{"key": f"q{i}", "label": "?", "options": ["a", "b"], "correct": ["a"]} for i in range(11)], "at most"),
        (["a question"], "give an object"),
        ([{**GOOD[0], "hint": "x"}], "unknown field(s) hint"),
        ([{**GOOD[0], "key": "not a key"}], "short identifier"),
        ([GOOD[0], GOOD[0]], "used twice"),
        ([{**GOOD[0], "label": " "}], "label is the question's text"),
        ([{**GOOD[0], "options": ["only one"]}], "2 to 10 options"),
        ([{**GOOD[0], "options": ["a", "a"], "correct": ["a"]}], "must differ"),
        ([{**GOOD[0], "correct": []}], "at least one"),
        ([{**GOOD[0], "correct": "Names"}], "at least one"),
        ([{**GOOD[0], "correct": ["Towns"]}], "not offered: 'Towns'"),
        ([{**GOOD[0], "correct": ["Names", "Places"]}], "exactly one correct option"),
        ([{**GOOD[1], "correct": ["None", "Unclear items", "Long items"]}], "checks nothing"),
        ([{**GOOD[0], "multiple": "yes"}], "multiple is true or false"),
    ],
)
def test_each_mistake_is_named(definition, message):
    with pytest.raises(ValidationError) as caught:
        validate_definition(definition)
    assert any(message in m for m in caught.value.messages), caught.value.messages


def test_marking_needs_exactly_the_right_options():
    assert wrong_keys(GOOD, {"what": ["Names"], "skip": ["Unclear items", "Long items"]}) == []
    assert wrong_keys(GOOD, {"what": ["Places"], "skip": ["Unclear items"]}) == ["what", "skip"]
    assert wrong_keys(GOOD, {}) == ["what", "skip"]


@pytest.mark.django_db
def test_the_model_refuses_a_bad_check_under_its_field():
    study = StudyFactory(comprehension=[{**GOOD[0], "correct": ["Towns"]}])
    with pytest.raises(ValidationError) as caught:
        study.full_clean()
    assert "comprehension" in caught.value.message_dict


@pytest.mark.django_db
def test_configure_study_sets_the_check_or_refuses_it_and_saves_nothing(tmp_path):
    study = StudyFactory()
    good, bad, broken = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "broken.json"
    good.write_text(json.dumps(GOOD))
    bad.write_text(json.dumps([{**GOOD[0], "correct": []}]))
    broken.write_text("[{")
    call_command("configure_study", study.slug, "--comprehension-file", str(good))
    study.refresh_from_db()
    assert study.comprehension == GOOD
    with pytest.raises(CommandError, match="comprehension: Question 1: correct is the list"):
        call_command("configure_study", study.slug, "--comprehension-file", str(bad))
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("configure_study", study.slug, "--comprehension-file", str(broken))
    study.refresh_from_db()
    assert study.comprehension == GOOD


@pytest.fixture
def admin_client(db):
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


def test_the_admin_form_sets_the_check_and_shows_a_bad_one_next_to_the_field(admin_client, study):
    from tests.studies.test_admin import _change_data

    url = f"/admin/annotation/study/{study.pk}/change/"
    bad = _change_data(study, comprehension=json.dumps([{**GOOD[0], "correct": ["Towns"]}]))
    response = admin_client.post(url, bad)
    assert response.status_code == 200 and "not offered: &#x27;Towns&#x27;" in response.content.decode()
    study.refresh_from_db()
    assert study.comprehension == []
    response = admin_client.post(url, _change_data(study, comprehension=json.dumps(GOOD)))
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.comprehension == GOOD


def test_the_studies_api_sets_the_check_and_refuses_a_bad_one(admin_client, study):
    url = f"/api/studies/{study.pk}/"
    response = admin_client.patch(url, {"comprehension": [{**GOOD[0], "options": ["x"]}]}, "application/json")
    assert response.status_code == 400 and "comprehension" in response.json()["fields"]
    response = admin_client.patch(url, {"comprehension": GOOD}, "application/json")
    assert response.status_code == 200 and response.json()["comprehension"] == GOOD
