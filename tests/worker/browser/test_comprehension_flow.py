"""The comprehension check in a real browser: a failed first attempt marks the wrong question, the second
attempt passes and the worker starts training."""

import pytest

from annotation.models import ComprehensionAttempt, Participation
from tests.factories import make_classification_task
from tests.worker.browser.conftest import shot
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
CHECK = [
    {"key": "what", "label": "What do you choose?", "options": ["A label", "A colour"], "correct": ["A label"]},
    {
        "key": "skip",
        "label": "Which items may you skip?",
        "options": ["Unclear ones", "Long ones", "None"],
        "correct": ["Unclear ones"],
        "multiple": True,
    },
]


def test_failing_the_check_once_then_passing_it_leads_to_training(open_as, db):
    task = make_classification_task(slug="compr", n_test=2, n_train=10)
    p = make_participation(task, shots=10, state=State.CLAIMED, comprehension=CHECK)
    page = open_as(p)
    page.locator("#comprehension-form").wait_for()
    assert page.locator("#comprehension-instructions").is_visible()
    page.get_by_label("A label").check()
    page.get_by_label("Long ones").check()  # wrong: only unclear items may be skipped
    page.locator("#comprehension-submit").click()
    page.locator("#comprehension-retry").wait_for()
    assert page.locator("#wrong-skip").is_visible() and page.locator("#wrong-what").count() == 0
    assert "last attempt" in page.locator("#comprehension-retry").inner_text()
    shot(page, "comprehension-retry")
    page.get_by_label("A label").check()
    page.get_by_label("Unclear ones").check()
    page.locator("#comprehension-submit").click()
    page.locator("#start-button").wait_for()
    page.locator("#start-button").click()
    page.wait_for_function("() => window.workerPage && window.workerPage.item")
    p.refresh_from_db()
    assert p.state == State.TRAINING
    attempts = ComprehensionAttempt.objects.filter(participation=p).order_by("number")
    assert [(a.number, a.passed, a.wrong) for a in attempts] == [(1, False, ["skip"]), (2, True, [])]
