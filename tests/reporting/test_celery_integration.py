"""Export jobs run by a real Celery worker through the broker (CELERY_INTEGRATION=1, PostgreSQL)."""

import os
import signal
import time

import pytest

from annotation.models import ExportJob
from annotation.reporting.exports import export_job_create
from tests.factories import make_classification_task
from tests.reporting.builders import add_annotator, gold_answers, make_study

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def _wait_for_end(job_id: int, seconds: float = 60.0) -> ExportJob:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = ExportJob.objects.get(pk=job_id)
        if job.status in (ExportJob.Status.DONE, ExportJob.Status.FAILED):
            return job
        time.sleep(0.2)
    pytest.fail(f"export job {job_id} is still {job.status}")


def test_the_worker_runs_an_export_job_to_done_and_a_bad_one_to_failed(celery_worker_process):
    task = make_classification_task(slug="celery-report", n_test=4)
    study = make_study(task, shots=(0,), slug="celery-report")
    add_annotator(study, 0, answers=gold_answers(task))

    job = export_job_create(kind="table-markdown", study_refs=[study.slug])  # queued on commit (autocommit here)
    done = _wait_for_end(job.pk)
    assert done.status == ExportJob.Status.DONE, done.error
    assert "| 0 | 100.0 ± 0.0 [" in done.file.read().decode()  # the 95% interval follows (on by default)

    broken = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk + 1000]})
    from annotation.reporting.celery_tasks import run_export

    run_export.delay(broken.pk)
    failed = _wait_for_end(broken.pk)
    assert failed.status == ExportJob.Status.FAILED and "unknown study" in failed.error
    assert celery_worker_process.poll() is None


# --- a worker killed mid-job (SIGKILL: no clean-up, no acknowledgement) -------------------------------


@pytest.fixture
def own_queue():
    """A queue for this test's own workers, made the default for what the test sends."""
    from annotation.celery import app

    previous = app.conf.task_default_queue
    app.conf.task_default_queue = f"pytest-{os.getpid()}-killed"
    try:
        yield app.conf.task_default_queue
    finally:
        app.conf.task_default_queue = previous


# Heartbeats every 0.75 s, stale after 3 s, a sweep every second: recovery within seconds.
RECOVERY = {"EXPORT_STALE_SECONDS": "3", "EXPORT_SWEEP_SECONDS": "1"}


def _killed_mid_job(celery_processes, queue: str) -> ExportJob:
    """Queue an export, let a worker that dawdles (EXPORT_TEST_DELAY_SECONDS) start it, then SIGKILL it."""
    task = make_classification_task(slug="celery-killed", n_test=4)
    study = make_study(task, shots=(0,), slug="celery-killed")
    add_annotator(study, 0, answers=gold_answers(task))
    doomed = celery_processes.worker(queue, EXPORT_TEST_DELAY_SECONDS="120", **RECOVERY)

    job = export_job_create(kind="table-markdown", study_refs=[study.slug])
    deadline = time.monotonic() + 30
    while True:  # running, and its heartbeat thread has stamped it since the claim
        job.refresh_from_db()
        if job.status == ExportJob.Status.RUNNING and job.heartbeat_at > job.started_at:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"job {job.pk} is {job.status}, heartbeat {job.heartbeat_at}:\n{celery_processes.log(doomed)}")
        time.sleep(0.1)

    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait(timeout=10)
    job.refresh_from_db()
    assert job.status == ExportJob.Status.RUNNING and job.attempts == 1  # what nothing recovered before
    return job


@pytest.mark.timeout(180)
def test_a_job_whose_worker_is_killed_mid_export_is_finished_by_the_next_worker(celery_processes, own_queue):
    job = _killed_mid_job(celery_processes, own_queue)

    worker = celery_processes.worker(own_queue, **RECOVERY)
    beat = celery_processes.beat(own_queue, **RECOVERY)
    done = _wait_for_end(job.pk, seconds=60)

    assert done.status == ExportJob.Status.DONE, f"{done.error}\n{celery_processes.log(worker)}"
    assert done.attempts == 2 and done.error == ""
    assert "| 0 | 100.0 ± 0.0 [" in done.file.read().decode()  # the 95% interval follows (on by default)
    assert not ExportJob.objects.filter(status=ExportJob.Status.RUNNING).exists()
    assert worker.poll() is None and beat.poll() is None


@pytest.mark.timeout(180)
def test_a_job_whose_worker_is_killed_once_too_often_is_failed_with_the_reason(celery_processes, own_queue):
    job = _killed_mid_job(celery_processes, own_queue)

    worker = celery_processes.worker(own_queue, EXPORT_MAX_ATTEMPTS="1", **RECOVERY)
    celery_processes.beat(own_queue, EXPORT_MAX_ATTEMPTS="1", **RECOVERY)
    failed = _wait_for_end(job.pk, seconds=60)

    assert failed.status == ExportJob.Status.FAILED, celery_processes.log(worker)
    assert failed.attempts == 1 and not failed.file
    assert failed.error.startswith("gave up after 1 attempt(s): each time the worker running it stopped")
    assert not ExportJob.objects.filter(status=ExportJob.Status.RUNNING).exists()
