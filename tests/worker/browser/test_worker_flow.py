"""The worker's flow in a real browser (headless Chromium), with a screenshot of each page type."""

import re

import pytest

from annotation.models import AnswerSpan, Participation, Response
from tasks_app.models import Task
from tests.factories import make_classification_task
from tests.worker.browser.conftest import shot
from tests.worker.conftest import NER_TEST, NER_TRAIN, make_participation, make_task_with_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State


def token(page, text):
    return page.locator("#context-wrap .tok").filter(has_text=re.compile(f"^{re.escape(text)}$")).first


def drag_select(page, first, last):
    """Press inside the first word and release inside the last, like a hurried worker."""
    a = token(page, first).bounding_box()
    b = token(page, last).bounding_box()
    from_x, to_x = (0.15, 0.85) if first == last else (0.6, 0.4)
    page.mouse.move(a["x"] + a["width"] * from_x, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] * to_x, b["y"] + b["height"] / 2, steps=5)
    page.mouse.up()


def span_texts(page):
    return page.locator("#span-list .span-text").all_inner_texts()


def wait_for_item(page, position):
    # A function, not an expression: Playwright polls an expression with eval(), which the CSP forbids.
    page.wait_for_function(
        "(position) => window.workerPage && window.workerPage.item && window.workerPage.item.position === position",
        arg=position,
    )


def test_ner_select_two_spans_with_the_mouse_remove_one_and_submit(open_as, db):
    task = make_task_with_items(slug="ner", test=NER_TEST)
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    drag_select(page, "Ada", "Lovelace")
    assert span_texts(page) == ["Ada Lovelace"]
    drag_select(page, "Charles", "Babbage")
    drag_select(page, "London", "London")
    assert span_texts(page) == ["Ada Lovelace", "Charles Babbage", "London"]
    assert page.locator("#context-wrap .seg.hl").count() >= 5
    shot(page, "item-ner-spans")
    page.locator("#span-list .remove-span").nth(2).click()
    assert span_texts(page) == ["Ada Lovelace", "Charles Babbage"]
    page.get_by_text("Agree", exact=True).click()
    page.locator("#submit-button").click()
    wait_for_item(page, 1)
    row = Response.objects.get(participation=p, position=0)
    assert (row.status, row.answer, row.confidence, row.score) == (
        "answered",
        ["Ada Lovelace", "Charles Babbage"],
        4,
        1.0,
    )
    assert [(s.start, s.end) for s in row.spans.all()] == [(0, 12), (17, 32)]
    assert page.locator("#progress-text").inner_text() == "Item 2 of 3"
    assert not page.js_errors


def test_nested_spans_render_as_layers(open_as, db):
    task = make_task_with_items(slug="nest", test=[("She moved to New York City last year .", ["New York City"])])
    task.overlapping_spans = True
    task.save()
    page = open_as(make_participation(task, state=State.TEST))
    wait_for_item(page, 0)
    drag_select(page, "New", "City")
    drag_select(page, "New", "York")
    assert span_texts(page) == ["New York", "New York City"]
    assert "d2" in token(page, "York").get_attribute("class")
    assert "d1" in token(page, "City").get_attribute("class")
    shot(page, "item-nested-spans")


def test_an_overlapping_selection_is_refused_where_the_task_takes_separate_spans(open_as, db):
    task = make_task_with_items(slug="flat", test=[("She moved to New York City last year .", ["New York City"])])
    page = open_as(make_participation(task, state=State.TEST))
    wait_for_item(page, 0)
    drag_select(page, "New", "City")
    drag_select(page, "New", "York")
    assert span_texts(page) == ["New York City"]
    assert "overlaps" in page.locator("#message").inner_text()
    assert not page.js_errors


