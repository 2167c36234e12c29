"""The study page during a pilot: the pilot's results per condition and the planning figures from them."""

import re
import statistics
from html import unescape

import pytest

from annotation.models import Study
from annotation.reporting import planning
from annotation.services.studies import studies
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

pytestmark = pytest.mark.django_db


@pytest.fixture
def piloting(sst2):
    study = make_study(sst2, shots=(0, 10), slug="piloting", status=Study.Status.DRAFT, workers_per_condition=3)
    studies.study_update(study=study, pilot_workers_per_condition=1)
    studies.change_status(study=study, to_status=Study.Status.OPEN, pilot=True)
    return study


def _cells(page: str, table: str) -> list[list[str]]:
    body = re.search(rf'<table class="{table}">(.*?)</table>', page, re.S)
    assert body, table
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S)
    return [[unescape(c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)] for r in rows]


def test_the_pilot_card_shows_the_pilots_results_and_the_plan(admin_client, piloting, sst2):
    gold = gold_answers(sst2)
    add_annotator(piloting, 0, answers=[g if i < 3 else wrong(g, sst2) for i, g in enumerate(gold)])  # 3 of 4
    add_annotator(piloting, 10, answers=gold)  # 4 of 4
    page = admin_client.get("/dashboard/study/piloting/").content.decode()

    assert "Pilot: 1 of 3 workers per condition" in page
    assert "manage.py check_study piloting --open-rest" in page
    rows = _cells(page, "pilot-plan")
    header, body = rows[0], rows[1:]
    assert header[:3] == ["shots", "pilot workers", "their mean S1"]
    assert header[3:] == ["3 workers (design)", "5 workers", "10 workers"]
    # Each condition's pilot: one completed worker, their test S1 (share of the 4 items right), as a mean.
    assert [r[:3] for r in body] == [["0", "1", f"{100 * statistics.fmean([0.75]):.1f}"], ["10", "1", "100.0"]]
    # The widths are the plan's, with the page's simulation counts: plan_study with them gives the same figures.
    plan = planning.plan_for_study(
        Study.objects.get(pk=piloting.pk),
        workers=(3, 5, 10),
        simulations=planning.PILOT_SIMULATIONS,
        resamples=planning.PILOT_RESAMPLES,
    )
    assert [r[3:] for r in body] == [[str(c.widths[n]) for n in (3, 5, 10)] for c in plan.cells]
    costs = _cells(page, "pilot-gaps")[-1]
    assert costs[0] == "cost" and costs[1:] == [str(plan.costs[n]) for n in (3, 5, 10)]
    assert "--workers 3,5,10 --simulations 40 --resamples 200" in page


def test_before_any_pilot_worker_completes_the_card_says_why_there_is_no_plan(admin_client, piloting):
    page = admin_client.get("/dashboard/study/piloting/").content.decode()
    assert "Pilot: 1 of 3 workers per condition" in page
    assert "has no completed pilot worker yet" in page and 'class="pilot-plan"' not in page


def test_after_the_rest_opens_the_card_gives_way_to_a_line(admin_client, piloting):
    studies.change_status(study=piloting, to_status=Study.Status.OPEN, rest=True)
    page = admin_client.get("/dashboard/study/piloting/").content.decode()
    assert 'id="pilot"' not in page and "the rest opened" in page


def test_a_study_never_piloted_shows_no_pilot(admin_client, sst2):
    make_study(sst2, shots=(0,), slug="plain", status=Study.Status.OPEN)
    page = admin_client.get("/dashboard/study/plain/").content.decode()
    assert 'id="pilot"' not in page and "pilot-past" not in page


def test_a_complete_pilot_is_a_notice_not_a_finished_study(admin_client, piloting, sst2):
    gold = gold_answers(sst2)
    add_annotator(piloting, 0, answers=gold)
    add_annotator(piloting, 10, answers=gold)
    page = admin_client.get("/dashboard/study/piloting/").content.decode()
    assert "The pilot is complete (2 workers)" in page
    assert "Every slot is completed" not in page
