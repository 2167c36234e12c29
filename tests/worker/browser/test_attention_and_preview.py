"""Attention checks and staff previews in a real browser (headless Chromium)."""

import pytest
from django.test import Client

from annotation.models import AttentionDecision, Participation, Response, Study
from annotation.services.studies import studies
from annotation.services.verdicts import attention
from tests.factories import make_classification_task
from tests.team import team_member
from tests.worker.browser.conftest import shot
from tests.worker.browser.test_worker_flow import wait_for_item
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State

CHECK_QUESTION = "To show you are reading, choose 'negative'."


def _test_step_with_checks(**rule) -> Participation:
    """A worker in the test step of 3 items, with checks as items 1 and 3 (both expecting 'negative')."""
    task = make_classification_task(slug="attb", labels=("positive", "negative"), n_test=3)
    p = make_participation(task, state=State.TEST, **rule)
    for position in (1, 3):
        attention.definitions.create_check(
            study=p.study, position=position, context="A sentence.", question=CHECK_QUESTION, expected_label="negative"
        )
    return p


def _answer(page, position: int, key: str) -> None:
    wait_for_item(page, position)
    page.keyboard.press(key)  # 1: positive, 2: negative
    page.keyboard.press("w")
    page.keyboard.press("Enter")


def test_a_worker_who_fails_the_attention_checks_is_excluded_by_the_rule(open_as, db):
    p = _test_step_with_checks(attention_fail_limit=2, attention_action=Study.AttentionAction.EXCLUDE)
    page = open_as(p)
    wait_for_item(page, 0)
    assert page.locator("#question").inner_text() == CHECK_QUESTION  # an item like any other
    assert page.locator("#progress-text").inner_text() == "Item 1 of 5"
    for position in range(5):
        _answer(page, position, "1")  # 'positive' everywhere: both checks failed
    page.get_by_text("completion code", exact=False).first.wait_for()
    shot(page, "attention-excluded")
    p.refresh_from_db()
    assert (p.state, p.exclusion_kind) == (State.EXCLUDED, "attention")
    assert AttentionDecision.objects.get(participation=p).failed_count == 2
    assert Response.objects.filter(participation=p).count() == 3  # the counted rows: the test items only
    assert not page.js_errors


def test_a_worker_who_passes_the_attention_checks_completes(open_as, db):
    p = _test_step_with_checks(attention_fail_limit=1, attention_action=Study.AttentionAction.EXCLUDE)
    page = open_as(p)
    for position in range(5):
        _answer(page, position, "2")  # 'negative' everywhere: both checks passed
    page.locator("#completion-code").wait_for()
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    assert [(r.passed, r.failed, r.decision) for r in attention.reports.report(p.study)] == [(2, 0, "passed")]
    assert not page.js_errors


def test_a_staff_preview_trains_with_reveals_reaches_the_test_and_restarts(open_as, db):
    task = make_classification_task(slug="prevb", n_test=2, n_train=10)
    study = studies.study_create(task=task, slug="prevb", split_number=1, shots=[10])  # a draft
    attention.definitions.generate(study=study, positions=[1])
    admin = team_member("staff", "assistant")  # the least role that may preview
    client = Client()
    client.force_login(admin)
    session = [{"name": "sessionid", "value": client.cookies["sessionid"].value}]

    page = open_as(None, path=f"/work/preview/{study.slug}/?shots=10", cookies=session)
    banner = page.locator("#preview-banner")
    assert "nothing is recorded" in banner.inner_text()
    page.locator("#start-button").click()
    for position in range(10):
        wait_for_item(page, position)
        page.keyboard.press("1")
        page.keyboard.press("w")
        page.keyboard.press("Enter")
        page.locator("#reveal .verdict").wait_for()
        if position == 0:
            shot(page, "preview-training-reveal")
            assert page.locator("#preview-banner").is_visible()
            assert page.locator("#reveal .score").inner_text().startswith("S1 ")  # the figure, for staff
        page.keyboard.press("Enter")
    wait_for_item(page, 0)
    assert page.locator("#question").inner_text().startswith("To show you are reading")  # the check, item 1
    _answer(page, 0, "1")
    wait_for_item(page, 1)
    shot(page, "preview-test-item")
    preview_row = Participation.all_objects.get(is_preview=True)
    assert preview_row.state == State.TEST
    assert not Participation.objects.exists() and not Response.objects.exists()

    page.locator("#preview-restart").click()
    page.locator("#start-button").wait_for()
    assert "nothing is recorded" in page.locator("#preview-banner").inner_text()
    fresh = Participation.all_objects.get(is_preview=True)
    assert fresh.pk != preview_row.pk and fresh.state == State.CLAIMED
    assert not Response.all_objects.filter(participation_id=preview_row.pk).exists()
    assert not page.js_errors
