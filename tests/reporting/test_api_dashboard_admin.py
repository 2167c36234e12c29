"""Reports API permission matrix and behaviour; staff dashboard; export and model-run admin."""

import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import ExportJob, ModelRun
from tests.reporting.builders import add_annotator, gold_answers, items_of, make_study, wrong


@pytest.fixture
def study(sst2):
    s = make_study(sst2, shots=(0, 10), slug="api-study")
    gold = gold_answers(sst2)
    for n in (4, 3, 2):
        add_annotator(s, 0, answers=[g if i < n else wrong(g, sst2) for i, g in enumerate(gold)])
    return s


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    return client


@pytest.fixture
def worker_client(client, study):
    """A crowd worker's browser: the worker cookie of a participation, no staff user."""
    from tests.worker.conftest import login

    return login(client, study.participations.first())


@pytest.fixture
def user_client(client, db):
    User.objects.create_user("someone", password="pw")
    client.login(username="someone", password="pw")
    return client


REPORT_URLS = [
    ("get", "/api/reports/table/?studies=api-study"),
    ("get", "/api/reports/annotators/?studies=api-study"),
    ("get", "/api/reports/statement/?study=api-study"),
    ("post", "/api/reports/exports/"),
    ("get", "/api/reports/exports/1/"),
]


@pytest.mark.parametrize(("method", "url"), REPORT_URLS)
@pytest.mark.parametrize("who", ["anonymous", "worker", "user"])
def test_reports_api_is_for_admins_only(request, study, method, url, who):
    client = request.getfixturevalue("client" if who == "anonymous" else f"{who}_client")
    body = {"kind": "table-csv", "studies": ["api-study"]} if method == "post" else None
    response = getattr(client, method)(url, body, content_type="application/json")
    assert response.status_code in (401, 403)
    assert not ExportJob.objects.exists()


def test_admin_gets_the_table_json(admin_client, study):
    data = admin_client.get("/api/reports/table/?studies=api-study&ddof=1").json()
    assert data["rows"][0]["cells"]["sst2-fixture"]["text"] == "75.0 ± 25.0"
    assert data["options"] == {"skip_policy": "zero", "ddof": 1}
    assert data["rows"][1]["cells"]["sst2-fixture"]["mean"] is None


def test_admin_gets_annotator_scores(admin_client, study):
    rows = admin_client.get("/api/reports/annotators/?studies=api-study").json()
    assert sorted(r["test_s1"] for r in rows) == [0.5, 0.75, 1.0]
    assert rows[0]["pay"] == "6.00"


@pytest.mark.parametrize(
    ("query", "message"), [("studies=nope", "unknown study"), ("studies=api-study&ddof=3", "ddof")]
)
def test_api_bad_queries_answer_400_with_the_reason(admin_client, study, query, message):
    response = admin_client.get(f"/api/reports/table/?{query}")
    assert response.status_code == 400 and message in response.json()["detail"]


def test_admin_requests_an_export_and_follows_its_status(admin_client, study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/api/reports/exports/",
            {"kind": "table-markdown", "studies": ["api-study"]},
            content_type="application/json",
        )
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["status_url"].endswith(f"/api/reports/exports/{body['id']}/")
    status = admin_client.get(body["status_url"]).json()
    assert status["status"] == "done" and status["download_url"]
    download = admin_client.get(status["download_url"])
    assert b"75.0 \xc2\xb1 20.4" in b"".join(download.streaming_content)


def test_api_export_request_errors(admin_client, study):
    assert (
        admin_client.post(
            "/api/reports/exports/", {"kind": "pdf", "studies": ["api-study"]}, content_type="application/json"
        ).status_code
        == 400
    )
    response = admin_client.post(
        "/api/reports/exports/", {"kind": "table-csv", "studies": ["nope"]}, content_type="application/json"
    )
    assert response.status_code == 400 and "unknown study" in response.json()["detail"]
    assert admin_client.get("/api/reports/exports/999/").status_code == 404
    assert not ExportJob.objects.exists()


def test_schema_documents_the_reports_api(admin_client):
    schema = admin_client.get("/api/schema/?format=json").content.decode()
    assert "/api/reports/table/" in schema and "reports_export_create" in schema


