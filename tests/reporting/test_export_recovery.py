"""Export jobs survive a dead worker: heartbeats, the stale-job sweep and the claim (eager Celery).

The real thing (a worker killed with SIGKILL mid-job) is in test_celery_integration.py.
"""

import logging
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from annotation.celery import app
from annotation.models import ExportJob
from annotation.reporting import exports
from annotation.reporting.celery_tasks import run_export, sweep_export_jobs
from annotation.reporting.exports import export_job_run, export_jobs_sweep
from annotation.services import jobs
from tests.reporting.builders import make_study

STALE = settings.EXPORT_STALE_SECONDS


@pytest.fixture
def study(sst2):
    return make_study(sst2, shots=(0,), slug="recovery-study")


def running(study, *, silent_for: float, attempts: int = 1) -> ExportJob:
    """A job that a worker claimed, whose last heartbeat was ``silent_for`` seconds ago."""
    beat = timezone.now() - timedelta(seconds=silent_for)
    return ExportJob.objects.create(
        kind="table-csv",
        params={"studies": [study.pk]},
        status=ExportJob.Status.RUNNING,
        attempts=attempts,
        started_at=beat - timedelta(seconds=1),
        heartbeat_at=beat,
    )


# --- the sweep ---------------------------------------------------------------------------------------


def test_the_sweep_queues_a_stale_job_again_and_its_task_runs_it_to_done(
    study, django_capture_on_commit_callbacks, caplog
):
    job = running(study, silent_for=STALE + 5)
    with django_capture_on_commit_callbacks(execute=False) as callbacks, caplog.at_level(logging.WARNING):
        result = export_jobs_sweep()
    assert result.requeued == [job.pk] and result.failed == []
    job.refresh_from_db()
    assert job.status == ExportJob.Status.QUEUED and job.attempts == 1 and job.error == ""
    assert f"export job {job.pk}: no heartbeat for {STALE} s" in caplog.text and "(attempt 2 of 3)" in caplog.text

    [send] = callbacks
    send()  # run_export.delay(job.pk), eagerly
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE and job.attempts == 2 and job.file and job.error == ""


def test_the_sweep_fails_a_job_started_too_many_times_with_the_reason(study, django_capture_on_commit_callbacks):
    job = running(study, silent_for=STALE + 5, attempts=settings.EXPORT_MAX_ATTEMPTS)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = export_jobs_sweep()
    assert result.requeued == [] and result.failed == [job.pk] and callbacks == []
    job.refresh_from_db()
    assert job.status == ExportJob.Status.FAILED and job.finished_at and not job.file
    assert job.error == (
        f"gave up after 3 attempt(s): each time the worker running it stopped (no heartbeat for {STALE} s); "
        "see the worker's logs"
    )


def test_the_sweep_leaves_live_and_finished_jobs_alone(study, django_capture_on_commit_callbacks):
    fresh = running(study, silent_for=STALE - 5)
    queued = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk]})
    done = ExportJob.objects.create(kind="table-csv", params={}, status=ExportJob.Status.DONE, attempts=1)
    before = {j.pk: (j.status, j.attempts, j.heartbeat_at) for j in ExportJob.objects.all()}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = export_jobs_sweep()
    assert result.requeued == result.failed == [] and callbacks == []
    assert {j.pk: (j.status, j.attempts, j.heartbeat_at) for j in ExportJob.objects.all()} == before
    assert {fresh.pk, queued.pk, done.pk} == set(before)
    # the same fresh job is stale for a sweep that runs later
    assert export_jobs_sweep(now=timezone.now() + timedelta(seconds=10)).requeued == [fresh.pk]


def test_a_running_job_from_before_heartbeats_is_judged_by_its_start(study):
    old = running(study, silent_for=STALE + 5)
    recent = running(study, silent_for=1)
    ExportJob.objects.filter(pk__in=[old.pk, recent.pk]).update(heartbeat_at=None)
    assert export_jobs_sweep().requeued == [old.pk]


def test_the_sweep_is_a_celery_task_on_beat_and_a_command(study, capsys):
    stale = running(study, silent_for=STALE + 5)
    spent = running(study, silent_for=STALE + 5, attempts=3)
    assert settings.CELERY_BEAT_SCHEDULE["sweep-export-jobs"]["task"] == sweep_export_jobs.name
    assert sweep_export_jobs.delay().get() == {"requeued": [stale.pk], "failed": [spent.pk]}
    assert ExportJob.objects.get(pk=stale.pk).status == ExportJob.Status.QUEUED  # its task is sent on commit

    again = running(study, silent_for=STALE + 5)
    call_command("sweep_export_jobs")
    assert capsys.readouterr().out == f"requeued: 1 export job(s) (#{again.pk})\nfailed: 0 export job(s)\n"


# --- the claim ---------------------------------------------------------------------------------------


def test_a_redelivery_for_a_job_whose_worker_is_alive_does_nothing(study, caplog):
    job = running(study, silent_for=1)
    with caplog.at_level(logging.INFO, logger="annotation.reporting.exports"):
        assert run_export.delay(job.pk).get() == "running"
    after = ExportJob.objects.get(pk=job.pk)
    assert (after.status, after.attempts, after.heartbeat_at, after.file.name) == ("running", 1, job.heartbeat_at, "")
    assert f"export job {job.pk} is running: nothing to do for this delivery" in caplog.text


