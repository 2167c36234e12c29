"""Issue 32 in a real browser: an item's own options (CHID), marked spans (CLUEWSC) and a searchable list
of many labels (IFLYTEK's 119), at a desktop's and a phone's width, with nothing overflowing."""

import pytest

from annotation.models import Participation, Response
from tasks_app.models import Label
from tests.worker.browser.conftest import shot
from tests.worker.browser.test_worker_flow import wait_for_item
from tests.worker.fewclue import fewclue_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
WIDTHS = [1366, 390]
FITS = "() => document.documentElement.scrollWidth <= window.innerWidth"
# Every element that sticks out of the viewport on the right (the MNLI reveal test measures the page).
OVERFLOWING = """() => [...document.querySelectorAll('#work *')]
    .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 1)
    .map(e => e.tagName + '.' + e.className)"""


def first_training_example(p):
    return Response.objects.get(participation=p, phase="training", position=0).example


def open_item(open_as, p, width):
    page = open_as(p, viewport={"width": width, "height": 844 if width < 800 else 900})
    wait_for_item(page, 0)
    return page


def assert_fits(page, width):
    assert page.evaluate(FITS), width
    assert page.evaluate(OVERFLOWING) == [], width


@pytest.mark.parametrize("width", WIDTHS)
def test_a_chid_item_offers_its_own_idioms_and_the_reveal_names_the_right_one(open_as, db, width):
    p = fewclue_participation("chid", state=State.TRAINING)
    page = open_item(open_as, p, width)
    example = first_training_example(p)
    assert page.locator(".label-choice .label-name").all_inner_texts() == example.choices
    assert page.locator(".label-choice .help-link").count() == 0  # an idiom has no task-wide help
    blank = page.locator("#context-wrap mark.ctx-mark[data-role=blank]")
    # The blank shows as a line, never the data's "#idiom#" token, in the text and in the question.
    assert blank.locator(".mark-text").inner_text() == "\uff3f" * 4 and blank.inner_text().startswith("blank to fill")
    assert "#idiom#" not in page.locator("#work").inner_text()
    assert "\uff3f" * 4 in page.locator("#question").inner_text()
    # Its idioms are options, not labels ("类别" in Chinese), and have no help key.
    legend = page.content()  # the keyboard legend (folded on a phone)
    assert "choose an option" in legend and "choose a label" not in legend and "help for the chosen" not in legend
    gold = int(example.gold_answers[0])
    wrong = (gold + 1) % len(example.choices)
    if width < 800:
        page.locator(f".label-choice[data-label='{wrong}'] label").click()
    else:
        page.keyboard.press(str(wrong + 1))
    page.keyboard.press("w")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    assert page.locator("#reveal strong.gold").inner_text() == example.choices[gold]
    assert page.locator("#reveal strong.yours").inner_text() == example.choices[wrong]
    assert page.locator(".label-choice.is-gold .label-name").inner_text() == example.choices[gold]
    assert page.locator(".label-choice.is-wrong .label-name").inner_text() == example.choices[wrong]
    shot(page, f"fewclue-chid-reveal-{width}")
    response = Response.objects.get(participation=p, phase="training", position=0)
    assert response.label == str(wrong) and response.score == 0
    assert_fits(page, width)
    assert not page.js_errors


@pytest.mark.parametrize("width", WIDTHS)
def test_a_cluewsc_item_shows_both_spans_marked_and_escaped(open_as, db, width):
    p = fewclue_participation("cluewsc", state=State.TRAINING)
    page = open_as(p, viewport={"width": width, "height": 900})
    wait_for_item(page, 0)
    # Markup in the text stays text: shift the item's marks behind a prefix that looks like HTML.
    example = first_training_example(p)
    prefix = "<i>注</i><img src=x>"
    example.context = prefix + example.context
    example.marks = [{**m, "start": m["start"] + len(prefix), "end": m["end"] + len(prefix)} for m in example.marks]
    example.save()
    page.reload()
    wait_for_item(page, 0)
    marks = page.evaluate(
        """() => [...document.querySelectorAll('#context-wrap mark.ctx-mark')].map(m => ({
            role: m.dataset.role, text: m.querySelector('.mark-text').textContent,
            spoken: m.textContent, tag: (m.querySelector('.mark-tag') || {}).textContent,
            width: m.getBoundingClientRect().width}))"""
    )
    by_role = {m["role"]: m["text"] for m in example.marks}
    assert [m["role"] for m in marks] == ["span1", "span2"]
    for m in marks:
        assert m["text"] == by_role[m["role"]] and m["width"] > 0
        number = m["role"][-1]
        assert m["spoken"] == f"span {number}: {m['text']}{number}" and m["tag"] == number
    context = page.locator("#context-wrap .context")
    assert context.evaluate("c => c.querySelectorAll('i, img').length") == 0
    shot(page, f"fewclue-cluewsc-marks-{width}")
    assert context.evaluate("c => c.textContent.replace(/span \\d: /g, '')").startswith(prefix)
    assert_fits(page, width)
    assert not page.js_errors


