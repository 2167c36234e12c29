"""Every CSV is a plain header-first table; its provenance is a JSON sidecar (file, job, download)."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.models import ExportJob
from annotation.reporting.exports import CSV_KINDS, export_filename, export_job_create, export_with_provenance
from annotation.reporting.options import MetricOptions
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

EXPECTED_FIRST_COLUMN = {
    "table-csv": "source",
    "training-csv": "pair",
    "annotators-csv": "study",
    "payments-csv": "platform",
    "survey-csv": "study",
    "attention-csv": "study",
    "integrity-csv": "study",
    "fewclue-csv": "row",  # needs FewCLUE's tasks: checked in tests/reporting/test_fewclue_table.py
}
ON_SST2 = sorted(set(EXPECTED_FIRST_COLUMN) - {"fewclue-csv"})


@pytest.fixture
def study(sst2):
    s = make_study(sst2, shots=(0, 10), slug="plain-csv")
    gold = gold_answers(sst2)
    for n in (4, 3, 2):
        add_annotator(s, 0, answers=[g if i < n else wrong(g, sst2) for i, g in enumerate(gold)])
    return s


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    return client


def test_every_csv_kind_is_checked_here():
    assert set(EXPECTED_FIRST_COLUMN) == CSV_KINDS


@pytest.mark.parametrize("kind", ON_SST2)
def test_a_csv_export_is_a_plain_table_that_csv_reader_and_pandas_read_as_is(study, kind):
    content, provenance = export_with_provenance(kind=kind, studies=[study], options=MetricOptions())
    text = content.decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == EXPECTED_FIRST_COLUMN[kind]
    assert not any(line.startswith("#") for line in text.splitlines())
    assert all(len(row) == len(rows[0]) for row in rows)  # no comment or note line among the data
    # The provenance went to the sidecar instead, with the notes a table prints.
    assert provenance["export"] == kind and provenance["studies"][0]["slug"] == "plain-csv"
    assert provenance["notes"] and provenance["metric_options"] == MetricOptions().as_dict()


def test_a_queued_csv_job_keeps_its_provenance_and_the_api_links_it(
    admin_client, study, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/api/reports/exports/", {"kind": "table-csv", "studies": ["plain-csv"]}, content_type="application/json"
        )
    status = admin_client.get(response.json()["status_url"]).json()
    assert status["status"] == "done"
    table = admin_client.get(status["download_url"])
    assert b"".join(table.streaming_content).decode().startswith("source,model,shots,")
    sidecar = admin_client.get(status["provenance_url"])
    assert sidecar.status_code == 200 and sidecar["Content-Type"] == "application/json"
    assert sidecar["Content-Disposition"].endswith('.csv.provenance.json"')
    meta = json.loads(sidecar.content)
    assert meta["export"] == "table-csv" and len(meta["studies"][0]["task_data_sha256"]) == 64


def test_a_job_not_done_has_no_provenance(admin_client, study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        job = export_job_create(kind="table-csv", study_refs=["plain-csv"], options=MetricOptions())
    assert admin_client.get(f"/dashboard/exports/{job.pk}/provenance/").status_code == 404
    assert admin_client.get(f"/api/reports/exports/{job.pk}/").json()["provenance_url"] is None
    assert ExportJob.objects.get(pk=job.pk).provenance is None


def test_a_direct_csv_download_links_its_provenance(admin_client, study):
    response = admin_client.get("/dashboard/export/payments-csv/?studies=plain-csv")
    assert response.content.decode().startswith("platform,worker_id,")
    link = response["Link"]
    assert link.startswith("</dashboard/export/payments-csv/provenance/?studies=plain-csv>")
    assert 'rel="describedby"' in link
    sidecar = admin_client.get("/dashboard/export/payments-csv/provenance/?studies=plain-csv")
    assert json.loads(sidecar.content)["export"] == "payments-csv"
    assert "Link" not in admin_client.get("/dashboard/export/table-json/?studies=plain-csv")


def test_the_dashboard_shows_where_the_provenance_went(admin_client, study):
    page = admin_client.get("/dashboard/study/plain-csv/").content.decode()
    assert "/dashboard/export/table-csv/provenance/" in page and "plain tables" in page


def test_the_command_writes_the_sidecar_beside_the_csv(study, tmp_path):
    out = tmp_path / "table.csv"
    call_command("human_performance", "--study", "plain-csv", "--format", "csv", "--output", str(out))
    assert out.read_text().startswith("source,model,shots,")
    meta = json.loads((tmp_path / "table.csv.provenance.json").read_text())
    assert meta["export"] == "table-csv" and any("S1" in note for note in meta["notes"])


def test_a_failed_csv_write_leaves_no_sidecar(study, tmp_path):
    out = tmp_path / "missing" / "table.csv"
    with pytest.raises(Exception, match="does not exist"):
        call_command("human_performance", "--study", "plain-csv", "--format", "csv", "--output", str(out))
    assert not list(tmp_path.rglob("*.provenance.json"))


def test_an_export_over_many_studies_is_named_for_all_of_them(sst2):
    studies = [make_study(sst2, shots=(0,), slug=f"s{i}") for i in range(6)]
    assert export_filename("table-csv", studies, stamp=False) == "6-studies_table-csv.csv"
    assert export_filename("table-csv", studies[:3], stamp=False) == "s0-s1-s2_table-csv.csv"
