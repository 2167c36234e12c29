"""Celery entry points of the study machinery: each takes ids (or nothing) and calls one service."""

import logging

from celery import shared_task

from annotation.services.admission import abandonment, closing
from annotation.services.prolific import jobs as prolific_jobs
from annotation.services.prolific import places as prolific_places
from annotation.services.prolific import polling
from annotation.services.rights import retention
from annotation.services.verdicts import filter_groups

logger = logging.getLogger(__name__)


@shared_task(name="annotation.release_abandoned_slots")
def release_abandoned_slots() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): free the slots of workers with no activity for the study's timeout.

    First, the workers still in a closed study whose grace period is over are closed out (those who had
    started keep their completion code), so that none of them is later released as merely idle."""
    closed_out = closing.close_out_expired()
    if closed_out:
        logger.info("closed out %d participation(s) of closed studies", closed_out)
    released = abandonment.release_abandoned()
    # Runs every minute or so: a sweep that freed nothing is not worth a line at info.
    logger.log(logging.INFO if released else logging.DEBUG, "released %d abandoned slot(s)", released)
    return released


@shared_task(name="annotation.decide_training_filters")
def decide_training_filters() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): give the relative training filter's verdicts of every group that has
    finished training or waited past its study's timeout (``filter_groups``)."""
    decisions = filter_groups.decide_due()
    excluded = sum(not d.passed for d in decisions)
    logger.log(
        logging.INFO if decisions else logging.DEBUG,
        "training filter: %d verdict(s), %d excluded",
        len(decisions),
        excluded,
    )
    return len(decisions)


@shared_task(name="annotation.poll_prolific_submissions")
def poll_prolific_submissions() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE, only with PROLIFIC_API_TOKEN): the webhook's fallback. Frees the slots
    of the Prolific workers whose submissions were returned, timed out or rejected (``prolific.polling``)."""
    freed = polling.poll_all()
    logger.log(logging.INFO if freed else logging.DEBUG, "Prolific polling freed %d slot(s)", freed)
    return freed


# Like the export and rehearsal jobs: a redelivered message runs the job only if it is queued.
@shared_task(name="annotation.run_prolific_job", acks_late=True, reject_on_worker_lost=True)
def run_prolific_job(job_id: int) -> str:
    """A Prolific run started from the dashboard or the admin (``prolific.jobs``)."""
    return prolific_jobs.prolific_job_run(job_id=job_id).status


@shared_task(name="annotation.sweep_prolific_jobs")
def sweep_prolific_jobs() -> dict[str, list[int]]:
    """Periodic (CELERY_BEAT_SCHEDULE): fail the Prolific runs whose worker died."""
    result = prolific_jobs.prolific_jobs_sweep()
    if result.failed:
        logger.info("Prolific job sweep: %d failed", len(result.failed))
    return {"requeued": result.requeued, "failed": result.failed}


@shared_task(name="annotation.sync_prolific_places")
def sync_prolific_places(study_id: int) -> dict[str, int]:
    """After a slot of a study that opts in was taken or freed (``prolific.places.on_slot_change``): bring the
    Prolific study's places and status in step. Its counts by row state."""
    return prolific_places.sync(study_id=study_id)


@shared_task(name="annotation.pseudonymise_expired_identifiers")
def pseudonymise_expired_identifiers() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): pseudonymise the identifiers of workers whose studies are all past
    IDENTIFIER_RETENTION_DAYS (annotation.services.rights.retention)."""
    done = retention.pseudonymise_expired()
    logger.log(logging.INFO if done else logging.DEBUG, "retention: %d worker(s) pseudonymised", done)
    return done
