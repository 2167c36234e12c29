"""Long jobs run by a Celery worker, whatever they do: claim, heartbeat, progress, and recovery of a dead worker.

A job is a row of a model with the BackgroundJob fields (annotation.models.jobs): queued → running →
done / failed. A ``JobKind`` names the model, the Celery task that runs one job (given its id) and how
the logs name it; its client (e.g. the export jobs, annotation.reporting.exports) calls ``queue`` once
the row is stored, and its task calls ``run`` with the function that does the work.

While a job runs, a thread stamps ``heartbeat_at``; a running job without a sign of life for
EXPORT_STALE_SECONDS is stale: its worker is taken for dead. ``sweep`` (periodic) queues a stale job again,
or fails it with the reason once it has been started EXPORT_MAX_ATTEMPTS times. Every write after the
claim is conditional on that claim (running, same attempt), so of two workers that both think they own a
job, only the later one's result is kept.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from annotation.celery import app as celery_app
from annotation.errors import ServiceError
from annotation.models.jobs import BackgroundJob

Status = BackgroundJob.Status


@dataclass(frozen=True)
class JobKind:
    """One kind of job. The limits are read from the settings named ``<settings_prefix>_STALE_SECONDS``,
    ``_HEARTBEAT_SECONDS`` and ``_MAX_ATTEMPTS`` when used (so a test may override them)."""

    model: type[BackgroundJob]
    task: str  # the Celery task's name; it takes the job's id
    noun: str  # how the logs name one: "export job 12"
    logger: logging.Logger
    tag: Callable[[Any], str] = lambda job: ""  # shown after the id where a log line names the job: "(table-csv)"
    settings_prefix: str = "EXPORT"

    @property
    def stale_seconds(self) -> int:
        return int(getattr(settings, f"{self.settings_prefix}_STALE_SECONDS"))

    @property
    def heartbeat_seconds(self) -> float:
        return float(getattr(settings, f"{self.settings_prefix}_HEARTBEAT_SECONDS"))

    @property
    def max_attempts(self) -> int:
        return int(getattr(settings, f"{self.settings_prefix}_MAX_ATTEMPTS"))

    def label(self, job: Any) -> str:
        tag = self.tag(job)
        return f"{self.noun} {job.pk} ({tag})" if tag else f"{self.noun} {job.pk}"


@dataclass(frozen=True)
class Finished:
    """What a job's work returns: the fields stored with status done, and how to drop what it wrote if another
    worker took the job over meanwhile (that worker's result is the one kept)."""

    fields: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # for the log line that says it is done
    undo: Callable[[], object] = lambda: None


class Progress:
    """Given to the work: ``progress(done, total)`` stores how far it got (and is a sign of life too).

    Returns False once the claim is lost (another worker took the job over): the work may stop then.
    """

    def __init__(self, kind: JobKind, job_id: int, attempt: int) -> None:
        self.kind, self.job_id, self.attempt = kind, job_id, attempt

    def __call__(self, done: int, total: int | None = None) -> bool:
        mine = claimed(self.kind, self.job_id, self.attempt)
        return bool(mine.update(progress={"done": done, "total": total}, heartbeat_at=timezone.now()))


def queue(kind: JobKind, job_id: int) -> None:
    """Send the job's task once the transaction that stored (or queued again) the job commits."""
    transaction.on_commit(partial(_send, kind, job_id))


def _send(kind: JobKind, job_id: int) -> None:
    # By name, so a job's client never imports the Celery entry point that imports it. The task modules are
    # the app's autodiscovered ones (annotation.celery); importing them is a no-op once done.
    celery_app.loader.import_default_modules()
    celery_app.tasks[kind.task].delay(job_id)


def _stale_q(cutoff: datetime) -> Q:
    """Running jobs whose worker has given no sign of life since ``cutoff`` (a job from before heartbeats:
    none since it started)."""
    return (
        Q(heartbeat_at__lt=cutoff)
        | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
        | Q(heartbeat_at__isnull=True, started_at__isnull=True)
    )


def claimed(kind: JobKind, job_id: int, attempt: int) -> QuerySet[Any]:
    """The job while this worker's claim holds: still running, and not started again since."""
    return kind.model._default_manager.filter(pk=job_id, status=Status.RUNNING, attempts=attempt)


def claim(kind: JobKind, job_id: int) -> int | None:
    """Take the job if it is queued, or running but stale (its worker died): one conditional UPDATE, so of
    two deliveries at most one takes it. Returns this claim's attempt number, or None if not taken."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=kind.stale_seconds)
    takeable = Q(status=Status.QUEUED) | (Q(status=Status.RUNNING, attempts__lt=kind.max_attempts) & _stale_q(cutoff))
    jobs = kind.model._default_manager
    taken = jobs.filter(takeable, pk=job_id).update(
        status=Status.RUNNING, started_at=now, heartbeat_at=now, attempts=F("attempts") + 1
    )
    if not taken:
        return None
    # Nobody else can claim it again before the stale time has passed: this reads our own claim.
    return int(jobs.values_list("attempts", flat=True).get(pk=job_id))


class Heartbeat:
    """A daemon thread that stamps the job's ``heartbeat_at`` every <prefix>_HEARTBEAT_SECONDS while it runs.

    A thread rather than calls from the work, because some work is one long call (a table over many
    studies, a zip of plots) with no loop to beat from. The stamp is conditional on this worker's claim:
    once the job is taken over, the thread stops. It uses its own database connection, closed when it ends.
    """

    def __init__(self, kind: JobKind, *, job_id: int, attempt: int) -> None:
        self.kind, self.job_id, self.attempt = kind, job_id, attempt
        self.interval = kind.heartbeat_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"job-heartbeat-{job_id}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        log, noun = self.kind.logger, self.kind.noun
        try:
            while not self._stop.wait(self.interval):
                try:
                    mine = claimed(self.kind, self.job_id, self.attempt).update(heartbeat_at=timezone.now())
                except Exception:  # e.g. the database restarting: the next beat may get through
                    log.warning("%s %s: heartbeat not written", noun, self.job_id, exc_info=True)
                    connection.close()
                    continue
                if not mine:
                    log.warning("%s %s: taken over by another worker; heartbeat stopped", noun, self.job_id)
                    return
        finally:
            connection.close()


Work = Callable[[Any, Progress], Finished]


def run(kind: JobKind, job_id: int, work: Work) -> Any:
    """Run a queued (or stale) job: ``work(job, progress)`` does it and returns what to store.

    On any error the job is failed with the reason: a ServiceError (bad input, e.g. a study deleted since)
    by its message, anything else by its type and message, with the traceback in the logs. A delivery of a
    job that is done, failed or running with a live worker changes nothing. Returns the job as stored.
    """
    log, noun = kind.logger, kind.noun
    attempt = claim(kind, job_id)
    job = kind.model._default_manager.get(pk=job_id)
    if attempt is None:
        log.info("%s %s is %s: nothing to do for this delivery", noun, job_id, job.status)
        return job
    label = kind.label(job)
    if attempt > 1:
        log.warning("%s taken over: attempt %d", label, attempt)
    try:
        with Heartbeat(kind, job_id=job.pk, attempt=attempt):
            finished = work(job, Progress(kind, job.pk, attempt))
    except Exception as exc:  # the reason is shown in the admin and the API
        if isinstance(exc, ServiceError):  # bad input: the reason says it all
            reason = str(exc)
            log.warning("%s refused: %s", label, reason)
        else:  # a bug or a broken dependency: the traceback goes to the logs, not to the job
            reason = f"{type(exc).__name__}: {exc}"
            log.exception("%s failed", label)
        if not claimed(kind, job.pk, attempt).update(
            status=Status.FAILED, error=reason[:2000], finished_at=timezone.now()
        ):
            log.warning("%s %s: taken over meanwhile; this attempt's failure is not recorded", noun, job.pk)
    else:
        if claimed(kind, job.pk, attempt).update(
            **finished.fields, status=Status.DONE, error="", finished_at=timezone.now()
        ):
            log.info("%s done%s", label, f": {finished.note}" if finished.note else "")
        else:  # presumed dead and started again elsewhere: that attempt's result is the one kept
            log.warning("%s %s: taken over meanwhile; this attempt's result is dropped", noun, job.pk)
            finished.undo()
    job.refresh_from_db()
    return job


@dataclass(frozen=True)
class SweepResult:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def sweep(kind: JobKind, *, now: datetime | None = None) -> SweepResult:
    """Recover the jobs of ``kind`` whose worker died: queue a stale running job again (its task is sent after
    commit), or fail it with the reason once it has been started max_attempts times.

    Each change is a conditional UPDATE on what was read (running, stale, same attempt), so a job that a
    redelivered message took over meanwhile is left alone.
    """
    log, noun = kind.logger, kind.noun
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=kind.stale_seconds)
    limit, jobs = kind.max_attempts, kind.model._default_manager
    result = SweepResult()
    stale = jobs.filter(_stale_q(cutoff), status=Status.RUNNING).order_by("pk")
    for job_id, attempts in stale.values_list("pk", "attempts"):
        same = jobs.filter(_stale_q(cutoff), pk=job_id, status=Status.RUNNING, attempts=attempts)
        if attempts >= limit:
            reason = (
                f"gave up after {attempts} attempt(s): each time the worker running it stopped "
                f"(no heartbeat for {kind.stale_seconds} s); see the worker's logs"
            )
            if same.update(status=Status.FAILED, error=reason, finished_at=now):
                log.error("%s %s failed: %s", noun, job_id, reason)
                result.failed.append(job_id)
        elif same.update(status=Status.QUEUED):
            log.warning(
                "%s %s: no heartbeat for %d s, its worker is taken for dead; queued again (attempt %d of %d)",
                noun,
                job_id,
                kind.stale_seconds,
                attempts + 1,
                limit,
            )
            queue(kind, job_id)
            result.requeued.append(job_id)
    return result
