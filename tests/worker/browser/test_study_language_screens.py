"""The pages of a FewCLUE study (Chinese) and a German CLUES study at a laptop's and a phone's width: the start
page, an item and an attention check, each fitting the window, the check in the study's language and naming
the label as its button shows it. Screenshots: test-artifacts/screenshots/lang-*.png."""

import re

import pytest

from annotation.models import Participation
from annotation.services.verdicts import attention
from tasks_app.demo import import_demo_data
from tasks_app.models import Task
from tests.factories import ConditionFactory, ParticipationFactory
from tests.worker.browser.conftest import shot
from tests.worker.browser.test_pages_fit import OVERFLOWING, VIEWPORTS, VISIBLE_TEXTS
from tests.worker.browser.test_worker_flow import wait_for_item
from tests.worker.conftest import make_participation
from tests.worker.fewclue import fewclue_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
# ASCII punctuation against a Chinese character: a Chinese page uses the full-width marks (，：；？！（）).
ASCII_BESIDE_CHINESE = re.compile(r"[\u4e00-\u9fff][,.:;?!(]|[,:;?!)][\u4e00-\u9fff]")


def _chinese_punctuation(page, what):
    wrong = [text for text in page.evaluate(VISIBLE_TEXTS) if ASCII_BESIDE_CHINESE.search(text)]
    assert wrong == [], what


def _open(open_as, p, viewport):
    return open_as(p, viewport=VIEWPORTS[viewport], touch=viewport == "phone")


def _fits(page, what):
    # A screen reader's text (CHID's "blank to fill") is clipped to one pixel on purpose.
    wide = [node for node in page.evaluate(OVERFLOWING) if ".visually-hidden " not in node]
    assert wide == [], what


def _check_step(p):
    """Another worker of ``p``'s study, in the test step, whose first item is an attention check."""
    attention.definitions.generate(study=p.study, positions=[1])
    condition = ConditionFactory(study=p.study, shots=0) if p.condition.shots else p.condition
    return ParticipationFactory(condition=condition, slot_index=5, state=State.TEST)


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("folder", ["iflytek", "chid"])
def test_a_fewclue_studys_start_item_and_check_pages_fit_and_speak_chinese(open_as, db, folder, viewport):
    p = fewclue_participation(folder, state=State.CLAIMED)
    p.study.language = "zh-hans"
    p.study.save()
    page = _open(open_as, p, viewport)
    page.wait_for_function("() => !document.getElementById('start-button').disabled")
    _fits(page, "start")
    _chinese_punctuation(page, "start")
    shot(page, f"lang-fewclue-{folder}-start-{viewport}")
    Participation.objects.filter(pk=p.pk).update(state=State.TRAINING)
    page = _open(open_as, p, viewport)
    wait_for_item(page, 0)
    _fits(page, "item")
    _chinese_punctuation(page, "item")
    shot(page, f"lang-fewclue-{folder}-item-{viewport}")
    checked = _check_step(p)
    page = _open(open_as, checked, viewport)
    wait_for_item(page, 0)
    question = page.locator("#question").inner_text()
    assert question.startswith("为表明您在认真阅读，请选择“") and question.endswith("”。"), question
    _fits(page, "check")
    _chinese_punctuation(page, "check")
    shot(page, f"lang-fewclue-{folder}-check-{viewport}")


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_a_german_studys_start_item_and_check_pages_fit_and_name_the_german_buttons(open_as, db, viewport):
    import_demo_data()
    task = Task.objects.get(slug="mnli")
    p = make_participation(task, shots=10, state=State.CLAIMED, language="de")
    page = _open(open_as, p, viewport)
    page.wait_for_function("() => !document.getElementById('start-button').disabled")
    _fits(page, "start")
    shot(page, f"lang-german-mnli-start-{viewport}")
    Participation.objects.filter(pk=p.pk).update(state=State.TRAINING)
    page = _open(open_as, p, viewport)
    wait_for_item(page, 0)
    _fits(page, "item")
    shot(page, f"lang-german-mnli-item-{viewport}")
    checked = _check_step(p)
    page = _open(open_as, checked, viewport)
    wait_for_item(page, 0)
    question = page.locator("#question").inner_text()
    buttons = page.locator(".label-choice .label-name").all_inner_texts()
    named = question.split("„")[1].split("“")[0]
    assert question.startswith("Zum Zeichen, dass Sie aufmerksam lesen, wählen Sie „") and named in buttons
    _fits(page, "check")
    shot(page, f"lang-german-mnli-check-{viewport}")