def test_squad_no_answer_and_one_span_only(open_as, db):
    task = make_task_with_items(
        slug="squad",
        multiple_spans=False,
        question="When was the tower finished?",
        test=[("The Eiffel Tower is in Paris .", []), ("Rome was founded long ago .", ["Rome"])],
    )
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    drag_select(page, "Eiffel", "Tower")
    drag_select(page, "Paris", "Paris")
    assert span_texts(page) == ["Paris"]  # one span: a new selection replaces the old one
    page.locator("#no-answer").click()
    assert page.locator("#no-answer").get_attribute("aria-pressed") == "true"
    assert span_texts(page) == []
    shot(page, "item-squad-no-answer")
    page.keyboard.press("e")  # confidence 3
    page.keyboard.press("Enter")
    wait_for_item(page, 1)
    row = Response.objects.get(participation=p, position=0)
    assert (row.status, row.answer, row.confidence, row.score) == ("no_answer", [], 3, 1.0)
    assert not AnswerSpan.objects.filter(response=row).exists()


def test_a_task_whose_gold_is_never_empty_offers_no_no_answer_button(open_as, db):
    task = make_task_with_items(
        slug="record-like",
        multiple_spans=False,
        question="Who fills @placeholder?",
        test=[("Ada Lovelace met Charles Babbage in London .", ["Ada Lovelace"])],
    )
    Task.objects.filter(pk=task.pk).update(empty_answer_allowed=False)
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    assert page.locator("#no-answer").count() == 0
    page.keyboard.press("n")  # the shortcut does nothing either
    assert page.locator(".no-answer-item").count() == 0
    assert page.locator("#skip-button").is_visible()  # a skip is still there


def test_keyboard_only_classification_with_the_help_pop_up(open_as, db):
    task = make_classification_task(slug="kbd", labels=("positive", "negative"), n_test=3)
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    page.keyboard.press("2")
    page.keyboard.press("h")
    dialog = page.locator("#help-dialog")
    assert dialog.is_visible()
    assert page.locator("#help-title").inner_text() == "negative"
    assert page.locator("#help-definition").inner_text() == "The negative label."
    assert page.locator("#help-example").inner_text() == "A negative example."
    shot(page, "item-classification-help")
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    page.keyboard.press("Enter")  # no confidence yet: refused on the page, nothing sent
    assert "confident" in page.locator("#message").inner_text()
    page.keyboard.press("t")
    page.keyboard.press("Enter")
    wait_for_item(page, 1)
    row = Response.objects.get(participation=p, position=0)
    assert (row.status, row.label, row.confidence) == ("answered", "negative", 5)
    page.keyboard.press("s")
    page.keyboard.press("s")  # a skip is confirmed by a second S
    wait_for_item(page, 2)
    assert Response.objects.get(participation=p, position=1).status == "skipped"
    shot(page, "item-classification")


def test_training_reveal_then_the_answer_cannot_be_changed(open_as, db):
    task = make_task_with_items(slug="trainee", test=NER_TEST, train=NER_TRAIN)
    p = make_participation(task, shots=10, state=State.CLAIMED)
    page = open_as(p)
    shot(page, "start")
    page.locator("#start-button").click()
    wait_for_item(page, 0)
    assert page.locator("#skip-button").is_hidden()
    drag_select(page, "Grace", "Grace")
    page.keyboard.press("r")
    page.locator("#submit-button").click()
    reveal = page.locator("#reveal")
    reveal.wait_for(state="visible")
    assert "Incorrect" in reveal.inner_text() or "Partly" in reveal.inner_text()
    assert "Grace Hopper" in reveal.locator(".reveal-col").nth(1).inner_text()
    assert page.locator("#submit-button").is_hidden() and page.locator("#no-answer").is_disabled()
    assert page.locator("#reveal .seg.hl.gold").count() >= 1 and page.locator("#reveal .seg.hl.mine").count() >= 1
    shot(page, "training-reveal")
    row = Response.objects.get(participation=p, phase="training", position=0)
    locked = (row.status, row.answer, row.submitted_at)
    assert locked[:2] == ("answered", ["Grace"])

    # A second submit (a replay of the same request from the page) is refused with the stored answer.
    replay = page.evaluate(
        """async (item) => {
            const token = document.cookie.match(/csrftoken=([^;]+)/)[1];
            const r = await fetch('/api/session/submit/', {method: 'POST', headers: {'Content-Type': 'application/json',
              'X-CSRFToken': token}, body: JSON.stringify({item, no_answer: true, confidence: 1})});
            return [r.status, await r.json()];
        }""",
        row.pk,
    )
    assert replay[0] == 409 and replay[1]["answer"]["answer"] == ["Grace"]

    # Reload shows the locked state with the reveal.
    page.reload()
    page.locator("#reveal .verdict").wait_for()
    assert page.locator("#submit-button").is_hidden()
    assert span_texts(page) == ["Grace"] and page.locator(".remove-span").count() == 0

    # Next, then Back: the locked item again, still not editable.
    page.keyboard.press("Enter")
    wait_for_item(page, 1)
    assert page.locator("#reveal").is_hidden()
    page.go_back()
    page.locator("#reveal .verdict").wait_for()
    page.wait_for_function("() => window.workerPage.item.position === 0")
    assert page.locator("#submit-button").is_hidden()
    drag_select(page, "Hopper", "Hopper")
    assert span_texts(page) == ["Grace"]
    row.refresh_from_db()
    assert (row.status, row.answer, row.submitted_at) == locked
    assert not page.js_errors


