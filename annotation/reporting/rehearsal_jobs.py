"""A study's rehearsal run as a background job (annotation.services.jobs), queued from the dashboard.

The work calls the engine named by ``settings.REHEARSAL_ENGINE`` (``manage.py rehearse_study``'s entry point,
``annotation.rehearsal.runner.rehearse``) with the study, the workers per condition, the seed and a ``log``
callable. Each line it logs is the job's progress (``{done: lines so far, total: null}``) and the last lines
are kept in ``RehearsalJob.log`` for the page. What the engine returns gives ``markdown()``, ``json()`` and
``passed``; both reports are stored with the job, for download.

The dashboard's POST returns at once in every deployment: with a Celery worker the task is queued; without
one (Celery eager, e.g. the demo) each job runs in a process of its own, ``manage.py run_rehearsal_job ID``,
started once the job is stored (REHEARSAL_IN_SUBPROCESS), so that no request waits for a rehearsal.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils.module_loading import import_string

from annotation.models import RehearsalJob, Study
from annotation.reporting.options import ReportError
from annotation.services import jobs
from annotation.services.roles.operations import Operation, check_job

logger = logging.getLogger(__name__)

LOG_LINES = 20  # the engine's last lines kept with the job
REPORT_FORMATS = {"markdown": ("text/markdown", "md"), "json": ("application/json", "json")}
Status = RehearsalJob.Status


class RehearsalReport(Protocol):
    @property
    def passed(self) -> bool: ...

    def markdown(self) -> str: ...

    def json(self) -> str: ...


Engine = Callable[..., RehearsalReport]

REHEARSAL_JOBS = jobs.JobKind(
    model=RehearsalJob,
    task="annotation.run_rehearsal",
    noun="rehearsal job",
    logger=logger,
    tag=lambda job: f"study {job.study_id}",
    settings_prefix="REHEARSAL",
)


def engine() -> Engine:
    engine: Engine = import_string(settings.REHEARSAL_ENGINE)
    return engine


def rehearsal_job_create(
    *,
    study: Study,
    workers_per_condition: int | None = None,
    seed: int = 0,
    user: User | AnonymousUser | None = None,
) -> RehearsalJob:
    """Store a queued rehearsal of ``study`` and queue its task after commit. One at a time per study: each
    starts a server and a crowd of its own."""
    if workers_per_condition is not None and not 1 <= workers_per_condition <= 50:
        raise ReportError(f"workers per condition must be between 1 and 50, not {workers_per_condition}")
    if seed < 0:
        raise ReportError(f"the seed must be a non-negative integer, not {seed}")
    busy = RehearsalJob.objects.filter(study=study, status__in=[Status.QUEUED, Status.RUNNING]).first()
    if busy is not None:
        raise ReportError(f"a rehearsal of {study.slug} is already {busy.status} (#{busy.pk}); wait for it to end")
    job = RehearsalJob.objects.create(
        study=study,
        workers_per_condition=workers_per_condition,
        seed=seed,
        created_by=user if user and user.pk else None,
    )
    logger.info("rehearsal job %s queued for study %s", job.pk, study.slug)
    if settings.REHEARSAL_IN_SUBPROCESS:
        transaction.on_commit(partial(_start_process, job.pk))
    else:
        jobs.queue(REHEARSAL_JOBS, job.pk)
    return job


_RUNNING: list[subprocess.Popen[bytes]] = []  # the job processes this one started and has not yet reaped


def _start_process(job_id: int) -> None:
    """Run the job in a process of its own, left running: the request that stored it returns at once. The
    child inherits this process's environment (its database) and writes its errors to this one's stderr."""
    manage = Path(settings.BASE_DIR) / "manage.py"
    _RUNNING[:] = [p for p in _RUNNING if p.poll() is None]  # reaps those that ended
    process = subprocess.Popen(
        [sys.executable, str(manage), "run_rehearsal_job", str(int(job_id))],
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # not stopped with the request's process group (e.g. a server's Ctrl-C)
    )
    _RUNNING.append(process)
    logger.info("rehearsal job %s runs in process %s", job_id, process.pid)


def _rehearse(job: RehearsalJob, progress: jobs.Progress) -> jobs.Finished:
    check_job(job.created_by, Operation.REHEARSE)  # its requester lost the right since: not rehearsed
    study = Study.objects.select_related("task").filter(pk=job.study_id).first()
    if study is None:
        raise ReportError("the study was deleted before its rehearsal started")
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(str(line))
        if progress(len(lines)):  # still ours: the page shows where it got to
            mine = jobs.claimed(REHEARSAL_JOBS, job.pk, progress.attempt)
            mine.update(log="\n".join(lines[-LOG_LINES:]))

    report = engine()(study=study, workers_per_condition=job.workers_per_condition, seed=job.seed, log=log)
    return jobs.Finished(
        fields={
            "passed": bool(report.passed),
            "report_markdown": report.markdown(),
            "report_json": report.json(),
            "log": "\n".join(lines[-LOG_LINES:]),
        },
        note="every invariant holds" if report.passed else "some invariants fail",
    )


def rehearsal_job_run(*, job_id: int) -> RehearsalJob:
    """Run a queued rehearsal; on any error the job is failed with the reason (annotation.services.jobs)."""
    job: RehearsalJob = jobs.run(REHEARSAL_JOBS, job_id, _rehearse)
    return job


def rehearsal_jobs_sweep(*, now: datetime | None = None) -> jobs.SweepResult:
    """Fail the rehearsals whose worker died (REHEARSAL_MAX_ATTEMPTS: not started again). Periodic."""
    return jobs.sweep(REHEARSAL_JOBS, now=now)


def job_status(job: RehearsalJob) -> dict[str, Any]:
    """What the dashboard polls while a rehearsal runs."""
    return {
        "id": job.pk,
        "study": job.study.slug,
        "status": job.status,
        "status_display": job.get_status_display(),
        "progress": job.progress,
        "last_line": job.last_line,
        "passed": job.passed,
        "error": job.error,
        "done": job.status == Status.DONE,
    }