def with_many_labels(task, total=119):
    """IFLYTEK's 119 labels: the fixture's three and invented ones in the label file's shape."""
    have = task.labels.count()
    Label.objects.bulk_create(
        Label(task=task, name=str(i), definition=f"类别{i}（简称：类{i}）", example="", position=i)
        for i in range(have, total)
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_an_iflytek_item_is_answered_by_typing_part_of_a_label_name(open_as, db, width):
    p = fewclue_participation("iflytek", state=State.TRAINING)
    with_many_labels(p.condition.study.task)
    page = open_item(open_as, p, width)
    assert page.locator("input[type=radio][name=label]").count() == 0  # no wall of radio buttons
    assert page.locator(".label-row").count() == 119
    viewport = page.viewport_size["height"]
    assert page.locator("#label-list").evaluate("l => l.getBoundingClientRect().height") < 0.5 * viewport
    assert page.evaluate("() => document.documentElement.scrollHeight") < 4 * viewport
    example = first_training_example(p)
    gold = example.gold_answers[0]
    definition = p.condition.study.task.labels.get(name=gold).definition
    short = definition.split("简称：")[1].rstrip("）")  # e.g. "WIFI": the label's short name
    filter_box = page.locator("#label-filter")
    filter_box.click()
    filter_box.type(short.lower() if short.isascii() else short)
    assert page.locator(".label-row:not([hidden])").count() == 1
    assert page.locator("#label-count").inner_text() == "1 label"
    shot(page, f"fewclue-iflytek-search-{width}")
    page.keyboard.press("Enter")  # chooses the one left; the focus leaves the filter
    assert page.locator(".label-row.is-chosen").get_attribute("data-label") == gold
    assert page.locator("#label-chosen-text").inner_text().endswith(definition)
    page.locator("#label-help").click()  # the description on demand
    assert page.locator("#help-dialog").is_visible() and page.locator("#help-title").inner_text() == gold
    page.keyboard.press("Escape")
    page.locator(".label-row.is-chosen").focus()
    page.keyboard.press("w")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    response = Response.objects.get(participation=p, phase="training", position=0)
    assert response.label == gold and response.score == 1.0
    assert page.locator("#reveal .verdict-mark").inner_text().endswith("Correct")
    assert_fits(page, width)
    assert not page.js_errors


def test_in_a_chinese_study_each_iflytek_label_is_printed_once(open_as, db):
    p = fewclue_participation("iflytek", state=State.TRAINING)
    with_many_labels(p.condition.study.task)
    p.study.language = "zh-hans"
    p.study.save()
    page = open_item(open_as, p, 1366)
    rows = page.locator(".label-row").evaluate_all(
        "rows => rows.map(r => [r.querySelector('.label-name').textContent,"
        " (r.querySelector('.label-gloss') || {}).textContent || ''])"
    )
    assert rows[0][0] == "打车"  # its definition is "打车" too (its short name is itself)
    # A definition that only repeats the name is not printed beside it (was "打车 打车").
    assert all(name != gloss for name, gloss in rows), [r for r in rows if r[0] == r[1]]


def test_the_label_list_takes_arrow_keys_and_refuses_an_empty_choice(open_as, db):
    p = fewclue_participation("iflytek", state=State.TRAINING)
    with_many_labels(p.condition.study.task)
    page = open_item(open_as, p, 1366)
    assert page.evaluate("() => document.activeElement.id") == "label-filter"
    page.keyboard.type("类1")  # 类10..19, 类100..118 (labels 0-2 are the fixture's own)
    rows = page.locator(".label-row:not([hidden])")
    assert rows.count() == 10 + 19
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    active = page.locator(".label-row.is-active").get_attribute("data-label")
    assert active == rows.nth(2).get_attribute("data-label")
    page.keyboard.press("Escape")  # clears the filter
    assert page.locator(".label-row:not([hidden])").count() == 119
    for _ in range(30):  # far down the list: the list scrolls, the page does not
        page.keyboard.press("ArrowDown")
    assert page.locator(".label-row.is-active").get_attribute("data-label") == "30"
    assert page.locator("#label-list").evaluate("l => l.scrollTop") > 0
    row_box = page.locator(".label-row.is-active").bounding_box()
    list_box = page.locator("#label-list").bounding_box()
    assert list_box["y"] <= row_box["y"] and row_box["y"] + row_box["height"] <= list_box["y"] + list_box["height"] + 1
    assert page.evaluate("() => window.scrollY") == 0
    page.locator("#submit-button").click()
    assert "type part of its name" in page.locator("#message").inner_text()
    assert Response.objects.get(participation=p, phase="training", position=0).status == "pending"
    # Keyboard only: type, Enter chooses, W rates, Enter submits.
    page.locator("#label-filter").focus()
    page.keyboard.type("类42")
    page.keyboard.press("Enter")
    page.keyboard.press("w")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    assert Response.objects.get(participation=p, phase="training", position=0).label == "42"
    assert page.locator(".label-row:not([hidden])").count() == 2  # the worker's answer and the gold
    assert not page.js_errors