def test_finishing_training_leads_to_the_test_step_and_finishing_the_test_to_the_code(open_as, db):
    task = make_classification_task(slug="fin", n_test=2, n_train=10)
    p = make_participation(task, shots=10, state=State.TRAINING)
    page = open_as(p)
    for position in range(10):
        wait_for_item(page, position)
        page.keyboard.press("1")
        page.keyboard.press("w")
        page.keyboard.press("Enter")
        page.locator("#reveal .verdict").wait_for()
        page.keyboard.press("Enter")
    page.locator("#phase-banner").wait_for()
    wait_for_item(page, 0)
    assert page.locator("#phase-banner").inner_text().startswith("Training is over")
    assert page.locator("#skip-button").is_visible()
    for position in range(2):
        wait_for_item(page, position)
        page.keyboard.press("s")
        page.keyboard.press("s")  # a skip is confirmed by a second S
    page.locator("#completion-code").wait_for()
    assert page.locator("#completion-code").inner_text() == "C0DE1234"
    shot(page, "finish")


def test_an_emoji_context_stores_the_offsets_python_expects(open_as, db):
    context = "Fans 😀👍🏽 cheered 👨‍👩‍👧 for Marie Curie and 🇫🇷 Paris ❤️ today ."
    task = make_task_with_items(slug="emoji", test=[(context, ["Marie Curie", "Paris"])])
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    drag_select(page, "Marie", "Curie")
    # keyboard: move the word cursor to "Paris" and add it
    tokens = page.locator("#context-wrap .tok").all_inner_texts()
    for _ in range(tokens.index("Paris") + 1):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("a")
    assert span_texts(page) == ["Marie Curie", "Paris"]
    shot(page, "item-emoji")
    page.keyboard.press("q")
    page.keyboard.press("Enter")
    page.locator("#completion-code").wait_for()
    row = Response.objects.get(participation=p)
    spans = [(s.start, s.end, s.text) for s in row.spans.all()]
    assert spans == [
        (context.index("Marie Curie"), context.index("Marie Curie") + 11, "Marie Curie"),
        (context.index("Paris"), context.index("Paris") + 5, "Paris"),
    ]
    assert all(context[s:e] == t for s, e, t in spans) and row.score == 1.0


