"""Issue 20 (and the page side of 18/19) in a real browser: the label reveal's layout, span selection by
click, merge and extension, progress after a reload, phones, the training feedback in words, the skip
confirmation and the "No answer" button where the answer always exists. Screenshots for the README."""

import json

import pytest

from annotation.models import AnswerSpan, Participation, Response
from tasks_app.models import Task
from tests.factories import make_classification_task
from tests.worker.browser.conftest import shot
from tests.worker.browser.test_worker_flow import drag_select, span_texts, token, wait_for_item
from tests.worker.conftest import NER_TEST, make_participation, make_task_with_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
PHONE = {"width": 390, "height": 844}
WIDTHS = [360, 390, 768, 1280, 1366, 1920]
AMARA = [("Amara Osei met Kofi in Accra .", ["Amara Osei", "Kofi"])]

# Each label name in the label cards: its lines (a Range's client rects, one per line box), its size and
# the card's, so that a name squeezed to a letter a line shows up as many lines and a narrow box.
LABEL_BOXES = """() => [...document.querySelectorAll('.label-choice')].map(card => {
    const name = card.querySelector('.label-name');
    const range = document.createRange();
    range.selectNodeContents(name);
    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
    const box = name.getBoundingClientRect();
    const tag = card.querySelector('.verdict-tag');
    return {label: card.dataset.label, lines, width: box.width, height: box.height,
            fits: name.scrollWidth <= Math.ceil(box.width) + 1, card: card.getBoundingClientRect().width,
            tag: tag ? tag.textContent : null};
})"""


def answer_training_label(page, key):
    page.keyboard.press(key)
    page.keyboard.press("w")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()


@pytest.mark.parametrize("labels", [("positive", "negative"), ("entailment", "neutral", "contradiction")])
def test_every_label_of_the_reveal_reads_on_one_line_on_phones_and_desktops(open_as, db, labels):
    task = make_classification_task(slug=f"rv{len(labels)}", labels=labels, n_test=2, n_train=10)
    p = make_participation(task, shots=10, state=State.TRAINING)
    page = open_as(p, viewport={"width": 1280, "height": 900})
    wait_for_item(page, 0)
    gold = Response.objects.get(participation=p, phase="training", position=0).example.gold_answers[0]
    wrong = next(i for i, name in enumerate(labels) if name != gold)
    answer_training_label(page, str(wrong + 1))  # a wrong answer: both tags, "correct" and "your answer"
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        boxes = page.evaluate(LABEL_BOXES)
        assert [b["label"] for b in boxes] == list(labels)
        assert sum(1 for b in boxes if b["tag"]) == 2
        for b in boxes:
            # "contradiction" at 16 px is about 100 px wide: one line, its full width, never a column of letters
            assert b["lines"] == 1 and b["fits"] and b["width"] >= 7 * len(b["label"]), (width, b)
            assert b["height"] < 40, (width, b)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), width
        if width in (390, 1280):
            shot(page, f"reveal-{len(labels)}-labels-{width}")
    assert not page.js_errors


def test_a_click_selects_a_word_and_a_second_click_removes_it(open_as, db):
    task = make_task_with_items(slug="clk", test=AMARA)
    page = open_as(make_participation(task, state=State.TEST))
    wait_for_item(page, 0)
    token(page, "Kofi").click()
    assert span_texts(page) == ["Kofi"]
    token(page, "Kofi").click()
    assert span_texts(page) == []
    assert not page.js_errors


def test_two_adjacent_words_become_two_spans_and_the_page_offers_to_merge_them(open_as, db):
    task = make_task_with_items(slug="merge", test=AMARA)
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    assert "Two selections side by side stay two answers" in page.locator("#span-hint").inner_text()
    assert "merge them" in page.locator(".span-howto:visible").inner_text()
    token(page, "Amara").click()
    token(page, "Osei").click()
    assert span_texts(page) == ["Amara", "Osei"]
    offer = page.locator("#merge-offer")
    assert offer.is_visible() and "\u201cAmara\u201d and \u201cOsei\u201d" in offer.inner_text()
    shot(page, "item-merge-offer")
    page.locator("#merge-spans").click()
    assert span_texts(page) == ["Amara Osei"] and offer.is_hidden()
    token(page, "Kofi").click()
    assert span_texts(page) == ["Amara Osei", "Kofi"] and offer.is_hidden()  # "met" lies between them
    page.keyboard.press("t")
    page.keyboard.press("Enter")
    page.locator("#completion-code").wait_for()
    row = Response.objects.get(participation=p)
    assert row.answer == ["Amara Osei", "Kofi"] and row.score == 1.0


