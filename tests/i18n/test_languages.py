"""The study's language, the task's texts per language, and who gets which language."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Participation, Study
from annotation.web import worker_cookie
from tasks_app.admin import TaskForm
from tasks_app.texts import texts_for, validate_translations
from tests.entry_link import take_part
from tests.factories import make_classification_task, make_span_task
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State

GERMAN = {
    "description": "Entscheiden Sie, ob der Satz positiv ist.",
    "labels": {"positive": {"definition": "Der Satz ist positiv."}},
}


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


@pytest.fixture
def task(db):
    return make_classification_task(slug="sst2")


def _json(client, method, url, body):
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


# --- The study's language: validation -----------------------------------------------------------------


def test_the_api_creates_a_study_in_german_and_shows_its_language(admin_client, task):
    response = _json(
        admin_client, "post", "/api/studies/", {"slug": "de-study", "name": "D", "task": "sst2", "language": "de"}
    )
    assert response.status_code == 201, response.content
    assert response.json()["language"] == "de" and Study.objects.get(slug="de-study").language == "de"


def test_an_unknown_study_language_is_a_clear_400_and_stores_nothing(admin_client, task):
    response = _json(
        admin_client, "post", "/api/studies/", {"slug": "fr-study", "name": "F", "task": "sst2", "language": "fr"}
    )
    assert response.status_code == 400
    message = response.json()["fields"]["language"][0]
    assert "Unknown language 'fr'" in message and "'en', 'de', 'zh-hans'" in message
    assert not Study.objects.exists()


def test_an_unknown_language_in_an_update_changes_nothing(admin_client, task):
    study = Study.objects.create(slug="s", name="S", task=task, language="de")
    response = _json(admin_client, "patch", f"/api/studies/{study.pk}/", {"language": "xx", "name": "New"})
    assert response.status_code == 400 and "language" in response.json()["fields"]
    study.refresh_from_db()
    assert (study.language, study.name) == ("de", "S")


def test_the_standard_design_takes_a_language_and_refuses_an_unknown_one(admin_client, task):
    bad = _json(admin_client, "post", "/api/studies/standard-design/", {"task": "sst2", "language": "klingon"})
    assert bad.status_code == 400 and "Unknown language" in bad.json()["fields"]["language"][0]
    assert not Study.objects.exists()
    good = _json(admin_client, "post", "/api/studies/standard-design/", {"task": "sst2", "language": "de"})
    assert good.status_code == 201 and Study.objects.get().language == "de"


def test_the_model_refuses_an_unknown_language(task):
    study = Study(slug="s", name="S", task=task, language="fr")
    with pytest.raises(ValidationError) as exc:
        study.full_clean()
    assert "language" in exc.value.message_dict


def test_create_clues_studies_refuses_an_unknown_language_before_creating_anything(task):
    with pytest.raises(CommandError, match="--language: Unknown language 'xx'"):
        call_command("create_clues_studies", "--split", "1", "--language", "xx")
    assert not Study.objects.exists()


def test_the_admin_study_form_offers_the_shipped_languages(admin_client, task):
    page = admin_client.get("/admin/annotation/study/add/").content.decode()
    assert 'name="language"' in page and '<option value="de">Deutsch</option>' in page


# --- The task's texts per language: validation ---------------------------------------------------------


@pytest.mark.parametrize(
    ("translations", "message"),
    [
        ({"fr": {"description": "x"}}, "unknown language fr"),
        ("not an object", "Translations must be an object"),
        ({"de": {"descripton": "x"}}, "de: unknown field descripton"),
        ({"de": {"description": 3}}, "de.description must be text; got int"),
        ({"de": {"labels": {"neutral": {"definition": "x"}}}}, "de.labels: unknown label neutral"),
        ({"de": {"labels": {"positive": {"definition": ["x"]}}}}, "de.labels.positive.definition must be text"),
        ({"de": {"labels": {"positive": {"colour": "x"}}}}, "de.labels.positive: unknown field colour"),
        ({"de": {"labels": ["positive"]}}, "de.labels must be an object"),
        ({"de": {"question_types": {"PER": "Person"}}}, "de.question_types: unknown code PER"),
    ],
)
def test_bad_translations_are_refused_with_a_message_that_names_the_place(task, translations, message):
    task.translations = translations
    with pytest.raises(ValidationError) as exc:
        task.full_clean()
    assert any(message in m for m in exc.value.message_dict["translations"])


def test_validation_lists_every_problem_at_once():
    with pytest.raises(ValidationError) as exc:
        validate_translations({"fr": {}, "de": {"description": 1, "instructions": None}}, label_names=[])
    assert len(exc.value.message_dict["translations"]) == 3


def test_good_translations_pass(task):
    task.translations = {"de": GERMAN}
    task.full_clean()


# --- The task's texts per language: what the worker reads ----------------------------------------------


def test_the_texts_fall_back_to_the_defaults_one_by_one(task):
    task.translations = {"de": GERMAN}
    german = texts_for(task, "de")
    assert german.description == GERMAN["description"]
    assert german.instructions == task.instructions  # not translated: the task's own
    assert german.labels["positive"].definition == "Der Satz ist positiv."
    positive = task.labels.get(name="positive")
    assert german.labels["positive"].example == positive.example
    assert german.labels["negative"].definition == task.labels.get(name="negative").definition
    english = texts_for(task, "en")
    assert english.description == task.description and english.labels["positive"].definition == positive.definition


def test_question_type_names_are_translated_where_given():
    task = make_span_task(slug="ner")
    task.question_types = [{"code": "PER", "name": "Person", "question": "Who?"}, {"code": "LOC", "name": "Place"}]
    task.translations = {"de": {"question_types": {"LOC": "Ort"}}}
    assert texts_for(task, "de", labels=()).question_types == {"PER": "Person", "LOC": "Ort"}


def test_the_admin_task_form_saves_texts_per_language_and_refuses_a_bad_line(task):
    form = TaskForm(instance=task)
    assert {"de__description", "de__label0__definition", "de__label1__example"} <= set(form.fields)
    data = {
        "slug": task.slug,
        "kind": task.kind,
        "name": task.name,
        "group": task.group,
        "description": task.description,
        "instructions": "",
        "question_types": "",
        "display_order": 1,
        "de__description": "Auf Deutsch.",
        "de__label0__definition": "Der Satz ist positiv.",
    }
    saved = TaskForm(data, instance=task)
    assert saved.is_valid(), saved.errors
    saved.save()
    task.refresh_from_db()
    assert task.translations == {
        "de": {"description": "Auf Deutsch.", "labels": {"positive": {"definition": "Der Satz ist positiv."}}}
    }
    bad = TaskForm({**data, "de__question_types": "PER Person"}, instance=task)
    assert not bad.is_valid() and "write CODE | Name" in str(bad.errors)
    unknown = TaskForm({**data, "de__question_types": "PER | Person"}, instance=task)
    assert not unknown.is_valid() and "unknown code PER" in str(unknown.errors)
    task.refresh_from_db()
    assert task.translations["de"]["description"] == "Auf Deutsch."


def test_the_admin_task_page_shows_a_section_per_language(admin_client, task):
    page = admin_client.get(f"/admin/tasks_app/task/{task.pk}/change/").content.decode()
    assert "Texts in Deutsch" in page and 'name="de__label0__example"' in page


# --- Who gets which language -----------------------------------------------------------------------------


def _session(participation, browser="en"):
    client = Client(HTTP_ACCEPT_LANGUAGE=browser)
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    return client


@pytest.mark.parametrize(
    ("study_language", "browser", "expected"),
    [("de", "en", "de"), ("en", "de", "en"), ("", "de", "de"), ("", "en-GB,en;q=0.8", "en"), ("", "fr", "en")],
)
def test_the_session_api_speaks_the_study_language_or_the_browser_s(task, study_language, browser, expected):
    task.translations = {"de": GERMAN}
    task.save()
    participation = make_participation(task, state=State.CLAIMED, language=study_language)
    response = _session(participation, browser).get("/api/session/current/")
    payload = response.json()["task"]
    assert response["Content-Language"] == expected
    assert (payload["description"] == GERMAN["description"]) == (expected == "de")
    positive = next(label for label in payload["labels"] if label["name"] == "positive")
    assert (positive["definition"] == "Der Satz ist positiv.") == (expected == "de")


def test_the_worker_page_is_in_the_study_language_whatever_the_browser_says(task):
    participation = make_participation(task, state=State.ABANDONED, language="de")
    page = _session(participation, "en").get("/work/").content.decode()
    assert '<html lang="de">' in page and "Diese Sitzung ist abgelaufen" in page
    assert '<script src="/jsi18n/de/"></script>' in page


def test_joining_a_german_study_pins_the_language_for_later_pages_and_a_browser_study_clears_it(task):
    german = make_participation(task, state=State.CLAIMED, language="de").study
    client = Client()
    response = take_part(client, german.slug, {"worker_id": "anna"})
    assert response.status_code == 302 and client.cookies["django_language"].value == "de"
    assert "Seite nicht gefunden" in client.get("/work/missing/").content.decode()
    other = make_participation(make_classification_task(slug="other"), state=State.CLAIMED).study
    take_part(client, other.slug, {"worker_id": "anna"})
    assert client.cookies["django_language"].value == ""  # deleted: the browser decides again
    assert "Page not found" in client.get("/work/missing/").content.decode()


def test_staff_pages_stay_in_english_for_a_german_browser(admin_client):
    admin = admin_client.get("/admin/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Site administration" in admin
    api = admin_client.get("/api/studies/999/", HTTP_ACCEPT_LANGUAGE="de")
    assert api.status_code == 404 and api["Content-Language"] == "en"
    page = Client().get("/work/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Keine Studiensitzung" in page


def test_the_javascript_catalog_is_served_per_language_from_self():
    german = Client().get("/jsi18n/de/", HTTP_ACCEPT_LANGUAGE="en")
    assert german.status_code == 200 and german["Content-Type"].startswith("text/javascript")
    assert "django.gettext" in german.content.decode() and "max-age=3600" in german["Cache-Control"]
    assert Client().get("/jsi18n/fr/").status_code == 404
