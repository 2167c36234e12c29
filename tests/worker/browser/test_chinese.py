"""A FewCLUE study in Chinese in real Chromium: every page a worker walks through (the entry link's start
page with its consent, the start page, a training item, its reveal, a test item and the finish page) reads
in Chinese, and nothing on it overflows at a desktop's and a phone's width.

The same walk is made in a study set to English; on each page every visible text node of the Chinese
rendering must differ from the English one, except names and the item's own content (the data is Chinese
in both). Screenshots need a CJK font (Debian's fonts-noto-cjk; scripts/test.sh installs it).
"""

import pytest

from annotation.models import Participation, Study
from tasks_app.models import Example, ExampleSet, Task
from tests.factories import ConditionFactory, StudyFactory
from tests.i18n.pages import _NEUTRAL, SAME_IN_EVERY_LANGUAGE
from tests.worker.browser.conftest import shot
from tests.worker.fewclue import import_fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = (1366, 390)
CONSENT = {
    "en": "We store your answers without your platform ID. You may stop at any time.",
    "zh-hans": "我们保存您的答案，但不保存您的平台 ID。您可以随时停止。",
}
# The visible text nodes of the page, and the texts of its placeholders, titles and aria-labels.
VISIBLE_TEXT = """() => {
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const text = walker.currentNode.textContent.replace(/\\s+/g, ' ').trim();
        const parent = walker.currentNode.parentElement;
        if (!text || !parent || parent.closest('script, style, [hidden]')) continue;
        if (!parent.getClientRects().length || getComputedStyle(parent).visibility === 'hidden') continue;
        out.push(text);
    }
    for (const el of document.querySelectorAll('[placeholder], [title], [aria-label]')) {
        if (!el.getClientRects().length) continue;
        for (const name of ['placeholder', 'title', 'aria-label']) {
            const value = (el.getAttribute(name) || '').replace(/\\s+/g, ' ').trim();
            if (value) out.push(value);
        }
    }
    return [document.title.trim(), ...out];
}"""
OVERFLOWING = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 1)
    .map(e => e.tagName + '#' + e.id + '.' + e.className)"""


def _study(task: Task, language: str) -> Study:
    study = StudyFactory(
        task=task,
        language=language,
        consent_required=True,
        consent_text=CONSENT["en"],
        translations={"zh-hans": {"consent_text": CONSENT["zh-hans"]}},
    )
    dev_0 = ExampleSet.objects.get(task=task, name="dev_0")
    ConditionFactory(study=study, shots=dev_0.items.count(), training_set=dev_0)
    return study


def _data(task: Task, study: Study) -> set[str]:
    """Names and the item's own content: the same text in every language."""
    texts = {task.name, study.name, study.slug, *(str(c["code"]) for c in study.outcome_codes.values())}
    for label in task.labels.all():
        texts |= {label.name, label.definition}
    for example in Example.objects.filter(task=task):
        parts = example.context if isinstance(example.context, list) else [example.context]
        texts |= {*parts, example.question, *(example.choices or [])}
    return texts


def _wait_for(page, phase: str, position: int) -> None:
    page.wait_for_function(
        "([phase, position]) => window.workerPage && window.workerPage.item"
        " && window.workerPage.item.phase === phase && window.workerPage.item.position === position",
        arg=[phase, position],
    )


def _answer(page) -> None:
    page.keyboard.press("1")  # the first label
    page.keyboard.press("w")  # a confidence
    page.keyboard.press("Enter")


def _walk(open_as, study: Study, language: str) -> dict[str, list[str]]:
    """Every page of the study from the entry link to the finish page: page name -> visible texts, each page
    measured at both widths (and photographed in Chinese)."""
    seen: dict[str, list[str]] = {}

    def record(page, name: str) -> None:
        assert page.locator("html").get_attribute("lang") == language, name
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 844 if width < 800 else 900})
            assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), (name, width)
            assert page.evaluate(OVERFLOWING) == [], (name, width)
            if language != "en":
                shot(page, f"i18n-chinese-{study.task.slug}-{name}-{width}")
        seen[name] = page.evaluate(VISIBLE_TEXT)
        assert page.js_errors == [], name

    page = open_as(None, path=f"/join/{study.slug}/?worker_id=walker-{language}")
    record(page, "entry-consent")
    page.locator("#consent-agree").click()
    page.locator("#start-button").wait_for()
    record(page, "start")
    page.locator("#start-button").click()
    _wait_for(page, "training", 0)
    record(page, "training-item")
    _answer(page)
    page.locator("#reveal .verdict").wait_for()
    record(page, "reveal")
    shots = study.conditions.get().shots
    for position in range(1, shots):
        page.locator("#next-button").click()
        _wait_for(page, "training", position)
        _answer(page)
        page.locator("#reveal .verdict").wait_for()
    page.locator("#next-button").click()
    _wait_for(page, "test", 0)
    record(page, "test-item")
    participation = Participation.objects.get(condition__study=study)
    tests = participation.responses.filter(phase="test").count()
    for position in range(tests):
        _wait_for(page, "test", position)
        _answer(page)
    page.locator("#completion-code").wait_for()
    record(page, "finish")
    return seen


@pytest.mark.parametrize("folder", ["eprstmt", "ocnli"])  # one text; a pair under its segment titles
def test_every_page_of_a_fewclue_study_in_chinese_differs_from_english_and_fits(open_as, db, folder):
    import_fixture()
    task = Task.objects.get(slug=f"fewclue-{folder}")
    english_study, chinese_study = _study(task, "en"), _study(task, "zh-hans")
    english = _walk(open_as, english_study, "en")
    chinese = _walk(open_as, chinese_study, "zh-hans")
    assert chinese.keys() == english.keys()
    data = _data(task, english_study) | _data(task, chinese_study)
    for name, nodes in chinese.items():
        same = [
            node
            for node in nodes
            if node in english[name]
            and not all(part in data for part in node.split(" · "))  # a label: its name · its definition
            and node not in SAME_IN_EVERY_LANGUAGE
            and not _NEUTRAL.match(node)
            and not any(node in text for text in data)  # a piece of the item's text (marks split it)
        ]
        assert same == [], name
    assert CONSENT["zh-hans"] in chinese["entry-consent"]
    assert task.translations["zh-hans"]["worker_title"] in chinese["start"]  # the task's own Chinese title
    assert any("正确" in node or "错误" in node for node in chinese["reveal"])
    for title in task.translations["zh-hans"].get("segment_titles", []):  # a pair's titles in Chinese
        assert title in chinese["training-item"]
