"""Celery entry points of the study machinery: each takes ids (or nothing) and calls one service."""

from celery import shared_task

from annotation.services import abandonment


@shared_task(name="annotation.release_abandoned_slots")
def release_abandoned_slots() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): free the slots of workers with no activity for the study's timeout."""
    return abandonment.release_abandoned()
