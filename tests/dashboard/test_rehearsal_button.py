"""The study page's Rehearse button: a background job (annotation.reporting.rehearsal_jobs) with its progress
and its report. The engine is named by REHEARSAL_ENGINE: here a light stand-in (tests/dashboard/rehearsal_engine)."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import RehearsalJob
from annotation.reporting.rehearsal_jobs import rehearsal_jobs_sweep
from tests.reporting.builders import make_study

pytestmark = pytest.mark.django_db
Status = RehearsalJob.Status
ENGINE = "tests.dashboard.rehearsal_engine."


@pytest.fixture(autouse=True)
def stand_in_engine(settings):
    settings.REHEARSAL_ENGINE = ENGINE + "rehearse"


@pytest.fixture
def study(sst2):
    return make_study(sst2, shots=(0, 10), slug="rehearsed")


@pytest.fixture
def staff(client):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    return client


def rehearse(client, study, capture, **data):
    with capture(execute=True):  # the task is sent after commit; Celery runs it eagerly in the tests
        return client.post(reverse("dashboard:rehearse", args=[study.slug]), data)


def test_the_button_queues_a_rehearsal_that_runs_and_leaves_its_report(
    staff, study, django_capture_on_commit_callbacks
):
    page = staff.get(reverse("dashboard:study", args=[study.slug])).content.decode()
    assert 'action="/dashboard/study/rehearsed/rehearse/"' in page and "csrfmiddlewaretoken" in page
    assert "dashboard/rehearsal.js" in page and "<script>" not in page and "style=" not in page

    response = rehearse(staff, study, django_capture_on_commit_callbacks, workers_per_condition="2", seed="7")
    assert response.status_code == 302 and response["Location"].endswith("/dashboard/study/rehearsed/#rehearsal")
    job = RehearsalJob.objects.get()
    assert (job.status, job.study, job.workers_per_condition, job.seed) == (Status.DONE, study, 2, 7)
    assert job.created_by.username == "boss" and job.passed is True
    assert job.progress == {"done": 2, "total": None}
    assert job.log == "scratch database: sqlite (stand-in)\nfilling the conditions"
    assert json.loads(job.report_json) == {"study": "rehearsed", "passed": True, "seed": 7, "workers_per_condition": 2}

    page = staff.get(reverse("dashboard:study", args=[study.slug])).content.decode()
    assert f"Rehearsal #{job.pk} of rehearsed queued." in page
    assert "every invariant holds" in page and "2 steps" in page and "filling the conditions" in page
    markdown = staff.get(reverse("dashboard:rehearsal-report", args=[job.pk, "markdown"]))
    assert markdown["Content-Disposition"] == f'attachment; filename="rehearsed_rehearsal-{job.pk}.md"'
    assert markdown.content.decode().startswith("# Rehearsal of rehearsed: every invariant holds")
    as_json = staff.get(reverse("dashboard:rehearsal-report", args=[job.pk, "json"]))
    assert as_json["Content-Type"].startswith("application/json") and json.loads(as_json.content)["seed"] == 7


def test_a_running_rehearsal_shows_its_progress_and_the_page_polls_it(staff, study):
    job = RehearsalJob.objects.create(
        study=study,
        status=Status.RUNNING,
        attempts=1,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        progress={"done": 3, "total": None},
        log="scratch database: sqlite\nfilling the conditions",
    )
    status_url = reverse("dashboard:rehearsal-status", args=[job.pk])
    page = staff.get(reverse("dashboard:study", args=[study.slug])).content.decode()
    assert f'data-rehearsal-url="{status_url}"' in page and "3 steps" in page
    status = staff.get(status_url)
    assert status["Cache-Control"] == "no-store"
    assert status.json() == {
        "id": job.pk,
        "study": "rehearsed",
        "status": "running",
        "status_display": "Running",
        "progress": {"done": 3, "total": None},
        "last_line": "filling the conditions",
        "passed": None,
        "error": "",
        "done": False,
    }
    assert staff.get(reverse("dashboard:rehearsal-report", args=[job.pk, "markdown"])).status_code == 404


def test_one_rehearsal_of_a_study_at_a_time(staff, study, django_capture_on_commit_callbacks):
    RehearsalJob.objects.create(study=study)  # queued, its worker not yet there
    response = rehearse(staff, study, django_capture_on_commit_callbacks)
    assert RehearsalJob.objects.count() == 1
    page = staff.get(response["Location"]).content.decode()
    assert "a rehearsal of rehearsed is already queued" in page


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"workers_per_condition": "two"}, "workers per condition must be a whole number"),
        ({"workers_per_condition": "0"}, "workers per condition must be between 1 and 50"),
        ({"seed": "-3"}, "the seed must be a non-negative integer"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_queued(staff, study, django_capture_on_commit_callbacks, data, message):
    response = rehearse(staff, study, django_capture_on_commit_callbacks, **data)
    assert not RehearsalJob.objects.exists()
    assert message in staff.get(response["Location"]).content.decode()


def test_an_engine_that_fails_fails_the_job_with_the_reason(staff, study, settings, django_capture_on_commit_callbacks):
    settings.REHEARSAL_ENGINE = ENGINE + "failing"
    rehearse(staff, study, django_capture_on_commit_callbacks)
    job = RehearsalJob.objects.get()
    assert (job.status, job.error) == (Status.FAILED, "RuntimeError: the scratch server did not answer within 60 s")
    assert job.log == "scratch database: sqlite (stand-in)"
    page = staff.get(reverse("dashboard:study", args=[study.slug])).content.decode()
    assert "the scratch server did not answer within 60 s" in page
    assert staff.get(reverse("dashboard:rehearsal-report", args=[job.pk, "json"])).status_code == 404


def test_only_staff_may_rehearse_or_read_a_rehearsal(client, study, django_capture_on_commit_callbacks):
    job = RehearsalJob.objects.create(study=study, status=Status.DONE, report_markdown="# secret")
    status_url = reverse("dashboard:rehearsal-status", args=[job.pk])
    assert rehearse(client, study, django_capture_on_commit_callbacks).status_code == 403  # anonymous
    assert client.get(status_url).status_code == 403
    User.objects.create_user("worker", "w@example.org", "pw")
    client.login(username="worker", password="pw")
    assert rehearse(client, study, django_capture_on_commit_callbacks).status_code == 403
    assert client.get(status_url).status_code == 403
    report = client.get(reverse("dashboard:rehearsal-report", args=[job.pk, "markdown"]))
    assert report.status_code == 302 and "/login/" in report["Location"]  # the admin's login, like every page
    assert RehearsalJob.objects.count() == 1


def test_the_button_needs_the_csrf_token(study):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    strict = Client(enforce_csrf_checks=True)
    strict.login(username="boss", password="pw")
    assert strict.post(reverse("dashboard:rehearse", args=[study.slug])).status_code == 403
    assert not RehearsalJob.objects.exists()


def test_a_rehearsal_whose_worker_died_is_failed_not_started_again(study, settings):
    settings.REHEARSAL_STALE_SECONDS = 60
    beat = timezone.now() - timedelta(seconds=120)
    job = RehearsalJob.objects.create(
        study=study, status=Status.RUNNING, attempts=1, started_at=beat, heartbeat_at=beat
    )
    result = rehearsal_jobs_sweep()
    assert (result.requeued, result.failed) == ([], [job.pk])
    job.refresh_from_db()
    assert job.status == Status.FAILED and job.error.startswith("gave up after 1 attempt(s)")
