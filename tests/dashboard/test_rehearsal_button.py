"""The study page's Rehearse button: a background job (annotation.reporting.rehearsal_jobs) with its progress
and its report. The first test runs the app as the demo deploys it (a server on a database of its own, Celery
eager) and presses the button as a researcher does: the POST returns at once, the real engine rehearses the
demo study in a process of its own, and the job ends with its report. The others pin the page, the refusals
and the recovery on jobs written as the engine leaves them."""

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import RehearsalJob
from annotation.rehearsal.runner import free_port
from annotation.rehearsal.scratch import create_scratch
from annotation.reporting.rehearsal_jobs import rehearsal_jobs_sweep
from tests.reporting.builders import make_study

pytestmark = pytest.mark.django_db
Status = RehearsalJob.Status
MANAGE = Path(__file__).resolve().parents[2] / "manage.py"


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


class Site:
    """A browser's session with the server: cookies, and the CSRF token of the last page read."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode()

    def post(self, path: str, data: dict[str, str], *, token_from: str) -> str:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', token_from).group(1)
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}).encode()
        request = urllib.request.Request(self.base + path, data=body, headers={"Referer": self.base + path})
        with self.opener.open(request, timeout=30) as response:
            return response.read().decode()


def _until(predicate, *, seconds: float, every: float, what: str):
    """Wait for a real process (a server starting, a rehearsal running): no clock to move there."""
    deadline, pause = time.monotonic() + seconds, threading.Event()
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        pause.wait(every)
    pytest.fail(f"{what}: not within {seconds:.0f} s")


@pytest.mark.django_db(transaction=True)  # a PostgreSQL server database is created outside a transaction
@pytest.mark.timeout(600)
def test_the_button_rehearses_the_demo_in_the_background_with_the_real_engine(tmp_path):
    db = create_scratch(directory=tmp_path)  # the demo's own database, of the kind the suite runs on
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "REHEARSAL_"))}
    env.update(DJANGO_SETTINGS_MODULE="annotation.settings.base", DEBUG="1", DATABASE_URL=db.url)
    server = None
    try:
        for args in (
            ["migrate", "-v0"],
            ["load_demo"],
            ["ensure_admin", "--username", "boss", "--password", "a-long-password-1"],
        ):
            done = subprocess.run([sys.executable, str(MANAGE), *args], env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
        port = free_port()
        with open(tmp_path / "server.log", "wb") as log:
            server = subprocess.Popen(
                [sys.executable, str(MANAGE), "runserver", "--noreload", f"127.0.0.1:{port}"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        site = Site(port)

        def answers() -> bool:
            try:
                return bool(site.get("/admin/login/"))
            except OSError:
                return False

        _until(answers, seconds=60, every=0.2, what="the server answering")
        login = site.get("/admin/login/?next=/dashboard/")
        site.post(
            "/admin/login/?next=/dashboard/", {"username": "boss", "password": "a-long-password-1"}, token_from=login
        )
        page = site.get("/dashboard/study/demo-sst2/")
        assert "Nothing blocks the launch." in page  # the demo ships ready: a posted reward, no placeholder

        started = time.monotonic()
        page = site.post(
            "/dashboard/study/demo-sst2/rehearse/", {"workers_per_condition": "1", "seed": "3"}, token_from=page
        )
        assert time.monotonic() - started < 10  # the redirect and the page, not a rehearsal (a minute or more)
        assert re.search(r"Rehearsal #\d+ of demo-sst2 queued\.", page)
        status_url = re.search(r'data-rehearsal-url="([^"]+)"', page).group(1)
        first = json.loads(site.get(status_url))
        assert first["status"] in ("queued", "running") and not first["done"]

        def ended() -> dict | None:
            status = json.loads(site.get(status_url))
            return status if status["status"] in ("done", "failed") else None

        status = _until(ended, seconds=480, every=1.0, what="the rehearsal job ending")
        assert (status["status"], status["error"], status["passed"]) == ("done", "", True), status
        assert status["progress"]["done"] > 5  # the crowd's lines came in while it ran
        job = status["id"]
        markdown = site.get(f"/dashboard/rehearsals/{job}/report.markdown")
        assert markdown.startswith("# Rehearsal of demo-sst2: every invariant holds")
        assert "## Launch check\n\nNothing blocks the launch." in markdown
        report = json.loads(site.get(f"/dashboard/rehearsals/{job}/report.json"))
        assert report["passed"] and report["seed"] == 3 and report["design"]["workers_per_condition"] == 1
        assert report["scratch"]["engine"] == db.engine and report["launch_check"]["ready"] is True
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        db.drop()


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


def test_a_failed_rehearsal_shows_its_reason_and_no_report(staff, study):
    job = RehearsalJob.objects.create(
        study=study,
        status=Status.FAILED,
        attempts=1,
        error="RehearsalError: the scratch server did not answer within 60 s",
        log="scratch database: sqlite /tmp/x",
    )
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
    assert report.status_code == 403  # signed in without a role: refused (annotation.web.roles), not sent to log in
    client.logout()
    report = client.get(reverse("dashboard:rehearsal-report", args=[job.pk, "markdown"]))
    assert report.status_code == 302 and "/login/" in report["Location"]  # anonymous: the admin's login
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