# A CoNLL-like item long enough that, on a phone, the spans and the merge question sit below the first screen.
LONG = [("Amara Osei met Kofi in Accra . " + "The talks went on for hours and ended late . " * 30, ["Amara Osei"])]


def test_on_a_phone_the_merge_question_comes_into_view_when_it_appears(open_as, db):
    task = make_task_with_items(slug="mphone", test=LONG)
    page = open_as(make_participation(task, state=State.TEST), viewport={"width": 390, "height": 844}, touch=True)
    wait_for_item(page, 0)
    token(page, "Amara").tap()
    token(page, "Osei").tap()
    assert span_texts(page) == ["Amara", "Osei"]
    page.wait_for_function("() => new Promise(done => requestAnimationFrame(() => done(true)))")  # a frame later
    box = page.locator("#merge-offer").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844, box
    shot(page, "item-merge-offer-phone")
    assert not page.js_errors


def test_the_merge_key_and_keeping_two_adjacent_spans_apart(open_as, db):
    task = make_task_with_items(slug="mkey", test=AMARA)
    page = open_as(make_participation(task, state=State.TEST))
    wait_for_item(page, 0)
    token(page, "Amara").click()
    token(page, "Osei").click()
    page.locator("#keep-apart").click()
    assert span_texts(page) == ["Amara", "Osei"] and page.locator("#merge-offer").is_hidden()
    page.keyboard.press("m")  # nothing left to merge
    assert span_texts(page) == ["Amara", "Osei"]
    page.locator(".remove-span").nth(1).click()
    token(page, "Osei").click()  # a new pair: offered again
    assert page.locator("#merge-offer").is_visible()
    page.keyboard.press("m")
    assert span_texts(page) == ["Amara Osei"]
    assert not page.js_errors


def test_a_drag_that_reaches_an_existing_span_extends_it(open_as, db):
    task = make_task_with_items(slug="ext", test=NER_TEST)
    page = open_as(make_participation(task, state=State.TEST))
    wait_for_item(page, 0)
    token(page, "Ada").click()
    drag_select(page, "Ada", "Lovelace")
    assert span_texts(page) == ["Ada Lovelace"]
    drag_select(page, "met", "Charles")  # not touching "Ada Lovelace": a span of its own
    assert span_texts(page) == ["Ada Lovelace", "met Charles"]
    drag_select(page, "Lovelace", "met")  # reaches both: one span
    assert span_texts(page) == ["Ada Lovelace met Charles"]
    drag_select(page, "Lovelace", "met")  # inside it: refused, said why
    assert span_texts(page) == ["Ada Lovelace met Charles"] and "inside" in page.locator("#message").inner_text()
    assert not page.js_errors


def test_after_a_reload_the_progress_names_the_item_shown(open_as, db):
    task = make_task_with_items(
        slug="prog", test=NER_TEST, train=[("Grace Hopper wrote code .", ["Grace Hopper"]), ("Al met Bo .", ["Al"])]
    )
    p = make_participation(task, shots=10, state=State.TRAINING)
    page = open_as(p)
    wait_for_item(page, 0)
    assert page.locator("#progress-text").inner_text() == "Training item 1 of 2"
    token(page, "Grace").click()
    page.keyboard.press("w")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    assert page.locator("#progress-text").inner_text() == "Training item 1 of 2"
    assert page.locator("#progress-bar").get_attribute("aria-valuenow") == "50"
    page.reload()  # the locked item 1 again, with its reveal
    page.locator("#reveal .verdict").wait_for()
    wait_for_item(page, 0)
    assert page.locator("#progress-text").inner_text() == "Training item 1 of 2"  # was "item 2 of 2"
    assert page.locator("#progress-bar").get_attribute("aria-valuenow") == "50"
    page.keyboard.press("Enter")
    wait_for_item(page, 1)
    assert page.locator("#progress-text").inner_text() == "Training item 2 of 2"


def test_the_training_feedback_says_how_many_names_were_right(open_as, db):
    task = make_task_with_items(
        slug="words",
        test=NER_TEST,
        train=[("Alan Turing met Alonzo Church in Princeton .", ["Alan Turing", "Alonzo Church"])],
    )
    page = open_as(make_participation(task, shots=10, state=State.TRAINING))
    wait_for_item(page, 0)
    drag_select(page, "Alan", "Turing")
    token(page, "Princeton").click()
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    words = page.locator("#reveal .feedback-words").inner_text()
    assert words == "1 of 2 names right. 1 of your selections is not in the correct answer."
    assert page.locator("#reveal .score").count() == 0  # words only: the figure is for staff (the preview)
    assert "S1" not in page.locator("#reveal").inner_text()
    assert "Score (S1)" not in page.locator("#reveal").inner_text()
    shot(page, "training-reveal-words")


