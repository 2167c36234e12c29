"""The worker pages at 1366 x 768 and 390 x 844, in English and German: the start page's first screen shows
"At a glance" and the Start button, nothing is cut off or overflows, and a German page has no English.

Measured, not eyeballed: an element overflows when its content is wider than its box (``scrollWidth`` >
``clientWidth``) where it does not scroll on purpose, and the page when it is wider than the window.
"""

import pytest

from annotation.models import Participation, Study
from tasks_app.demo import import_demo_data
from tasks_app.models import Task
from tests.worker.browser.conftest import shot
from tests.worker.browser.test_worker_flow import wait_for_item
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
VIEWPORTS = {"desktop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}

# A function (the CSP forbids eval): every visible element whose content is wider than its box.
OVERFLOWING = """() => {
  const out = [];
  const page = document.documentElement.scrollWidth;
  if (page > window.innerWidth + 1) out.push("page " + page);
  for (const node of document.querySelectorAll("body *")) {
    const style = getComputedStyle(node);
    if (style.display === "none" || style.visibility === "hidden" || !node.getClientRects().length) continue;
    if (["auto", "scroll"].includes(style.overflowX) || node.tagName === "INPUT") continue;
    if (node.scrollWidth > node.clientWidth + 1 && node.clientWidth > 0) {
      const name = node.tagName.toLowerCase() + "#" + node.id + "." + node.className;
      out.push(name + " " + node.scrollWidth + ">" + node.clientWidth);
    }
    const box = node.getBoundingClientRect();
    if (box.right > window.innerWidth + 1 && box.width > 0) out.push("off-screen " + node.tagName + "#" + node.id);
  }
  return out;
}"""

# What a worker reads or hears, finer than a line: each visible text node (a translated frame around an
# untranslated part stays a line of its own here: "Your answer: " beside the label), and the words the page
# shows or says in attributes (a placeholder, a tooltip, a screen reader's label).
VISIBLE_TEXTS = """() => {
  const out = document.body.innerText.split("\\n");
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && parent.checkVisibility({ visibilityProperty: true })) out.push(node.textContent);
  }
  for (const node of document.querySelectorAll("body [placeholder], body [title], body [aria-label], body [alt]")) {
    if (!node.checkVisibility({ visibilityProperty: true })) continue;
    for (const name of ["placeholder", "title", "aria-label", "alt"]) out.push(node.getAttribute(name) || "");
  }
  return out.map((s) => s.replace(/\\s+/g, " ").trim()).filter((s) => s);
}"""


# How many lines each confidence word of the scale takes (the line boxes of its text).
SCALE_LINES = """() => [...document.querySelectorAll(".scale-text")].map((node) => {
  const range = document.createRange();
  range.selectNodeContents(node);
  return [node.textContent, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
})"""


def _in_first_screen(page, selector):
    box = page.locator(selector).first.bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def _fits(page, what):
    assert page.evaluate(OVERFLOWING) == [], what


def _start_page(open_as, language, viewport, touch=False):
    task = Task.objects.get(slug="mnli")
    p = make_participation(task, shots=10, state=State.CLAIMED, language=language)
    page = open_as(p, viewport=VIEWPORTS[viewport], touch=touch)
    page.wait_for_function("() => !document.getElementById('start-button').disabled")
    return p, page


@pytest.fixture
def demo(db):
    import_demo_data()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "de"])
def test_the_start_page_opens_at_its_top_with_the_facts_and_the_start_button(open_as, demo, language, viewport):
    _p, page = _start_page(open_as, language, viewport, touch=viewport == "phone")
    assert page.evaluate("() => window.scrollY") == 0
    assert _in_first_screen(page, "#study-facts h2") and _in_first_screen(page, "#start-button")
    assert page.evaluate("() => document.activeElement.id") == "start-button"  # still the Enter key's target
    _fits(page, f"start {language} {viewport}")
    if viewport == "phone":
        assert "keyboard" not in page.locator("main").inner_text().lower()
        assert "tastatur" not in page.locator("main").inner_text().lower()
    shot(page, f"fit-start-{language}-{viewport}")


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "de"])
def test_training_reveal_and_test_pages_fit(open_as, demo, language, viewport):
    p, page = _start_page(open_as, language, viewport)
    page.locator("#start-button").click()
    wait_for_item(page, 0)
    _fits(page, f"training {language} {viewport}")
    page.keyboard.press("1")
    page.keyboard.press("e")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    assert page.locator("#reveal .score").count() == 0  # words only for workers
    _fits(page, f"reveal {language} {viewport}")
    shot(page, f"fit-reveal-{language}-{viewport}")


