"""CLUES and FewCLUE studies in one database: each benchmark's tables hold only its own tasks, and
``--all`` (``studies=all``) means all of that benchmark's studies (issue 40, item 3)."""

import json

import pytest
from django.core.management import call_command

from annotation.reporting.options import ReportError
from annotation.reporting.selection import select_studies
from tests.factories import make_classification_task
from tests.reporting.builders import add_annotator, gold_answers, make_study


@pytest.fixture
def both(sst2):
    """A CLUES-shaped study with one completed worker, and a FewCLUE study (EPRSTMT) with one."""
    clues = make_study(sst2, shots=(0,), slug="clues-sst2-split1")
    add_annotator(clues, 0, answers=gold_answers(sst2))
    eprstmt = make_classification_task(slug="fewclue-eprstmt", labels=("Positive", "Negative"), n_test=4)
    few = make_study(eprstmt, shots=(30,), slug="fewclue-eprstmt-paper", protocol="fewclue-paper")
    add_annotator(few, 30, answers=gold_answers(eprstmt))
    return clues, few


def test_all_means_all_of_the_benchmarks_studies(both):
    clues, few = both
    assert select_studies(all_studies=True, benchmark="fewclue") == [few]
    assert select_studies(all_studies=True, benchmark="clues") == [clues]
    assert set(select_studies(all_studies=True)) == {clues, few}


def test_a_benchmark_without_studies_is_a_clear_error(sst2):
    make_study(sst2, shots=(0,), slug="only-clues")
    with pytest.raises(ReportError, match="no studies of fewclue tasks"):
        select_studies(all_studies=True, benchmark="fewclue")


def test_the_readmes_fewclue_command_runs_beside_a_clues_study(both, capsys):
    call_command("human_performance", "--all", "--benchmark", "fewclue", "--format", "json")
    table = json.loads(capsys.readouterr().out)["table"]
    assert [t["slug"] for t in table["tasks"]][0] == "fewclue-eprstmt"
    assert table["rows"][0]["cells"]["fewclue-eprstmt"]["text"] == "100.0 ± 0.0"


def test_the_clues_table_holds_no_fewclue_task(both, capsys):
    call_command("human_performance", "--all", "--format", "json")
    payload = json.loads(capsys.readouterr().out)
    assert [t["slug"] for t in payload["table"]["tasks"]] == ["sst2-fixture"]


def test_the_api_table_of_all_studies_is_the_benchmarks(both, admin_client):
    clues = admin_client.get("/api/reports/table/?studies=all").json()
    assert [t["slug"] for t in clues["tasks"]] == ["sst2-fixture"] and clues["studies"] == ["clues-sst2-split1"]
    few = admin_client.get("/api/reports/table/?studies=all&benchmark=fewclue").json()
    assert few["studies"] == ["fewclue-eprstmt-paper"]


def test_the_dashboard_shows_each_benchmarks_table_and_the_plot_only_cluess(both, admin_client):
    page = admin_client.get("/dashboard/").content.decode()
    clues_part, _, few_part = page.partition('id="fewclue"')
    clues_table = clues_part.split('<table class="perf">')[1].split("</table>")[0]
    assert "SST-2" in clues_table and "EPRSTMT" not in clues_table and ">Other<" not in clues_table
    assert "EPRSTMT" in few_part and "Human (majority vote)" in few_part
    svg = admin_client.get("/dashboard/plot.svg?studies=all").content.decode()
    assert "SST-2" in svg and "EPRSTMT" not in svg