def test_sentence_pairs_and_record_highlights_render_as_stored(open_as, db):
    mnli = make_task_with_items(
        slug="pairs",
        kind=Task.Kind.CLASSIFICATION,
        labels=("entailment", "neutral", "contradiction"),
        test=[(["A man is sleeping on a bench.", "A person rests."], ["entailment"])],
        question="Does sentence 1 entail sentence 2?",
    )
    page = open_as(make_participation(mnli, state=State.TEST))
    wait_for_item(page, 0)
    assert page.locator(".sentence-title").all_inner_texts() == ["SENTENCE 1", "SENTENCE 2"] or [
        t.lower() for t in page.locator(".sentence-title").all_inner_texts()
    ] == ["sentence 1", "sentence 2"]
    shot(page, "item-mnli")

    record_ctx = (
        "(CNN) The  mayor   spoke.\tThen left.\n@highlight\nMayor Smith spoke on Monday\n@highlight\nHe left for Rome"
    )
    record = make_task_with_items(
        slug="rec", multiple_spans=False, question="He flew to @placeholder", test=[(record_ctx, ["Rome"])]
    )
    p = make_participation(record, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    assert page.locator("#question mark.placeholder").inner_text() == "@placeholder"
    assert page.locator("#question").inner_text() == "He flew to @placeholder"
    bullets = page.locator(".ctx-highlights li").all_inner_texts()
    assert bullets == ["Mayor Smith spoke on Monday", "He left for Rome"]
    assert page.locator(".ctx-body").inner_text() == "(CNN) The  mayor   spoke.\tThen left."
    drag_select(page, "Rome", "Rome")
    page.keyboard.press("w")
    shot(page, "item-record")
    page.keyboard.press("Enter")
    page.locator("#completion-code").wait_for()
    stored = AnswerSpan.objects.get(response__participation=p)
    assert (stored.start, stored.text) == (record_ctx.index("Rome"), "Rome")


def test_the_item_page_is_usable_on_a_phone(open_as, db):
    task = make_task_with_items(slug="phone", test=NER_TEST)
    page = open_as(make_participation(task, state=State.TEST), viewport={"width": 390, "height": 844})
    wait_for_item(page, 0)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    drag_select(page, "Ada", "Lovelace")
    assert span_texts(page) == ["Ada Lovelace"]
    shot(page, "item-phone")


def test_other_page_types(open_as, db):
    task = make_classification_task(slug="pages", n_test=2)
    shot(open_as(make_participation(task, shots=10, state=State.EXCLUDED)), "excluded")
    page = open_as(make_participation(task, state=State.ABANDONED))
    shot(page, "abandoned")


def test_a_partial_mouse_selection_snaps_to_whole_words_without_the_possessive(open_as, db):
    context = "We saw  Babbage's engine in South\u00a0Kensington today ."
    task = make_task_with_items(slug="snap", multiple_spans=False, test=[(context, ["Babbage"])])
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    box = token(page, "Babbage").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] / 2, steps=3)
    page.mouse.up()
    assert span_texts(page) == ["Babbage"]
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    page.locator("#completion-code").wait_for()
    stored = AnswerSpan.objects.get(response__participation=p)
    assert (stored.start, stored.end, stored.text) == (8, 15, "Babbage")


def test_python_grapheme_boundaries_match_the_browsers_segmenter(browser):
    from annotation.protocol import offsets

    samples = [
        "Jose\u0301 e\u0308\u0301 ❤\ufe0f 👍🏽 👨\u200d👩\u200d👧 🏳\ufe0f\u200d🌈 🇫🇷🇩🇪🇮 a\r\nb 한국 \u1100\u1161\u11a8",
        "क्षत्रिय स्त्री ত্র ক্ষ 東京 café\u00a0au\tlait  😀x",
    ]
    page = browser.new_page()
    try:
        for text in samples:
            units = page.evaluate(
                "t => Array.from(new Intl.Segmenter('en', {granularity: 'grapheme'}).segment(t)).map(s => s.index)",
                text,
            )
            browser_bounds = {offsets.utf16_to_index(text, u) for u in units} | {len(text)}
            python_bounds = {i for i in range(len(text) + 1) if offsets.is_grapheme_boundary(text, i)}
            assert python_bounds == browser_bounds, sorted(python_bounds ^ browser_bounds)
    finally:
        page.close()


