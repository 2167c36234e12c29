"""Two deliveries of one event at once (annotation/services/prolific/webhooks.py, pinned where mutation testing
found it loose): the second to commit meets the unique id or signature of the first, and is a duplicate."""

import threading
from datetime import UTC, datetime

import pytest
from django.db import connections

from annotation.models import Participation, ProlificEvent, Worker
from annotation.services.prolific import webhooks
from tests.factories import ParticipationFactory, WorkerFactory
from tests.threads import WAIT_SECONDS, join_all, start_threads

pytestmark = pytest.mark.django_db(transaction=True)


def _deliver(event_id: str, digest: str, prolific_study=None):
    payload = {"event_type": webhooks.SUBMISSION_EVENT, "resource_id": "own-p1", "participant_id": "p1"}
    return webhooks.record_and_apply(
        event_id=event_id,
        source=ProlificEvent.Source.WEBHOOK,
        payload={**payload, "status": "AWAITING REVIEW"},
        sent_at=datetime(2026, 11, 28, 9, 0, tzinfo=UTC),
        prolific_study=prolific_study,
        signed_digest=digest,
    )


# The other delivery has the same id (another signature) or the same signature (another id).
@pytest.mark.parametrize("other", [("e1", "d2"), ("e2", "d1")])
def test_a_delivery_overtaken_by_its_duplicate_is_a_duplicate(prolific_on, other):
    worker = WorkerFactory(platform=Worker.Platform.PROLIFIC, external_id="p1")
    ParticipationFactory(worker=worker, state=Participation.State.CLAIMED, platform_data={"STUDY_ID": "PS1"})
    prolific_on.add_submission(submission_id="own-p1", participant="p1", study_id="PS1")
    arrived, release = threading.Event(), threading.Event()

    def hold_the_look_up(method, path):
        if "/submissions/own-p1/" in path:
            arrived.set()
            assert release.wait(WAIT_SECONDS)

    prolific_on.on_request = hold_the_look_up
    results, errors = [], []

    def first():
        try:
            results.append(_deliver("e1", "d1"))  # looks the submission up, outside its transaction
        except Exception as exc:  # reported below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    [thread] = start_threads(first, [()])
    assert arrived.wait(WAIT_SECONDS)
    assert _deliver(*other, prolific_study="PS1") is not None  # the duplicate, committed meanwhile
    release.set()
    join_all([thread])
    assert errors == [] and results == [None]
    assert ProlificEvent.objects.count() == 1
