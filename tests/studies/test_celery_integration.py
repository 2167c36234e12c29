"""The periodic release of abandoned slots, run by a real Celery worker (and beat) through the broker.

Runs with CELERY_INTEGRATION=1, CELERY_BROKER_URL and DATABASE_URL on PostgreSQL
(see .ci/run); skipped otherwise.
"""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.background.celery_tasks import release_abandoned_slots
from annotation.models import Participation
from annotation.services.admission import entry
from annotation.services.studies import studies
from tests.factories import make_classification_task
from tests.studies.conftest import inhouse

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def _wait_for(predicate, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _one_gone_one_recent(slug):
    task = make_classification_task(slug=slug)
    study = studies.create_standard_design(task=task, split_number=1, slug=slug, open_now=True)
    studies.study_update(study=study, abandon_after_minutes=1)
    gone = entry.join_study(study=study, params=inhouse("gone")).participation
    recent = entry.join_study(study=study, params=inhouse("recent")).participation
    Participation.objects.filter(pk=gone.pk).update(last_activity_at=timezone.now() - timedelta(minutes=5))
    return gone, recent


def test_the_worker_releases_an_abandoned_slot_for_a_fresh_worker(celery_worker_process):
    gone, recent = _one_gone_one_recent("celery")

    release_abandoned_slots.delay()

    assert _wait_for(lambda: Participation.objects.get(pk=gone.pk).state == Participation.State.ABANDONED), (
        "the worker did not release the slot"
    )
    assert Participation.objects.get(pk=recent.pk).state == Participation.State.CLAIMED
    event = Participation.objects.get(pk=gone.pk).events.get(to_state="abandoned")
    assert event.reason == "no activity for 1 minute"
    assert celery_worker_process.poll() is None


def test_beat_runs_the_release_on_its_schedule_with_nobody_asking(celery_worker_process, celery_beat_process):
    gone, recent = _one_gone_one_recent("celery-beat")

    released = _wait_for(lambda: Participation.objects.get(pk=gone.pk).state == Participation.State.ABANDONED)

    assert released, f"beat did not have the slot released:\n{celery_beat_process.log_path.read_text()[-3000:]}"
    assert Participation.objects.get(pk=recent.pk).state == Participation.State.CLAIMED
    assert celery_beat_process.poll() is None
