"""Every worker page in every shipped language: no English text node left on a German or Chinese page.

The pages are tests/i18n/pages.py's list; a translated page fails on any visible text node it shares with
the English rendering of the same page, other than names, numbers and codes (``pages.untranslated``).
"""

import json

import pytest
from django.conf import settings
from django.test import Client

from annotation.models import Participation, Study
from annotation.web import worker_cookie
from tests.i18n import pages
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State


def test_the_shipped_languages_are_english_german_and_simplified_chinese():
    assert [code for code, _ in settings.LANGUAGES] == list(pages.SHIPPED)


@pytest.mark.parametrize("language", pages.TRANSLATED)
@pytest.mark.parametrize("name", sorted(pages.PAGES))
def test_the_worker_page_has_no_untranslated_text(name, language):
    if name in pages.PENDING:
        pytest.xfail("its templates are translated in the second pass (tests/i18n/pages.py, PENDING)")
    page = pages.PAGES[name]
    english, translated = page("en"), page(language)
    assert english.templates, "the page rendered no template"
    assert visible_lang(english) == "en" and visible_lang(translated) == language
    assert pages.untranslated(english, translated) == []
    assert translated.templates == english.templates


@pytest.mark.parametrize("name", sorted(pages.PENDING))
def test_a_pending_page_is_still_untranslated_until_the_second_pass(name):
    """Strict the other way round: once a pending page is translated, take it out of PENDING."""
    page = pages.PAGES[name]
    assert pages.untranslated(page("en"), page("de")), f"{name} is translated now: remove it from pages.PENDING"


def test_every_worker_template_is_rendered_by_some_page():
    rendered: set[str] = set()
    for page in pages.PAGES.values():
        rendered |= page("en").templates
    assert sorted(set(pages.WORKER_TEMPLATES) - rendered) == []


def visible_lang(rendered: pages.Rendered) -> str | None:
    return pages.visible_text(rendered.html)[1]


# --- The session API's messages to the worker ----------------------------------------------------------


def _session_client(participation: Participation, browser: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=browser)
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    return client


def _api_details(language: str) -> dict[str, str]:
    """The ``detail`` of each worker-facing refusal of the session API, for a study in ``language``."""
    from tests.factories import make_classification_task

    task = make_classification_task(slug=f"api{language}", n_test=2, n_train=10)
    participation = make_participation(task, state=State.TEST, language=language)
    other = "de" if language == "en" else "en"
    client = _session_client(participation, other)
    details = {}
    details["no_session"] = Client(HTTP_ACCEPT_LANGUAGE=language).get("/api/session/current/").json()["detail"]
    details["not_your_item"] = client.get("/api/session/items/999999/").json()["detail"]
    client.get("/api/session/current/")
    token = client.cookies["csrftoken"].value
    post = lambda path, body: client.post(  # noqa: E731
        path, data=json.dumps(body), content_type="application/json", HTTP_X_CSRFTOKEN=token
    ).json()["detail"]
    details["invalid_payload"] = post("/api/session/submit/", [1])
    details["invalid_item"] = post("/api/session/submit/", {"item": "x"})
    Study.objects.filter(pk=participation.study_id).update(status=Study.Status.CLOSED)
    details["study_closed"] = post("/api/session/submit/", {"item": 1, "label": "positive", "confidence": 3})
    return details


@pytest.mark.parametrize("language", pages.TRANSLATED)
def test_the_session_api_tells_the_worker_in_the_study_language(language):
    english, translated = _api_details("en"), _api_details(language)
    assert english.keys() == translated.keys()
    same = {code: translated[code] for code in translated if translated[code] == english[code]}
    assert same == {}
    assert translated["not_your_item"] == NOT_YOUR_ITEM[language]
    assert english["not_your_item"] == "This item is not assigned to you."


NOT_YOUR_ITEM = {"de": "Diese Aufgabe ist Ihnen nicht zugewiesen.", "zh-hans": "这道题没有分配给您。"}
