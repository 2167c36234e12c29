"""The README's dashboard picture, taken on the bundled demo with answers written by the test builders.

The shot lands in test-artifacts/screenshots/readme-dashboard.png and is copied to docs/img/ by hand; the
test checks what the picture shows, so a broken page does not make a pretty picture.
"""

import random

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Participation, Study
from tests.reporting.builders import add_annotator, gold_answers, wrong
from tests.worker.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State


def test_the_dashboard_of_a_running_demo_study(open_as, staff_session):
    call_command("load_demo", stdout=None)
    study = Study.objects.get(slug="demo-sst2")
    task = study.task
    gold = gold_answers(task)
    rng = random.Random(7)
    for shots, right in ((0, (0.6, 0.75, 0.7)), (10, (0.85, 0.8, 0.9)), (20, (0.9, 0.85))):
        for n, share in enumerate(right):
            answers = [g if rng.random() < share else wrong(g, task) for g in gold]
            add_annotator(study, shots, answers=answers, worker_id=f"w{shots}-{n}")
    at_work = add_annotator(study, 30, answers=gold[:3], state=State.TEST, worker_id="at-work")
    Participation.objects.filter(pk=at_work.pk).update(last_activity_at=timezone.now())  # working right now
    page = open_as(
        None, path="/dashboard/study/demo-sst2/", cookies=staff_session, viewport={"width": 1280, "height": 900}
    )
    page.locator("img.plot").evaluate("img => img.complete || new Promise(r => img.onload = r)")
    page.wait_for_function("() => document.getElementById('live-stamp').textContent.includes('updated')")
    assert page.locator('[data-cond="demo-sst2:10"] [data-f="completed"]').inner_text() == "3"
    assert "[" in page.locator("table.perf").inner_text()  # the cells carry their intervals
    glance = page.locator(".glance").inner_text()
    # The demo screens nobody (no integrity rule): the one thing that needs attention, and the page says so.
    assert "Quality controls are off: No integrity rule" in glance and "stuck" not in glance
    shot(page, "readme-dashboard", full_page=False, always=True)  # the first view, as a researcher sees it
