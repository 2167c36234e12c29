"""The long-job runner (annotation.services.jobs) on a kind of job that is not an export.

``CountJob`` counts to its ``limit``, reporting progress at each step: a table made for these tests only
(app label ``job_tests``, outside every installed app, so no migration knows it). Its limits are the
COUNT_* settings: started at most twice (it is retried once).
"""

import logging
from datetime import timedelta

import pytest
from celery import shared_task
from django.db import connection, models
from django.db.models import F
from django.utils import timezone

from annotation.errors import ServiceError
from annotation.models.jobs import BackgroundJob
from annotation.services import jobs

Status = BackgroundJob.Status
STALE = 60
LOGGER = "tests.jobs.count"


class CountJob(BackgroundJob):
    limit = models.PositiveSmallIntegerField(default=3)
    counted = models.PositiveSmallIntegerField(null=True)

    class Meta:
        app_label = "job_tests"


COUNT = jobs.JobKind(
    model=CountJob,
    task="tests.run_count_job",
    noun="count job",
    logger=logging.getLogger(LOGGER),
    tag=lambda job: f"to {job.limit}",
    settings_prefix="COUNT",
)


class Refused(ServiceError):
    code = "refused"


def count(job: CountJob, progress: jobs.Progress) -> jobs.Finished:
    if job.limit == 0:
        raise Refused("nothing to count")
    if job.limit > 100:
        raise RuntimeError("too far")
    for done in range(1, job.limit + 1):
        progress(done, job.limit)
    return jobs.Finished(fields={"counted": job.limit}, note=f"counted {job.limit}")


@shared_task(name="tests.run_count_job")
def run_count_job(job_id: int) -> str:
    return jobs.run(COUNT, job_id, count).status


