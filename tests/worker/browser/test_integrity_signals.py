"""The integrity signals in a real browser (headless Chromium): a copy, a tab switched away, a fast
answer, a hidden page; and the page sends those four figures with each answer and nothing else."""

import pytest

from annotation.models import Participation, Response
from annotation.services.session import signals
from annotation.services.verdicts import integrity
from tests.factories import make_classification_task
from tests.worker.browser.test_worker_flow import wait_for_item
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State


@pytest.fixture(scope="module")
def browser(full_browser):
    """The full Chromium: only a browser with windows moves the focus to a tab brought to the front."""
    return full_browser


def _record_posts(page) -> list[tuple[str, dict]]:
    """(route, JSON body) of every submit and skip the page sends, as it leaves the browser."""
    sent: list[tuple[str, dict]] = []

    def on_request(request) -> None:
        for route in ("submit", "skip"):
            if request.method == "POST" and request.url.endswith(f"/api/session/{route}/"):
                sent.append((route, request.post_data_json))

    page.on("request", on_request)
    return sent


def _copy_question(page) -> None:
    """Select the question's text and press Ctrl+C, as a worker would."""
    page.evaluate(
        """() => {
            const range = document.createRange();
            range.selectNodeContents(document.getElementById("question"));
            getSelection().removeAllRanges();
            getSelection().addRange(range);
        }"""
    )
    page.keyboard.press("Control+C")


def _answer(page) -> None:
    page.keyboard.press("1")
    page.keyboard.press("w")
    page.keyboard.press("Enter")


def _until_away(page, away: bool) -> None:
    """Until the page is away (hidden or unfocused, as static/worker/signals.js counts it), or back: the switch
    of tabs reaches the page asynchronously, and a loaded machine may let the test move the page's clock
    first (no timer: each check is one evaluate)."""
    for _ in range(500):
        if page.evaluate("document.hidden || !document.hasFocus()") == away:
            return
    raise AssertionError(f"the page never became {'away' if away else 'focused'}")


def test_the_page_records_a_copy_a_tab_switch_and_a_fast_answer_and_sends_nothing_else(open_as, db):
    task = make_classification_task(slug="integ", n_test=4)
    p = make_participation(task, state=State.TEST, integrity_hidden_seconds=2)
    page = open_as(p, clock=True)  # the waits below move the page's clock instead of sleeping
    # Playwright keeps every page focused by default; without that, another tab in front takes the
    # focus away from this one as it does in a desktop browser.
    page.context.new_cdp_session(page).send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    sent = _record_posts(page)

    wait_for_item(page, 0)  # copied, and answered at once: faster than reading time
    _copy_question(page)
    _answer(page)

    wait_for_item(page, 1)  # the worker switches to another tab for 2.5 s, then answers
    other = page.context.new_page()
    other.bring_to_front()
    _until_away(page, True)  # the page has heard it is away before its clock moves
    page.clock.run_for(2500)
    page.bring_to_front()
    _until_away(page, False)
    other.close()
    _answer(page)

    wait_for_item(page, 2)  # read at leisure: slower than reading time
    reading = Response.objects.get(participation=p, position=2).example
    page.clock.run_for(signals.reading_ms(f"{reading.question}\n{reading.context_text}") + 500)
    _answer(page)

    wait_for_item(page, 3)  # skipped: the skip carries the signals too
    page.keyboard.press("s")
    page.keyboard.press("s")
    page.locator("#completion-code").wait_for()

    assert [route for route, _ in sent] == ["submit", "submit", "submit", "skip"]
    for route, body in sent:  # nothing but the answer and the four figures
        assert set(body) == ({"item", "label", "confidence", "signals"} if route == "submit" else {"item", "signals"})
        assert set(body["signals"]) == set(signals.FIELDS)
        assert all(isinstance(v, int) and v >= 0 for v in body["signals"].values())
    copied, switched, slow, skipped = (body["signals"] for _, body in sent)
    assert [s["copy_count"] for s in (copied, switched, slow, skipped)] == [1, 0, 0, 0]
    assert switched["hidden_count"] == 1 and switched["hidden_ms"] >= 2400
    assert copied["hidden_count"] == slow["hidden_count"] == 0

    rows = list(Response.objects.filter(participation=p).order_by("position"))
    assert [r.copy_count for r in rows] == [1, 0, 0, 0]
    assert rows[0].visible_ms < rows[0].reading_ms  # the fast answer
    assert rows[2].visible_ms >= rows[2].reading_ms
    assert rows[1].hidden_count == 1 and rows[1].hidden_ms >= 2400
    assert rows[3].status == Response.Status.SKIPPED and rows[3].visible_ms is not None
    [summary] = integrity.report(p.study)
    f = summary.figures
    assert (f.items, f.answered, f.with_signals, f.copied_items, f.fast_items, f.hidden_items) == (4, 3, 4, 1, 1, 1)
    assert summary.decision == "passed"  # no rule on this study: reported only
    assert not page.js_errors


def test_time_on_a_hidden_page_is_not_counted_as_visible(open_as, db):
    task = make_classification_task(slug="integh", n_test=1)
    p = make_participation(task, state=State.TEST)
    page = open_as(p)
    sent = _record_posts(page)
    wait_for_item(page, 0)
    # Headless Chromium never hides a page by itself: the page is told it is hidden, as a browser does
    # when the worker minimises the window, and visible again 2 s later.
    page.evaluate(
        """() => {
            Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
            document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )
    page.wait_for_timeout(2000)
    page.evaluate(
        """() => {
            delete document.hidden;
            document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )
    _answer(page)
    page.locator("#completion-code").wait_for()
    [(_, body)] = sent
    row = Response.objects.get(participation=p)
    assert body["signals"]["hidden_count"] == 1 and body["signals"]["hidden_ms"] >= 1900
    assert row.visible_ms < row.active_ms - 1500  # the 2 s hidden are not in the visible time
    assert not page.js_errors