def test_a_redelivery_for_a_stale_job_takes_it_over(study):
    job = running(study, silent_for=STALE + 5)
    assert run_export.delay(job.pk).get() == "done"
    job.refresh_from_db()
    assert job.attempts == 2 and job.file and job.heartbeat_at > job.started_at - timedelta(seconds=1)


def test_a_stale_job_started_too_many_times_is_left_to_the_sweep(study):
    job = running(study, silent_for=STALE + 5, attempts=3)
    assert export_job_run(job_id=job.pk).status == ExportJob.Status.RUNNING
    assert export_jobs_sweep().failed == [job.pk]
    assert export_job_run(job_id=job.pk).status == ExportJob.Status.FAILED


def test_a_claim_stamps_the_start_the_heartbeat_and_the_attempt(study, monkeypatch):
    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk]})
    seen = {}

    def spy(**kwargs):
        seen.update(ExportJob.objects.values("status", "attempts", "heartbeat_at", "started_at").get(pk=job.pk))
        kwargs["out"].write(b"x")

    monkeypatch.setattr(exports, "write_export", spy)
    export_job_run(job_id=job.pk)
    assert seen["status"] == "running" and seen["attempts"] == 1
    assert seen["heartbeat_at"] == seen["started_at"] is not None


def test_an_attempt_taken_over_meanwhile_keeps_neither_its_file_nor_its_failure(study, monkeypatch):
    """A worker presumed dead (say, paused past EXPORT_STALE_SECONDS) finishes after another took the job."""
    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk]})
    real_write = exports.write_export

    def taken_over_while_writing(**kwargs):
        real_write(**kwargs)
        ExportJob.objects.filter(pk=job.pk).update(attempts=F("attempts") + 1)  # another worker's claim

    monkeypatch.setattr(exports, "write_export", taken_over_while_writing)
    after = export_job_run(job_id=job.pk)
    assert (after.status, after.attempts, after.file.name, after.finished_at) == ("running", 2, "", None)

    def broken_and_taken_over(**kwargs):
        ExportJob.objects.filter(pk=job.pk).update(attempts=F("attempts") + 1)
        raise RuntimeError("late")

    job = again = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk]})
    monkeypatch.setattr(exports, "write_export", broken_and_taken_over)
    after = export_job_run(job_id=again.pk)
    assert (after.status, after.error) == ("running", "")


class _Ticks:
    """Stands for the heartbeat's stop event: ``n`` intervals pass, then the export ends."""

    def __init__(self, n: int) -> None:
        self.left = n

    def wait(self, timeout: float) -> bool:
        self.left -= 1
        return self.left < 0


def test_the_heartbeat_stamps_the_job_while_the_claim_holds_and_stops_when_it_is_lost(study, monkeypatch):
    # _run is called here, in the test's thread and transaction, so its connection must stay open.
    monkeypatch.setattr(jobs, "connection", type("Open", (), {"close": lambda self: None})())
    job = running(study, silent_for=60, attempts=2)
    beat = jobs.Heartbeat(exports.EXPORT_JOBS, job_id=job.pk, attempt=2)
    beat._stop = _Ticks(2)
    beat._run()
    stamped = ExportJob.objects.get(pk=job.pk).heartbeat_at
    assert stamped > timezone.now() - timedelta(seconds=5) and beat._stop.left == -1

    ExportJob.objects.filter(pk=job.pk).update(attempts=3)  # another worker took it over
    lost = jobs.Heartbeat(exports.EXPORT_JOBS, job_id=job.pk, attempt=2)
    lost._stop = _Ticks(5)
    lost._run()
    assert lost._stop.left == 4 and ExportJob.objects.get(pk=job.pk).heartbeat_at == stamped


def test_the_heartbeat_thread_ends_with_the_export(study):
    beat = jobs.Heartbeat(exports.EXPORT_JOBS, job_id=running(study, silent_for=1).pk, attempt=1)
    assert beat.interval == settings.EXPORT_HEARTBEAT_SECONDS
    with beat:
        assert beat._thread.is_alive() and beat._thread.daemon
    assert not beat._thread.is_alive()


# --- what the admin, the API and Celery see ------------------------------------------------------------


def test_the_admin_and_the_api_show_the_attempts_and_the_reason(admin_client, study):
    job = running(study, silent_for=STALE + 5, attempts=3)
    export_jobs_sweep()
    listing = admin_client.get(reverse("admin:annotation_exportjob_changelist")).content.decode()
    assert "column-attempts" in listing and "gave up after 3 attempt(s)" in listing
    page = admin_client.get(reverse("admin:annotation_exportjob_change", args=[job.pk])).content.decode()
    assert "Heartbeat at" in page and "Attempts" in page
    body = admin_client.get(f"/api/reports/exports/{job.pk}/").json()
    assert body["status"] == "failed" and body["attempts"] == 3 and body["error"].startswith("gave up after 3")
    assert body["heartbeat_at"]


def test_the_export_task_is_acknowledged_late_and_requeued_when_its_worker_is_lost():
    assert run_export.acks_late and run_export.reject_on_worker_lost
    assert app.conf.broker_transport_options["visibility_timeout"] == 900
    assert settings.EXPORT_HEARTBEAT_SECONDS == 10.0 and settings.EXPORT_MAX_ATTEMPTS == 3