def test_a_wrong_training_label_is_shown_red_beside_the_gold_in_green(open_as, db):
    task = make_classification_task(slug="wrong", labels=("positive", "negative"), n_test=2, n_train=10)
    p = make_participation(task, shots=10, state=State.TRAINING)
    page = open_as(p)
    wait_for_item(page, 0)
    gold = Response.objects.get(participation=p, phase="training", position=0).example.gold_answers[0]
    wrong_key = "2" if gold == "positive" else "1"
    page.keyboard.press(wrong_key)
    page.keyboard.press("w")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    wrong = page.locator(".label-choice.is-wrong")
    right = page.locator(".label-choice.is-gold")
    assert right.get_attribute("data-label") == gold and wrong.count() == 1
    # the worker's (checked) choice must not keep the blue "chosen" look once the reveal marks it wrong
    assert wrong.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(253, 236, 234)"
    assert right.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(231, 246, 238)"
    assert wrong.locator(".verdict-tag").inner_text() == "✗ your answer"
    assert right.locator(".verdict-tag").inner_text() == "✓ correct"
    shot(page, "training-reveal-label-wrong")
    page.reload()  # the locked state again, tags not doubled
    page.locator("#reveal .verdict").wait_for()
    assert page.locator(".verdict-tag").count() == 2
    assert not page.js_errors


def test_on_a_touch_screen_a_selection_is_adjusted_then_added_with_the_button(open_as, db):
    task = make_task_with_items(slug="touch", test=NER_TEST)
    p = make_participation(task, state=State.TEST)
    page = open_as(p, viewport={"width": 390, "height": 640}, touch=True)
    wait_for_item(page, 0)
    assert "press and hold a word" in page.locator(".span-hint").inner_text()
    token(page, "Ada").tap()  # a tap selects the word
    assert span_texts(page) == ["Ada"]
    # What a long press then dragging the handles leaves: a selection from inside "Ada" to inside "Lovelace".
    page.evaluate("""() => {
        const toks = [...document.querySelectorAll('#context-wrap .tok')];
        const a = toks.find(t => t.textContent === 'Ada').firstChild;
        const b = toks.find(t => t.textContent === 'Lovelace').firstChild;
        getSelection().setBaseAndExtent(a, 1, b, 4);
    }""")
    page.wait_for_function("() => window.workerPage.pending !== null")
    assert span_texts(page) == ["Ada"]  # not added until the worker says so
    assert "kbd-sel" in token(page, "Lovelace").get_attribute("class")
    page.locator("#add-span").tap()
    assert span_texts(page) == ["Ada Lovelace"]  # the selection reaching over "Ada" extends it
    page.get_by_text("Agree", exact=True).tap()
    page.locator("#submit-button").tap()
    wait_for_item(page, 1)
    row = Response.objects.get(participation=p, position=0)
    assert [(s.start, s.end, s.text) for s in row.spans.all()] == [(0, 12, "Ada Lovelace")]
    # The next item on a phone: scrolled to the question, not back to the description at the top.
    assert page.evaluate("window.scrollY") > 0
    top = page.evaluate("document.getElementById('question').getBoundingClientRect().top")
    header = page.evaluate("document.querySelector('.site-header').getBoundingClientRect().bottom")
    assert 0 < header <= top < 640  # the progress bar (sticky header) stays in sight, above the question
    assert page.locator("#progress-text").is_visible() and page.locator("#progress-text").inner_text() == "Item 2 of 3"
    shot(page, "item-phone-touch")
    assert not page.js_errors


def test_the_no_session_page(open_as, db):
    page = open_as(None)
    assert "No study session" in page.locator("h1").inner_text()
    shot(page, "no-session")


def test_a_click_on_a_word_selects_it_and_puts_the_word_cursor_there_for_the_keyboard(open_as, db):
    task = make_task_with_items(slug="click", test=NER_TEST)
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    wait_for_item(page, 0)
    token(page, "Charles").click()
    assert "kbd-cursor" in token(page, "Charles").get_attribute("class")
    assert span_texts(page) == ["Charles"]  # issue 20: a click selects the word
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("a")
    assert span_texts(page) == ["Charles Babbage"]  # the keyboard selection extends the clicked word
    token(page, "Ada").dblclick()  # a double click: the word once, not added then removed
    assert span_texts(page) == ["Ada", "Charles Babbage"]
    assert page.locator("#message").is_hidden()
    assert not page.js_errors
