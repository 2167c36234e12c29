"""The dashboard in a real browser: it reads at a glance on a laptop and a phone, and updates live."""

import pytest

from annotation.models import Participation
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong
from tests.worker.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
FITS = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
# Nothing cut off or overflowing, measured: every visible element whose content is wider than its box (a card
# that would scroll sideways too), and every one past the window's right edge; only the wide tables scroll, in
# their .scroll box, on purpose.
OVERFLOWING = """() => {
  const out = [];
  for (const node of document.querySelectorAll("body *")) {
    const style = getComputedStyle(node);
    if (style.display === "none" || style.visibility === "hidden" || !node.getClientRects().length) continue;
    if (node.closest(".scroll") || ["INPUT", "SELECT"].includes(node.tagName)) continue;
    if (node.scrollWidth > node.clientWidth + 1 && node.clientWidth > 0) {
      out.push(node.tagName + "." + node.getAttribute("class") + " " + node.scrollWidth + ">" + node.clientWidth);
    }
    const box = node.getBoundingClientRect();
    if (box.right > window.innerWidth + 1 && box.width > 0) out.push("off-screen " + node.tagName);
  }
  return out;
}"""


@pytest.fixture
def running(sst2):
    study = make_study(sst2, shots=(0, 10), slug="running", name="Movie reviews, split 1", status="open")
    gold = gold_answers(sst2)
    for n in (4, 3):
        add_annotator(study, 0, answers=[g if i < n else wrong(g, sst2) for i, g in enumerate(gold)])
    add_annotator(study, 0, answers=gold[:2], state=State.TEST, worker_id="at-work")
    add_annotator(study, 10, answers=gold, worker_id="ten-1")
    return study


def test_the_study_page_updates_its_progress_without_a_reload(open_as, staff_session, running, sst2):
    # The page's clock is moved past the next poll (live.js) instead of waiting for it.
    page = open_as(None, path="/dashboard/study/running/", cookies=staff_session, clock=True)
    ten = page.locator('[data-cond="running:10"]')
    assert ten.locator('[data-f="completed"]').inner_text() == "1"
    page.evaluate("() => { window.__sameDocument = true; }")
    shot(page, "dashboard-study-desktop")
    add_annotator(running, 10, answers=gold_answers(sst2), worker_id="ten-2")
    page.clock.run_for(60_000)
    page.wait_for_function(
        "() => document.querySelector('[data-cond=\"running:10\"] [data-f=\"completed\"]').textContent === '2'",
        timeout=15_000,
    )
    assert page.evaluate("() => window.__sameDocument === true")  # updated in place, not reloaded
    width = float(ten.locator("rect.bar-done").get_attribute("width"))
    assert width == pytest.approx(66.67)
    assert "Live · updated" in page.locator("#live-stamp").inner_text()
    assert not page.js_errors


def test_the_pages_read_at_a_glance_on_a_phone(open_as, staff_session, running):
    phone = {"width": 390, "height": 844}
    index = open_as(None, path="/dashboard/", cookies=staff_session, viewport=phone, touch=True)
    card = index.locator(".study-card").first
    assert card.locator(".cond").count() == 2 and card.locator(".badge[data-status]").inner_text() == "Open"
    assert index.evaluate(FITS)  # wide tables scroll inside their cards; the page itself does not
    shot(index, "dashboard-index-phone")
    study = open_as(None, path="/dashboard/study/running/", cookies=staff_session, viewport=phone, touch=True)
    first = study.locator('[data-cond="running:0"]').bounding_box()
    assert first is not None and first["y"] + first["height"] < 844  # progress is in the first view
    assert study.evaluate(FITS)
    shot(study, "dashboard-study-phone")


def test_the_index_on_a_laptop(open_as, staff_session, running):
    page = open_as(None, path="/dashboard/", cookies=staff_session, viewport={"width": 1366, "height": 900})
    page.locator("img.plot").evaluate("img => img.complete || new Promise(r => img.onload = r)")
    assert page.evaluate(FITS)
    shot(page, "dashboard-index-desktop")


def test_the_six_task_table_is_whole_at_1366_and_a_study_needing_attention_comes_first(open_as, staff_session, running):
    from datetime import timedelta

    from django.utils import timezone

    from tasks_app.catalog import install_clues_tasks

    for task in install_clues_tasks():
        make_study(task, shots=(0,), slug=f"six-{task.slug}", name=f"{task.name}, split 1", status="open")
    stale = timezone.now() - timedelta(hours=3)
    Participation.objects.filter(study=running, state=State.TEST).update(last_activity_at=stale)
    done = make_study(running.task, shots=(10,), slug="done", name="Done, split 1", workers_per_condition=1)
    add_annotator(done, 10, answers=gold_answers(running.task), worker_id="done-1")  # "10-shot ✓": the widest
    for viewport in ({"width": 1366, "height": 768}, {"width": 390, "height": 844}):
        page = open_as(None, path="/dashboard/", cookies=staff_session, viewport=viewport)
        page.locator("img.plot").evaluate("img => img.complete || new Promise(r => img.onload = r)")
        first = page.locator(".study-card").first
        assert first.locator("h2").inner_text() == "Movie reviews, split 1"  # needs attention: first
        assert first.locator(".badge-attention").inner_text() == "1 needs attention"
        assert page.evaluate(FITS)
        overflowing = page.evaluate(OVERFLOWING)
        assert overflowing == [], f"cut off or overflowing at {viewport['width']}: {overflowing}"
        if viewport["width"] == 1366:
            scroll = page.locator(".table-and-plot .scroll")
            assert scroll.evaluate("(box) => box.scrollWidth <= box.clientWidth + 1")  # no column cut off
            shot(page, "dashboard-overview-attention")


def test_the_pilot_card_reads_on_a_phone_and_a_laptop(open_as, staff_session, sst2):
    from annotation.models import Study
    from annotation.services.studies import studies

    study = make_study(sst2, shots=(0, 10), slug="piloting", status=Study.Status.DRAFT, workers_per_condition=3)
    studies.study_update(study=study, pilot_workers_per_condition=1)
    studies.change_status(study=study, to_status=Study.Status.OPEN, pilot=True)
    gold = gold_answers(sst2)
    add_annotator(study, 0, answers=gold)
    add_annotator(study, 10, answers=[g if i < 2 else wrong(g, sst2) for i, g in enumerate(gold)])
    for viewport, name in (({"width": 390, "height": 844}, "phone"), ({"width": 1366, "height": 900}, "desktop")):
        page = open_as(None, path="/dashboard/study/piloting/", cookies=staff_session, viewport=viewport)
        card = page.locator("#pilot")
        assert card.is_visible() and "Pilot: 1 of 3" in card.locator("h2").inner_text()
        assert card.locator("table.pilot-plan tbody tr").count() == 2
        assert page.evaluate(FITS) and page.evaluate(OVERFLOWING) == []
        assert not page.js_errors
        shot(page, f"dashboard-pilot-{name}")