def _item_lines(page, own_question=False):
    """The item page's visible texts less the item's own text and the key names, as on the keyboard.

    ``own_question``: the question is the item's own too (SQuAD, ReCoRD: each item asks its own, in the
    data's language), not the task's question (MNLI's, a NER type's template), which is translated."""
    context = " ".join(page.locator("#context-wrap").inner_text().split())
    if own_question:
        context += " " + " ".join(page.locator("#question").inner_text().split())
    keys = set(page.locator("kbd").all_inner_texts()) | {"Q W E R T"}
    return [text for text in page.evaluate(VISIBLE_TEXTS) if text not in context and text not in keys]


def _page_lines(page, *own):
    """The page's visible texts less ``own``: the texts that are the same in every language (a code)."""
    return [text for text in page.evaluate(VISIBLE_TEXTS) if text not in own]


def _consent_text(language):
    """The researcher's own consent text, in the study's language (docs/examples has both)."""
    from pathlib import Path

    return (Path(__file__).resolve().parents[3] / "docs" / "examples" / f"consent.{language}.md").read_text()


def _lines_of_start(open_as, language):
    _p, page = _start_page(open_as, language, "desktop")
    return _page_lines(page)


def _lines_of_training_item(open_as, language):
    _p, page = _start_page(open_as, language, "desktop")
    page.locator("#start-button").click()
    wait_for_item(page, 0)
    return _item_lines(page)


def _lines_of_reveal(open_as, language):
    _p, page = _start_page(open_as, language, "desktop")
    page.locator("#start-button").click()
    wait_for_item(page, 0)
    page.keyboard.press("1")
    page.keyboard.press("e")
    page.keyboard.press("Enter")
    page.locator("#reveal .verdict").wait_for()
    return _item_lines(page)


def _lines_of_span_reveal(slug, own_question=False):
    """A span task's reveal after "no answer" (N): its columns, lists and counts come from reveal.js."""

    def lines(open_as, language):
        p = make_participation(Task.objects.get(slug=slug), shots=10, state=State.TRAINING, language=language)
        page = open_as(p, viewport=VIEWPORTS["desktop"])
        wait_for_item(page, 0)
        page.keyboard.press("n")
        page.keyboard.press("e")
        page.keyboard.press("Enter")
        page.locator("#reveal .verdict").wait_for()
        return _item_lines(page, own_question=own_question)

    return lines


def _lines_of_label_help(open_as, language):
    """The help of the chosen label (H): its definition and example, the task's texts in the page's language."""
    p = make_participation(Task.objects.get(slug="sst2"), shots=10, state=State.TRAINING, language=language)
    page = open_as(p, viewport=VIEWPORTS["desktop"])
    wait_for_item(page, 0)
    page.keyboard.press("1")
    page.keyboard.press("h")
    page.locator("#help-dialog[open] #help-definition").wait_for()
    return _item_lines(page)


def _lines_of_test_item(open_as, language):
    p = make_participation(Task.objects.get(slug="mnli"), state=State.TEST, language=language)
    page = open_as(p, viewport=VIEWPORTS["desktop"])
    wait_for_item(page, 0)
    return _item_lines(page)


def _lines_of_phone_span_item(open_as, language):
    """A NER item on a touch phone, the second one: the task description folded, the touch hints shown."""
    p = make_participation(Task.objects.get(slug="conll03"), state=State.TEST, language=language)
    page = open_as(p, viewport=VIEWPORTS["phone"], touch=True)
    wait_for_item(page, 0)
    page.keyboard.press("n")
    page.keyboard.press("e")
    page.keyboard.press("Enter")
    wait_for_item(page, 1)
    return _item_lines(page)


