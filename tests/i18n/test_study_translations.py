"""Study.translations: a study's title, description, consent text and survey per language."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client

from annotation.models import Participation, Study
from annotation.services.admission import consent
from annotation.services.session import presentation
from annotation.services.texts import study_texts
from annotation.web import worker_cookie
from tests.factories import make_classification_task
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State

SURVEY = [
    {"key": "age", "type": "number", "label": "How old are you?"},
    {"key": "native", "type": "single", "label": "Is English your first language?", "options": ["Yes", "No"]},
]
GERMAN = {
    "worker_title": "Stimmung von Filmkritiken",
    "consent_text": "Wir speichern Ihre Antworten anonym.",
    "survey": {"native": {"label": "Ist Englisch Ihre Muttersprache?", "options": ["Ja", "Nein"]}},
}


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


@pytest.fixture
def task(db):
    return make_classification_task(slug="sst2", n_test=2, n_train=10)


def _json(client, method, url, body):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


@pytest.mark.parametrize(
    ("translations", "message"),
    [
        ("text", "Translations must be an object; got str."),
        ({"fr": {"consent_text": "x"}}, "Translations: unknown language fr (known: en, de, zh-hans)."),
        ({"de": {"consent": "x"}}, "de: unknown field consent"),
        ({"de": {"consent_text": 3}}, "de.consent_text must be text; got int."),
        ({"de": {"survey": {"gender": {"label": "x"}}}}, "de.survey: unknown question gender (known: age, native)."),
        ({"de": {"survey": {"age": {"options": ["a", "b"]}}}}, "de.survey.age.options: the question has no options."),
        ({"de": {"survey": {"native": {"options": ["Ja"]}}}}, "de.survey.native.options must list 2 texts"),
        ({"de": {"survey": {"native": {"options": ["Ja", "Ja"]}}}}, "de.survey.native.options must differ."),
        ({"de": {"survey": {"native": {"hint": "x"}}}}, "de.survey.native: unknown field hint"),
    ],
)
def test_a_bad_study_translation_is_refused_with_its_place(task, translations, message):
    study = Study(slug="s", name="S", task=task, survey=SURVEY, translations=translations)
    with pytest.raises(ValidationError) as caught:
        study.full_clean()
    assert any(message in m for m in caught.value.message_dict["translations"])


def test_a_good_study_translation_is_accepted(task):
    Study(slug="s", name="S", task=task, survey=SURVEY, translations={"de": GERMAN}).full_clean()


def test_the_api_stores_study_translations_and_refuses_bad_ones_storing_nothing(admin_client, task):
    study = Study.objects.create(slug="s", name="S", task=task, survey=SURVEY)
    bad = _json(
        admin_client, "patch", f"/api/studies/{study.pk}/", {"translations": {"de": {"title": "x"}}, "name": "N"}
    )
    assert bad.status_code == 400 and "de: unknown field title" in json.dumps(bad.json(), ensure_ascii=False)
    study.refresh_from_db()
    assert (study.translations, study.name) == ({}, "S")
    good = _json(admin_client, "patch", f"/api/studies/{study.pk}/", {"translations": {"de": GERMAN}})
    assert good.status_code == 200, good.content
    assert good.json()["translations"] == {"de": GERMAN}


def test_the_admin_study_form_has_the_translations_field(admin_client, task):
    page = admin_client.get("/admin/annotation/study/add/").content.decode()
    for language in ("de", "zh-hans"):  # fields per language, not a JSON box
        for field in ("worker_title", "worker_description", "consent_text", "survey"):
            assert f'name="translations__{language}__{field}"' in page


def test_study_texts_fall_back_to_the_study_s_own_texts(task):
    study = Study.objects.create(
        slug="s", name="S", task=task, survey=SURVEY, consent_text="We store answers.", translations={"de": GERMAN}
    )
    german, english = study_texts.texts_for(study, "de"), study_texts.texts_for(study, "en")
    assert german.consent_text == GERMAN["consent_text"] and english.consent_text == "We store answers."
    assert german.survey[0]["label"] == "How old are you?"  # not translated: the study's own
    assert german.survey[1]["label"] == "Ist Englisch Ihre Muttersprache?"
    assert german.survey[1]["choices"] == [("Yes", "Ja"), ("No", "Nein")]  # the stored answer stays "Yes"
    assert presentation.title_for(study, language="de") == "Stimmung von Filmkritiken"


def test_the_task_s_worker_title_is_translated_when_the_study_has_none(task):
    task.worker_title, task.translations = "Movie reviews", {"de": {"worker_title": "Filmkritiken"}}
    task.save()
    study = Study.objects.create(slug="s", name="S", task=task)
    assert presentation.title_for(study, language="de") == "Filmkritiken"
    assert presentation.worker_task(study, language="en").name == "Movie reviews"


def test_agreeing_on_the_german_page_records_the_hash_of_the_german_text(task):
    participation = make_participation(
        task, consent_required=True, consent_text="We store answers.", language="de", translations={"de": GERMAN}
    )
    client = Client()
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    page = client.get("/work/").content.decode()
    assert GERMAN["consent_text"] in page and "We store answers." not in page
    shown = consent.text_hash(GERMAN["consent_text"])
    assert shown in page
    response = client.post("/work/consent/", {"choice": "agree", "text_hash": shown})
    assert response.status_code == 302
    participation.refresh_from_db()
    assert participation.consent_hash == shown


def test_a_stale_english_hash_on_a_german_study_is_refused(task):
    participation = make_participation(
        task, consent_required=True, consent_text="We store answers.", language="de", translations={"de": GERMAN}
    )
    client = Client()
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    client.get("/work/")
    response = client.post("/work/consent/", {"choice": "agree", "text_hash": consent.text_hash("We store answers.")})
    assert response.status_code == 409
    assert "Die Einwilligungserklärung hat sich geändert" in response.content.decode()
    participation.refresh_from_db()
    assert participation.consented_at is None


def test_the_german_survey_shows_translated_options_and_stores_the_study_s_own(task):
    participation = make_participation(
        task, language="de", survey=SURVEY, survey_placement="before_training", translations={"de": GERMAN}
    )
    client = Client()
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    page = client.get("/work/").content.decode()
    assert 'value="Yes"' in page and "Ja</label>" in page and "Ist Englisch Ihre Muttersprache?" in page
    response = client.post("/work/survey/", {"age": "30", "native": "Yes"})
    assert response.status_code == 302
    assert participation.survey_responses.get().answers["native"] == "Yes"
