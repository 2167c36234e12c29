"""A running rehearsal in a real browser updates in place (rehearsal.js, no inline script) until its report
links show. The button itself, with the real engine in a process of its own, is test_rehearsal_button's."""

import pytest

from annotation.models import RehearsalJob
from tests.reporting.builders import make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
Status = RehearsalJob.Status


@pytest.fixture
def study(sst2):
    return make_study(sst2, shots=(0, 10), slug="rehearsed", status="open")


def test_a_running_rehearsal_updates_in_place_until_done(open_as, staff_session, study):
    job = RehearsalJob.objects.create(
        study=study, status=Status.RUNNING, attempts=1, progress={"done": 1, "total": None}, log="scratch database"
    )
    # The page's clock is moved past each poll (rehearsal.js asks every 5 s) instead of waiting for it.
    page = open_as(None, path="/dashboard/study/rehearsed/", cookies=staff_session, clock=True)
    row = page.locator("table.rehearsals tbody tr").first
    assert "1 step" in row.inner_text() and not row.locator('[data-r="links"]').is_visible()
    page.evaluate("() => { window.__sameDocument = true; }")
    RehearsalJob.objects.filter(pk=job.pk).update(progress={"done": 4, "total": None}, log="a\nfilling the conditions")
    page.clock.run_for(5_000)
    page.wait_for_function(
        "() => document.querySelector('[data-r=\"steps\"]').textContent === '4 steps'", timeout=15_000
    )
    assert row.locator('[data-r="last_line"]').inner_text() == "filling the conditions"
    RehearsalJob.objects.filter(pk=job.pk).update(status=Status.DONE, passed=False, report_markdown="# report")
    page.clock.run_for(5_000)
    page.wait_for_function("() => !document.querySelector('[data-r=\"links\"]').hidden", timeout=15_000)
    assert "some invariants fail" in row.inner_text() and row.get_attribute("class") == "status-done"
    assert page.evaluate("() => window.__sameDocument === true")
    assert not page.js_errors