@pytest.mark.parametrize("who", ["anonymous", "worker", "user"])
def test_dashboard_is_staff_only(request, study, who):
    client = request.getfixturevalue("client" if who == "anonymous" else f"{who}_client")
    for url in (
        "/dashboard/",
        "/dashboard/study/api-study/",
        "/dashboard/plot.svg?studies=all",
        "/dashboard/export/annotations-jsonl/?studies=api-study",
    ):
        response = client.get(url)
        if who == "user":  # signed in, on no team: Django's 403 page (annotation.web.roles)
            assert response.status_code == 403
        else:
            assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_dashboard_pages_show_progress_table_plot_and_export_links(admin_client, study):
    page = admin_client.get("/dashboard/").content.decode()
    assert "75.0 ± 20.4" in page and "api-study" in page and "plot.svg" in page
    assert "/dashboard/export/table-latex/?studies=all" in page
    detail = admin_client.get("/dashboard/study/api-study/").content.decode()
    assert "75.0 ± 20.4" in detail and "Pay per condition" in detail and "annotations-jsonl" in detail
    assert "Majority vote" in detail and "Fleiss’ κ" in detail and "fleiss_kappa" not in detail
    assert "Hardest test items" in detail and "Confidence against correctness" in detail and "Time per item" in detail
    svg = admin_client.get("/dashboard/plot.svg?studies=api-study")
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    raw = b"".join(admin_client.get("/dashboard/export/annotations-jsonl/?studies=api-study").streaming_content)
    assert len(raw.decode().splitlines()) == 1 + 12
    assert admin_client.get("/dashboard/export/table-csv/?studies=nope").status_code == 400


def test_dashboard_queues_an_export(admin_client, study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/dashboard/exports/queue/", {"kind": "plot-png", "studies": "api-study"})
    assert response.status_code == 302
    job = ExportJob.objects.get()
    assert job.status == "done" and job.file.read(4) == b"\x89PNG"


def test_admin_add_pages_render(admin_client, study):
    for name in (
        "admin:annotation_exportjob_add",
        "admin:annotation_modelrun_add",
        "admin:annotation_exportjob_changelist",
        "admin:annotation_modelrun_changelist",
    ):
        assert admin_client.get(reverse(name)).status_code == 200, name


def test_admin_add_form_queues_an_export_and_lists_it(admin_client, study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:annotation_exportjob_add"), {"kind": "payments-csv", "studies": [study.pk], "ddof": "0"}
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    job = ExportJob.objects.get()
    assert job.status == "done"
    listing = admin_client.get(reverse("admin:annotation_exportjob_changelist")).content.decode()
    assert "download" in listing and "api-study" in listing


def test_admin_model_run_upload_validates_the_file(admin_client, study, sst2):
    ids = [e.source_id for e in items_of(sst2)]
    bad = SimpleUploadedFile("p.json", json.dumps({"zzz": ["positive"]}).encode())
    response = admin_client.post(
        reverse("admin:annotation_modelrun_add"), {"task": sst2.pk, "name": "m", "predictions_file": bad}
    )
    assert response.status_code == 200 and "unknown test ids" in response.content.decode()
    assert not ModelRun.objects.exists()
    good = SimpleUploadedFile("p.json", json.dumps(dict(zip(ids, gold_answers(sst2), strict=True))).encode())
    response = admin_client.post(
        reverse("admin:annotation_modelrun_add"), {"task": sst2.pk, "name": "m", "shots": "0", "predictions_file": good}
    )
    assert response.status_code == 302
    run = ModelRun.objects.get()
    assert run.name == "m" and len(run.predictions) == 4
    assert "100.0" in admin_client.get(reverse("admin:annotation_modelrun_changelist")).content.decode()


def test_admin_shows_a_failed_job_with_its_reason_and_requeues_it(
    admin_client, study, django_capture_on_commit_callbacks
):
    from annotation.reporting.exports import export_job_run

    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk + 500]})
    export_job_run(job_id=job.pk)
    page = admin_client.get(reverse("admin:annotation_exportjob_change", args=[job.pk])).content.decode()
    assert "Failed" in page and "unknown study" in page
    job.params = {"studies": [study.pk]}
    job.save()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:annotation_exportjob_changelist"), {"action": "requeue", "_selected_action": [job.pk]}
        )
    assert response.status_code == 302
    assert ExportJob.objects.exclude(pk=job.pk).get().status == "done"


def test_dashboard_options_keep_each_other_and_show_coverage_and_items(admin_client, study):
    page = admin_client.get("/dashboard/study/api-study/?ddof=1").content.decode()
    assert 'href="?skip_policy=exclude&amp;ddof=1"' in page and "<strong>sample</strong>" in page
    assert 'href="?skip_policy=empty&amp;ddof=1"' in page and "<strong>score 0</strong>" in page
    assert "answered</small>" not in page  # coverage only when skips are excluded
    assert "skip policy &#x27;zero&#x27;: a skipped item scores 0" in page  # the sentence under the table
    page = admin_client.get("/dashboard/study/api-study/?exclude_skips=1").content.decode()  # an old link
    assert "100.0% answered" in page and '<option value="exclude" selected>' in page
    # workers on the table's 0-100 scale; the hardest item listed with its question and gold
    assert "<td>75.0</td>" in page and "<td>50.0</td>" in page
    assert "<td>0.500</td>" not in page
    assert "Sentence" in page and "<th>Question</th>" in page
    index = admin_client.get("/dashboard/?ddof=1").content.decode()
    assert 'href="?skip_policy=exclude&amp;ddof=1"' in index and "75.0 ± 25.0" in index