@pytest.fixture(scope="module")
def count_table(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        with connection.schema_editor() as editor:
            editor.create_model(CountJob)
        yield
        with connection.schema_editor() as editor:
            editor.delete_model(CountJob)


@pytest.fixture(autouse=True)
def count_settings(count_table, settings, db):
    settings.COUNT_STALE_SECONDS = STALE
    settings.COUNT_HEARTBEAT_SECONDS = 10.0
    settings.COUNT_MAX_ATTEMPTS = 2


def running(*, silent_for: float, attempts: int = 1, limit: int = 3) -> CountJob:
    """A job that a worker claimed, whose last heartbeat was ``silent_for`` seconds ago."""
    beat = timezone.now() - timedelta(seconds=silent_for)
    return CountJob.objects.create(
        limit=limit, status=Status.RUNNING, attempts=attempts, started_at=beat - timedelta(seconds=1), heartbeat_at=beat
    )


def queued(limit: int = 3) -> CountJob:
    return CountJob.objects.create(limit=limit)


# --- claim, progress, done ------------------------------------------------------------------------


def test_a_queued_job_is_claimed_run_and_done_with_its_progress_and_result(caplog):
    job = queued(limit=4)
    seen = []

    def watched(job: CountJob, progress: jobs.Progress) -> jobs.Finished:
        seen.append(CountJob.objects.values("status", "attempts", "started_at", "heartbeat_at").get(pk=job.pk))
        return count(job, lambda done, total=None: seen.append(progress(done, total)) or True)

    with caplog.at_level(logging.INFO, logger=LOGGER):
        after = jobs.run(COUNT, job.pk, watched)
    assert seen[0]["status"] == "running" and seen[0]["attempts"] == 1
    assert seen[0]["heartbeat_at"] == seen[0]["started_at"] is not None
    assert seen[1:] == [True] * 4  # each report landed: the claim held
    assert (after.status, after.attempts, after.counted, after.error) == ("done", 1, 4, "")
    assert after.progress == {"done": 4, "total": 4} and after.finished_at
    assert f"count job {job.pk} (to 4) done: counted 4" in caplog.text


def test_its_task_is_sent_by_name_after_commit(django_capture_on_commit_callbacks):
    job = queued()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        jobs.queue(COUNT, job.pk)
    assert len(callbacks) == 1
    job.refresh_from_db()
    assert (job.status, job.counted) == ("done", 3)


def test_a_delivery_of_a_done_or_live_job_changes_nothing(caplog):
    done = CountJob.objects.create(status=Status.DONE, attempts=1, counted=3)
    live = running(silent_for=1)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert run_count_job.delay(done.pk).get() == "done"
        assert run_count_job.delay(live.pk).get() == "running"
    assert CountJob.objects.get(pk=live.pk).attempts == 1 and CountJob.objects.get(pk=live.pk).counted is None
    assert f"count job {live.pk} is running: nothing to do for this delivery" in caplog.text


def test_a_stale_job_is_taken_over_by_a_new_delivery(caplog):
    job = running(silent_for=STALE + 5)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert run_count_job.delay(job.pk).get() == "done"
    assert CountJob.objects.get(pk=job.pk).attempts == 2
    assert f"count job {job.pk} (to 3) taken over: attempt 2" in caplog.text


def test_progress_says_when_the_claim_is_lost_and_a_late_result_is_dropped():
    job = queued()
    undone = []

    def taken_over(job: CountJob, progress: jobs.Progress) -> jobs.Finished:
        assert progress(1, 3)
        CountJob.objects.filter(pk=job.pk).update(attempts=F("attempts") + 1)  # another worker's claim
        assert not progress(2, 3)
        return jobs.Finished(fields={"counted": 2}, undo=lambda: undone.append(True))

    after = jobs.run(COUNT, job.pk, taken_over)
    assert (after.status, after.counted, after.progress) == ("running", None, {"done": 1, "total": 3})
    assert undone == [True]


def test_a_refusal_and_a_bug_fail_the_job_with_the_reason(caplog):
    with caplog.at_level(logging.INFO, logger=LOGGER):
        refused = jobs.run(COUNT, queued(limit=0).pk, count)
        broken = jobs.run(COUNT, queued(limit=200).pk, count)
    assert (refused.status, refused.error) == ("failed", "nothing to count")
    assert (broken.status, broken.error) == ("failed", "RuntimeError: too far")
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert f"count job {broken.pk} (to 200) failed" in error.getMessage() and error.exc_info


# --- heartbeat -------------------------------------------------------------------------------------


class _Ticks:
    """Stands for the heartbeat's stop event: ``n`` intervals pass, then the work ends."""

    def __init__(self, n: int) -> None:
        self.left = n

    def wait(self, timeout: float) -> bool:
        self.left -= 1
        return self.left < 0


def test_the_heartbeat_stamps_the_job_while_the_claim_holds(monkeypatch):
    # _run is called here, in the test's thread and transaction, so its connection must stay open.
    monkeypatch.setattr(jobs, "connection", type("Open", (), {"close": lambda self: None})())
    job = running(silent_for=30)
    beat = jobs.Heartbeat(COUNT, job_id=job.pk, attempt=1)
    assert beat.interval == 10.0
    beat._stop = _Ticks(1)
    beat._run()
    assert CountJob.objects.get(pk=job.pk).heartbeat_at > timezone.now() - timedelta(seconds=5)

    CountJob.objects.filter(pk=job.pk).update(attempts=2)
    lost = jobs.Heartbeat(COUNT, job_id=job.pk, attempt=1)
    lost._stop = _Ticks(5)
    lost._run()
    assert lost._stop.left == 4  # stopped at the first beat that found the claim gone


# --- sweep: retried once, then failed ----------------------------------------------------------------


def test_the_sweep_retries_a_dead_workers_job_once_then_fails_it(django_capture_on_commit_callbacks, caplog):
    job = running(silent_for=STALE + 5)
    with django_capture_on_commit_callbacks(execute=False) as callbacks, caplog.at_level(logging.WARNING):
        result = jobs.sweep(COUNT)
    assert (result.requeued, result.failed) == ([job.pk], [])
    assert CountJob.objects.get(pk=job.pk).status == Status.QUEUED
    assert f"count job {job.pk}: no heartbeat for {STALE} s" in caplog.text and "(attempt 2 of 2)" in caplog.text

    # the retry's worker dies too: claimed (attempt 2), then silent
    assert jobs.claim(COUNT, job.pk) == 2
    CountJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=STALE + 5))
    assert jobs.claim(COUNT, job.pk) is None  # a redelivery may not start it a third time
    with django_capture_on_commit_callbacks(execute=False) as more:
        result = jobs.sweep(COUNT)
    assert (result.requeued, result.failed, more) == ([], [job.pk], [])
    job.refresh_from_db()
    assert job.status == Status.FAILED and job.error.startswith("gave up after 2 attempt(s)")
    assert callbacks and len(callbacks) == 1


def test_the_sweep_leaves_live_jobs_and_other_kinds_alone(django_capture_on_commit_callbacks):
    from annotation.models import ExportJob

    live = running(silent_for=STALE - 5)
    export = ExportJob.objects.create(
        kind="table-csv", status=Status.RUNNING, attempts=1, heartbeat_at=timezone.now() - timedelta(days=1)
    )
    with django_capture_on_commit_callbacks(execute=False):
        assert jobs.sweep(COUNT) == jobs.SweepResult()
    assert CountJob.objects.get(pk=live.pk).status == ExportJob.objects.get(pk=export.pk).status == Status.RUNNING