def test_a_reading_answer_in_one_of_its_two_wordings_is_partly_correct_and_the_words_agree(open_as, db):
    canal = "The canal was dug between 1794 and 1802 by hand ."
    task = make_task_with_items(
        slug="wordings",
        multiple_spans=False,
        test=[("Nobody dug here .", [])],
        train=[(canal, ["between 1794 and 1802", "1794 and 1802"])],
        question="When was the canal dug?",
    )
    page = open_as(make_participation(task, shots=10, state=State.TRAINING))
    wait_for_item(page, 0)
    drag_select(page, "1794", "1802")
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    assert page.locator("#reveal .verdict-mark").inner_text() == "\u25d0 Partly correct"
    words = page.locator("#reveal .feedback-words").inner_text()
    # Never "1 of 1 answer right" beside "partly correct": the words count the wordings, as S1 does.
    assert "1 of 1" not in words and "answer right" not in words
    assert words == (
        "The correct answer is accepted in 2 wordings (a shorter and a longer one) and full credit needs each "
        "of them: you marked 1."
    )


def test_a_label_reveal_says_whether_the_answer_matched(open_as, db):
    task = make_classification_task(slug="lw", labels=("positive", "negative"), n_test=2, n_train=10)
    p = make_participation(task, shots=10, state=State.TRAINING)
    page = open_as(p)
    wait_for_item(page, 0)
    gold = Response.objects.get(participation=p, phase="training", position=0).example.gold_answers[0]
    answer_training_label(page, "1" if gold == "positive" else "2")
    assert page.locator("#reveal .feedback-words").inner_text() == "Your answer matches the correct label."


def test_on_a_phone_the_description_and_instructions_fold_after_the_first_item(open_as, db):
    task = make_task_with_items(slug="fold", test=NER_TEST)
    task.description = "Find every person named in the text. " * 12
    task.instructions = "Select each full name. Do not select titles. " * 10
    task.save()
    p = make_participation(task, state=State.TEST)
    page = open_as(p, viewport=PHONE, touch=True)
    wait_for_item(page, 0)
    # The first item: both open, to be read once.
    assert page.locator("#task-description").get_attribute("open") is not None
    assert page.locator(".description-text").is_visible()
    shot(page, "phone-first-item")
    token(page, "London").tap()
    page.get_by_text("Agree", exact=True).tap()
    page.locator("#submit-button").tap()
    wait_for_item(page, 1)
    assert page.locator("#task-description").get_attribute("open") is None
    assert page.locator("#instructions-box").get_attribute("open") is None
    assert page.locator(".description-text").is_hidden() and page.locator(".instructions").is_hidden()
    # The item and its buttons in the first view, under the sticky progress header.
    header = page.evaluate("document.querySelector('.site-header').getBoundingClientRect().bottom")
    question = page.locator("#question").bounding_box()
    submit = page.locator("#submit-button").bounding_box()
    assert header <= question["y"] and submit["y"] + submit["height"] <= PHONE["height"], (header, question, submit)
    assert page.locator("#skip-button").bounding_box()["y"] < PHONE["height"]
    shot(page, "phone-next-item")
    # One tap opens the description again.
    page.locator("#task-description > summary").tap()
    assert page.locator(".description-text").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert not page.js_errors


def test_on_a_phone_a_reload_past_the_first_item_keeps_them_folded(open_as, db):
    task = make_task_with_items(slug="fold2", test=NER_TEST)
    p = make_participation(task, state=State.TEST)
    page = open_as(p, viewport=PHONE)
    wait_for_item(page, 0)
    page.keyboard.press("s")
    page.keyboard.press("s")
    wait_for_item(page, 1)
    page.reload()
    wait_for_item(page, 1)
    assert page.locator("#task-description").get_attribute("open") is None
    desktop = open_as(p, viewport={"width": 1280, "height": 900})
    wait_for_item(desktop, 1)
    assert desktop.locator("#task-description").get_attribute("open") is not None  # wide screens: room for all


