"""The worker page while the database is away: it says so, keeps the answer and sends it again."""

import json

import pytest

from annotation.models import Participation, Response
from tests.factories import make_classification_task
from tests.worker.browser.test_worker_flow import wait_for_item
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

UNAVAILABLE = {
    "status": 503,
    "headers": {"Retry-After": "1", "Content-Type": "application/json"},
    "body": json.dumps({"error": "database_unavailable", "detail": "The service is briefly unavailable."}),
}


def answer_first_item(page):
    wait_for_item(page, 0)
    page.keyboard.press("2")  # negative
    page.keyboard.press("t")  # confidence 5
    page.keyboard.press("Enter")


def test_a_submit_met_by_503_is_kept_and_sent_again(open_as):
    task = make_classification_task(slug="away", n_test=3)
    p = make_participation(task, state=Participation.State.TEST)
    page = open_as(p)
    refused = []

    def first_refused(route):
        if not refused:
            refused.append(route.request.post_data_json)
            return route.fulfill(**UNAVAILABLE)
        return route.continue_()

    page.route("**/api/session/submit/", first_refused)
    answer_first_item(page)
    message = page.locator("#message")
    message.wait_for(state="visible")
    assert "briefly unavailable" in message.inner_text() and "Your answer is kept" in message.inner_text()
    assert page.locator("#label-2").is_checked()  # the answer stays in the form meanwhile
    assert page.locator("#submit-button").is_disabled()
    wait_for_item(page, 1)  # sent again by itself, then the next item as usual
    assert not page.locator("#message").is_visible()
    row = Response.objects.get(participation=p, position=0)
    assert (row.status, row.label, row.confidence) == ("answered", "negative", 5)
    assert refused[0]["label"] == "negative" and page.js_errors == []


def test_a_stored_submit_whose_answer_was_lost_is_shown_as_saved(open_as):
    """The first submit reached the database but the page saw a 503: the replay's 409 already_locked is success."""
    task = make_classification_task(slug="away2", n_test=3)
    p = make_participation(task, state=Participation.State.TEST)
    page = open_as(p)
    lost = []

    def answer_lost(route):
        if not lost:
            lost.append(route.fetch().status)  # the server stores it...
            return route.fulfill(**UNAVAILABLE)  # ...but the page hears 503
        return route.continue_()

    page.route("**/api/session/submit/", answer_lost)
    answer_first_item(page)
    page.locator("#next-button").wait_for(state="visible")
    assert lost == [200]
    assert "saved" in page.locator("#reveal").inner_text()
    assert not page.locator("#message").is_visible()
    row = Response.objects.get(participation=p, position=0)
    assert (row.status, row.label, row.confidence) == ("answered", "negative", 5)
    page.locator("#next-button").click()
    wait_for_item(page, 1)
    assert page.js_errors == []
