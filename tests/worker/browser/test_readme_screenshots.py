"""The README's and docs' worker-page pictures, taken on the bundled demo tasks (CoNLL-2003, MNLI).

The shots land in test-artifacts/screenshots/readme-*.png; the chosen ones are copied to docs/img/ by
hand. The test also checks what the pictures show, so a broken page does not make a pretty picture.
"""

import pytest

from annotation.models import Participation, Response
from tasks_app.demo import import_demo_data
from tasks_app.models import Task
from tests.worker.browser.conftest import shot
from tests.worker.browser.test_worker_flow import span_texts, token, wait_for_item
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
PHONE = {"width": 390, "height": 844}


def current_gold(p, position):
    return Response.objects.get(participation=p, phase="training", position=position).example.gold_answers


def test_demo_conll_training_merge_offer_reveal_and_phone(open_as, db):
    import_demo_data()
    task = Task.objects.get(slug="conll03")
    p = make_participation(task, shots=10, state=State.TRAINING)
    page = open_as(p, viewport={"width": 1280, "height": 860})
    wait_for_item(page, 0)
    gold = [a for a in current_gold(p, 0) if a]
    name = next((a for a in gold if " " in a), gold[0] if gold else None)
    if name:
        for word in name.split():  # word by word, as a hurried worker does: adjacent spans
            token(page, word).click()
        if " " in name:
            assert page.locator("#merge-offer").is_visible()
    shot(page, "readme-worker", always=True)
    if name and " " in name:
        page.locator("#merge-spans").click()
        assert name in span_texts(page)
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    assert "right" in page.locator("#reveal .feedback-words").inner_text() or not gold
    shot(page, "readme-training-reveal", always=True)
    page.keyboard.press("Enter")
    wait_for_item(page, 1)

    phone = open_as(p, viewport=PHONE, touch=True)
    wait_for_item(phone, 1)
    assert phone.locator("#task-description").get_attribute("open") is None
    submit = phone.locator("#submit-button").bounding_box()
    assert submit["y"] + submit["height"] <= PHONE["height"]
    shot(phone, "readme-phone", full_page=False, always=True)  # the first view only, as a phone shows it
    assert not page.js_errors and not phone.js_errors


def test_demo_mnli_reveal_on_a_desktop_and_a_phone(open_as, db):
    import_demo_data()
    task = Task.objects.get(slug="mnli")
    labels = list(task.labels.values_list("name", flat=True))
    p = make_participation(task, shots=10, state=State.TRAINING)
    page = open_as(p, viewport={"width": 1366, "height": 800})
    wait_for_item(page, 0)
    gold = current_gold(p, 0)[0]
    wrong = next(i for i, label in enumerate(labels) if label != gold)
    page.keyboard.press(str(wrong + 1))
    page.keyboard.press("e")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    shot(page, "readme-mnli-reveal", always=True)
    page.set_viewport_size(PHONE)
    page.locator(".labels").scroll_into_view_if_needed()
    shot(page, "readme-mnli-reveal-phone", full_page=False, always=True)
    assert not page.js_errors
