"""A worker page in German in real Chromium: a study set to German, and one that follows the browser."""

import pytest

from annotation.models import Participation, Study
from annotation.web import worker_cookie
from tests.factories import make_classification_task
from tests.worker.browser.conftest import csp_violations, shot, watch_csp
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State


@pytest.fixture
def open_in(browser, live_server):
    """open_in(path, locale, participation=None) -> a page of a browser whose language is ``locale``."""
    contexts, pages = [], []

    def _open(path, *, locale, participation=None):
        context = browser.new_context(locale=locale)  # Chromium sends Accept-Language from it
        if participation is not None:
            cookie = worker_cookie.signed_value(participation.pk)
            context.add_cookies([{"name": worker_cookie.COOKIE, "value": cookie, "url": live_server.url}])
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.js_errors = []
        page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
        watch_csp(page)
        pages.append(page)
        page.goto(live_server.url + path)
        return page

    yield _open
    violations = [v for page in pages for v in csp_violations(page)]
    for context in contexts:
        context.close()
    assert violations == [], "Content-Security-Policy violations"


def _is_german(page) -> None:
    assert page.locator("html").get_attribute("lang") == "de"
    # Django's JavaScript catalog came in German from /jsi18n/de/ (a script of 'self', no inline code).
    assert page.evaluate("typeof window.gettext === 'function' && typeof window.interpolate === 'function'")
    assert page.evaluate("window.get_format('DECIMAL_SEPARATOR')") == ","
    assert page.js_errors == []


def test_a_study_set_to_german_shows_its_pages_in_german_to_an_english_browser(open_in):
    task = make_classification_task(slug="sst-de")
    gone = make_participation(task, state=State.ABANDONED, language="de")
    page = open_in("/work/", locale="en-US", participation=gone)
    assert page.locator("h1").inner_text() == "Diese Sitzung ist abgelaufen"
    assert "wurde Ihr Platz in" in page.locator("main").inner_text()
    _is_german(page)
    shot(page, "i18n-german-study-abandoned")

    Study.objects.filter(pk=gone.study_id).update(status=Study.Status.PAUSED)
    entry = open_in(f"/join/{gone.study.slug}/?worker_id=newcomer", locale="en-US")
    assert entry.locator("h1").inner_text() == "Diese Studie ist pausiert"
    _is_german(entry)


def test_a_study_that_follows_the_browser_is_german_for_a_german_browser_and_english_otherwise(open_in):
    task = make_classification_task(slug="sst-any")
    task.translations = {"de": {"description": "Entscheiden Sie, ob der Satz positiv oder negativ ist."}}
    task.save()
    study = make_participation(task, state=State.TEST, language="").study
    preview = f"/join/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"

    german = open_in(preview, locale="de-DE")
    assert german.locator("h2").inner_text() == "Was Sie tun werden"
    assert "Entscheiden Sie, ob der Satz" in german.locator(".task-description").inner_text()
    _is_german(german)
    shot(german, "i18n-browser-german-preview")

    english = open_in(preview, locale="en-US")
    assert english.locator("html").get_attribute("lang") == "en"
    assert english.locator("h2").inner_text() == "What you will do"
    assert english.evaluate("window.get_format('DECIMAL_SEPARATOR')") == "."


GERMAN_TASK = {
    "worker_title": "Stimmung von Sätzen",
    "description": "Entscheiden Sie, ob der Satz positiv oder negativ ist.",
    "instructions": "Wählen Sie die passende Kategorie.",
}


def test_the_start_and_item_pages_of_a_german_study_and_their_script_messages_are_german(open_in):
    from tests.worker.browser.test_worker_flow import wait_for_item

    task = make_classification_task(slug="sst-start-de", n_test=3, n_train=10)
    task.worker_title, task.translations = "Sentence sentiment", {"de": GERMAN_TASK}
    task.save()
    claimed = make_participation(task, state=State.CLAIMED, language="de")
    page = open_in("/work/", locale="en-US", participation=claimed)
    assert page.locator("h1").inner_text() == "Stimmung von Sätzen"
    assert page.locator("#study-facts h2").inner_text() == "Auf einen Blick"
    assert "Entscheiden Sie, ob der Satz" in page.locator(".task-description").inner_text()
    assert "Wählen Sie die passende Kategorie." in page.locator(".task-description").inner_text()
    _is_german(page)
    shot(page, "i18n-german-start")

    page.locator("#start-button").click()  # worker.js starts the test step: the item page, in German
    wait_for_item(page, 0)
    assert page.locator("#submit-button").inner_text().startswith("Senden")
    assert page.locator("#progress-text").inner_text() == "Aufgabe 1 von 3"
    assert page.locator(".instructions").inner_text() == "Wählen Sie die passende Kategorie."
    page.keyboard.press("s")  # the skip asks for a second press: a message of item.js, from the German catalog
    message = page.locator("#message")
    message.wait_for()
    assert message.inner_text().startswith("Drücken Sie erneut S")
    assert page.locator("#skip-button .btn-text").inner_text() == "Überspringen bestätigen"
    page.keyboard.press("Enter")  # no label chosen yet: the refusal is German too
    assert page.locator("#message").inner_text().startswith("Wählen Sie zuerst eine Kategorie")
    _is_german(page)
    shot(page, "i18n-german-item")