def _lines_of_entry_consent(open_as, language):
    study = _entry_study(f"asked-{language}", language, consent_text=_consent_text(language))
    page = open_as(None, path=f"/join/{study.slug}/?worker_id=w-{language}", viewport=VIEWPORTS["desktop"])
    page.locator("#consent-agree").wait_for()
    return _page_lines(page)


def _lines_of_work_consent(open_as, language):
    """The consent page under /work/: a worker who holds a slot but has not answered the consent text yet."""
    task = Task.objects.get(slug="mnli")
    p = make_participation(task, language=language, consent_required=True, consent_text=_consent_text(language))
    page = open_as(p, viewport=VIEWPORTS["desktop"])
    page.locator("#consent-agree").wait_for()
    return _page_lines(page)


def _lines_of_end(state, selector, **study):
    def lines(open_as, language):
        p = make_participation(Task.objects.get(slug="mnli"), state=state, language=language, **study)
        page = open_as(p, viewport=VIEWPORTS["desktop"])
        page.locator(selector).wait_for()
        codes = page.locator(".completion-code").all_inner_texts()  # the platform's code: the same in each
        return _page_lines(page, *codes)

    return lines


GERMAN_PAGES = {
    "start": _lines_of_start,
    "training item": _lines_of_training_item,
    "reveal": _lines_of_reveal,
    "NER reveal": _lines_of_span_reveal("conll03"),
    "reading reveal": _lines_of_span_reveal("squad2", own_question=True),
    "label help": _lines_of_label_help,
    "test item": _lines_of_test_item,
    "phone NER item": _lines_of_phone_span_item,
    "entry consent": _lines_of_entry_consent,
    "consent": _lines_of_work_consent,
    "finish": _lines_of_end(State.COMPLETED, "#completion-code"),
    "excluded": _lines_of_end(State.EXCLUDED, "main h1"),
    "declined": _lines_of_end(State.DECLINED, "main h1"),
    "abandoned": _lines_of_end(State.ABANDONED, "main h1"),
    "closed": _lines_of_end(State.TEST, ".page-closed", status=Study.Status.CLOSED),  # closed before the end
}


@pytest.mark.parametrize("page_name", list(GERMAN_PAGES))
def test_a_german_page_shows_no_english_but_the_items_own_text(open_as, demo, page_name):
    """The same page rendered in both languages shares no visible text (a line, a text node, a placeholder, a
    tooltip or a screen reader's label) but names, numbers, key names, a code and the item's own text: a text
    in both, with letters and longer than 3 characters, is English left on the German page."""
    lines = {language: GERMAN_PAGES[page_name](open_as, language) for language in ("en", "de")}
    assert lines["en"] and lines["de"], f"the {page_name} page shows no text"
    common = set(lines["en"]) & set(lines["de"])
    # Numbers, keys and the study's neutral marks are the same in every language.
    words = {line for line in common if any(ch.isalpha() for ch in line) and len(line) > 3}
    assert words == set(), f"English left on the German {page_name} page: {sorted(words)}"


def test_the_finish_page_reads_well_and_copies_the_code(open_as, demo):
    task = Task.objects.get(slug="mnli")
    p = make_participation(task, state=State.COMPLETED)
    page = open_as(p, viewport=VIEWPORTS["desktop"])
    page.locator("#completion-code").wait_for()
    text = page.locator("main").inner_text()
    assert "You have finished the task “How do two sentences relate?”, and your answers are saved." in text
    assert "?." not in text
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator("#copy-code").click()
    page.locator("#copy-status").filter(has_text="Copied.").wait_for()
    _fits(page, "finish")
    page.set_viewport_size(VIEWPORTS["phone"])
    _fits(page, "finish phone")