def test_a_skip_needs_a_second_s_and_anything_else_cancels_it(open_as, db):
    task = make_task_with_items(slug="skip", test=NER_TEST)
    p = make_participation(task, state=State.TEST)
    page = open_as(p, clock=True)
    wait_for_item(page, 0)
    page.keyboard.press("s")
    message = page.locator("#message")
    assert message.inner_text() == "Press S again (or click Confirm skip) to skip this item."
    assert page.locator("#skip-button").inner_text().startswith("Confirm skip")
    shot(page, "item-skip-confirm")
    page.keyboard.press("e")  # another key: cancelled (and the key does its own thing)
    assert message.is_hidden() and page.locator("#skip-button").inner_text().startswith("Skip")
    page.keyboard.press("s")
    token(page, "London").click()  # a click elsewhere: cancelled
    assert message.is_hidden()
    page.keyboard.press("s")
    page.clock.run_for(4500)  # too late: cancelled (the page's clock moved on, no wait)
    assert message.is_hidden()
    page.keyboard.press("s")
    assert Response.objects.get(participation=p, position=0).status == "pending"
    page.keyboard.press("s")
    wait_for_item(page, 1)
    assert Response.objects.get(participation=p, position=0).status == "skipped"
    page.locator("#skip-button").click()
    assert page.locator("#skip-button").inner_text().startswith("Confirm skip")
    page.locator("#skip-button").click()
    wait_for_item(page, 2)
    assert Response.objects.get(participation=p, position=1).status == "skipped"
    assert not page.js_errors


def with_empty_answer_allowed(page, value):
    """Adds the item flag of issue 18 to the session API's answers, as the server will send it."""

    def add_flag(route):
        response = route.fetch()
        body = response.json()
        for item in (body.get("item"), (body.get("next") or {}).get("item")):
            if item:
                item["empty_answer_allowed"] = value
        route.fulfill(response=response, body=json.dumps(body))

    page.route("**/api/session/current/", add_flag)
    page.route("**/api/session/items/*/", add_flag)
    page.route("**/api/session/submit/", add_flag)


@pytest.mark.parametrize("allowed", [False, True, None])
def test_no_answer_is_offered_unless_the_item_says_the_answer_always_exists(open_as, db, allowed):
    record = "Mayor Smith spoke on Monday , then left for Rome ."
    task = make_task_with_items(
        slug="rec",
        multiple_spans=False,
        question="He flew to @placeholder",
        test=[
            (record, ["Rome"]),
            (record, ["Rome"]),
        ],
    )
    p = make_participation(task, state=State.TEST)
    page = open_as(p, path="/")
    if allowed is not None:
        with_empty_answer_allowed(page, allowed)
    page.goto(page.url.rstrip("/") + "/work/")
    wait_for_item(page, 0)
    offered = allowed is not False
    assert page.locator("#no-answer").count() == (1 if offered else 0)
    assert page.locator("dd[data-shortcut='N']").is_visible() == offered
    page.keyboard.press("n")
    page.keyboard.press("w")
    page.keyboard.press("Enter")
    if offered:
        wait_for_item(page, 1)
        assert Response.objects.get(participation=p, position=0).status == "no_answer"
        return
    assert page.locator("#message").inner_text() == "Select the answer in the text."
    shot(page, "item-record-no-empty-answer")
    token(page, "Rome").click()
    page.keyboard.press("Enter")
    wait_for_item(page, 1)
    assert page.locator("#no-answer").count() == 0  # the next item (from the submit response) too
    assert AnswerSpan.objects.get(response__participation=p).text == "Rome"


def test_a_reading_task_with_several_answers_takes_them_like_names(open_as, db):
    squad = make_task_with_items(
        slug="squadms",
        question="Which cities are named?",
        test=[("Flights from Lagos to Nairobi and Accra .", ["Lagos", "Nairobi", "Accra"])],
    )
    Task.objects.filter(pk=squad.pk).update(group=Task.Group.MRC)
    p = make_participation(squad, state=State.TEST)
    page = open_as(p, viewport=PHONE)
    wait_for_item(page, 0)
    assert page.locator("#span-hint").inner_text().startswith("Select every answer in the text")
    for city in ("Lagos", "Nairobi", "Accra"):
        token(page, city).click()
    assert span_texts(page) == ["Lagos", "Nairobi", "Accra"] and page.locator("#merge-offer").is_hidden()
    shot(page, "item-qa-several-answers-phone")
    page.get_by_text("Agree", exact=True).click()
    page.locator("#submit-button").click()
    page.locator("#completion-code").wait_for()
    assert Response.objects.get(participation=p).score == 1.0
