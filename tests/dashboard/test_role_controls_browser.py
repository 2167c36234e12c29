"""An assistant's study page in a real browser: no button the role may not press, a note where one would be,
and the one form it has (queue an export) answers with the queued job, not a 403 (docs/team.md)."""

import pytest
from django.test import Client

from annotation.models import ExportJob
from tests.reporting.builders import add_annotator, gold_answers, make_study
from tests.team import team_member
from tests.worker.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_assistant_sees_only_what_it_may_press(open_as, settings, sst2):
    settings.PROLIFIC_API_TOKEN = "on"  # the integration on: its links are shown to the roles that may
    study = make_study(sst2, shots=(0,), slug="watched", name="Watched, split 1", status="open")
    add_annotator(study, 0, answers=gold_answers(sst2))
    client = Client()
    client.force_login(team_member("cleo", "assistant"))
    session = [{"name": "sessionid", "value": client.cookies["sessionid"].value}]
    page = open_as(None, path="/dashboard/study/watched/", cookies=session)

    assert page.locator("form[action$='/rehearse/']").count() == 0
    note = page.locator("#rehearsal .role-note")
    assert note.inner_text() == "Rehearsing is for a researcher or a principal investigator."
    prolific = page.locator(".prolific")
    assert prolific.locator("a").count() == 0
    assert "pay bonuses (a principal investigator)" in prolific.inner_text()
    shown = page.locator(".exports a").evaluate_all("links => links.map(a => a.pathname)")
    assert "/dashboard/export/table-csv/" in shown
    assert not [path for path in shown if "payments-csv" in path or "annotations-jsonl" in path]
    options = page.locator(".exports select[name=kind] option").all_inner_texts()
    assert "table-csv" in options and "payments-csv" not in options
    shot(page, "dashboard-study-assistant")

    page.locator(".exports select[name=kind]").select_option("table-csv")
    page.get_by_role("button", name="Queue").click()
    page.wait_for_load_state()
    job = ExportJob.objects.get()
    assert page.locator(".dash-messages").inner_text() == f"Export #{job.pk} (table-csv) queued."
    assert not page.js_errors