def _entry_study(slug, language, consent_text=""):
    from annotation.services.studies import studies

    task = Task.objects.get(slug="mnli")
    study = studies.study_create(
        task=task,
        slug=slug,
        split_number=1,
        shots=[0],
        language=language,
        consent_required=bool(consent_text),
        consent_text=consent_text,
    )
    studies.change_status(study=study, to_status=Study.Status.OPEN)
    return study


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("language", ["en", "de"])
def test_the_entry_links_start_and_consent_pages_fit(open_as, demo, language, viewport):
    from pathlib import Path

    consent = (Path(__file__).resolve().parents[3] / "docs" / "examples" / f"consent.{language}.md").read_text()
    plain = _entry_study(f"plain-{language}", language)
    page = open_as(None, path=f"/join/{plain.slug}/?worker_id=w-{viewport}", viewport=VIEWPORTS[viewport])
    assert _in_first_screen(page, "#study-facts h2") and _in_first_screen(page, "#entry-start")
    _fits(page, f"entry start {language} {viewport}")
    asked = _entry_study(f"asked-{language}", language, consent_text=consent)
    page = open_as(None, path=f"/join/{asked.slug}/?worker_id=w-{viewport}", viewport=VIEWPORTS[viewport])
    assert _in_first_screen(page, "#study-facts h2") and page.evaluate("() => window.scrollY") == 0
    page.locator("#consent-agree").wait_for()
    _fits(page, f"consent {language} {viewport}")
    shot(page, f"fit-consent-{language}-{viewport}")


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_test_and_finish_pages_fit_in_each_language(open_as, demo, language):
    task = Task.objects.get(slug="mnli")
    p = make_participation(task, state=State.TEST, language=language)
    for viewport in ("desktop", "phone"):
        page = open_as(p, viewport=VIEWPORTS[viewport])
        wait_for_item(page, 0)
        _fits(page, f"test {language} {viewport}")
        # The confidence scale keeps its five columns while its words fit them (_fits: no word overflows);
        # German words are too long on a phone, and it lists one point a row, each on one line.
        stacked = page.locator("#confidence .scale.stacked").count() == 1
        assert stacked == (language == "de" and viewport == "phone")
        if stacked:
            lines = page.evaluate(SCALE_LINES)
            assert len(lines) == 5 and all(n == 1 for _, n in lines), lines
        shot(page, f"fit-test-{language}-{viewport}")
    done = make_participation(task, state=State.COMPLETED, language=language)
    for viewport in ("desktop", "phone"):
        page = open_as(done, viewport=VIEWPORTS[viewport])
        page.locator("#completion-code").wait_for()
        _fits(page, f"finish {language} {viewport}")


def test_an_item_answered_in_another_tab_says_so(open_as, demo):
    task = Task.objects.get(slug="mnli")
    p = make_participation(task, state=State.TEST)
    first, second = open_as(p), open_as(p)
    for page in (first, second):
        wait_for_item(page, 0)
    first.keyboard.press("1")
    first.keyboard.press("e")
    first.keyboard.press("Enter")
    wait_for_item(first, 1)
    second.keyboard.press("2")
    second.keyboard.press("r")
    second.keyboard.press("Enter")
    message = second.locator("#message")
    message.filter(has_text="already answered").wait_for()
    assert "another tab" in message.inner_text()
    assert second.locator("#label-1").is_checked()  # the answer that stands, not this tab's


@pytest.mark.parametrize("slug", ["conll03", "squad2", "record"])
def test_a_german_span_task_page_fits_with_its_shortcuts(open_as, demo, slug):
    task = Task.objects.get(slug=slug)
    p = make_participation(task, state=State.TEST, language="de")
    for viewport in ("desktop", "phone"):
        page = open_as(p, viewport=VIEWPORTS[viewport])
        wait_for_item(page, 0)
        _fits(page, f"{slug} de {viewport}")
    shot(page, f"fit-{slug}-de-phone")


@pytest.mark.parametrize("touch", [True, False])
def test_the_span_instructions_say_tap_on_a_touch_screen_and_click_with_a_mouse(open_as, demo, touch):
    p = make_participation(Task.objects.get(slug="conll03"), state=State.TEST, language="en")
    page = open_as(p, viewport=VIEWPORTS["phone" if touch else "desktop"], touch=touch)
    wait_for_item(page, 0)
    page.evaluate("() => { document.getElementById('instructions-box').open = true; }")
    howto = page.locator("#instructions-box").inner_text() + " " + page.locator("#span-hint").inner_text()
    if touch:  # never "click … drag" beside "tap"
        assert "Tap a word" in howto and "Click a word" not in howto and "drag across" not in howto, howto
    else:
        assert "Click a word" in howto and "Tap a word" not in howto, howto
    _fits(page, f"span how-to touch={touch}")
