"""Platform identifiers are pseudonymised IDENTIFIER_RETENTION_DAYS after a study is over, not before."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.background.celery_tasks import pseudonymise_expired_identifiers
from annotation.models import Participation, ProlificAction, Study, Worker
from annotation.services.rights import retention
from tests.factories import ConditionFactory, StudyFactory, make_classification_task

pytestmark = pytest.mark.django_db

PID = "5f0c0ffee0ddba11deadbeef"


def _participation(study: Study, pid: str, slot: int = 0) -> Participation:
    worker = Worker.objects.create(platform="prolific", external_id=pid)
    return Participation.objects.create(
        study=study,
        condition=study.conditions.get(),
        task=study.task,
        worker=worker,
        slot_index=slot,
        state="completed",
        platform_data={"PROLIFIC_PID": pid, "SESSION_ID": "s"},
    )


@pytest.fixture
def closed_study():
    study = StudyFactory(task=make_classification_task(slug="rt"), slug="rt-study", workers_per_condition=2)
    ConditionFactory(study=study, shots=0)
    study.status = Study.Status.CLOSED
    study.save()
    return study


def test_identifiers_go_after_the_retention_time_and_not_before(settings, closed_study):
    settings.IDENTIFIER_RETENTION_DAYS = 30
    p = _participation(closed_study, PID)
    assert retention.pseudonymise_expired(now=timezone.now() + timedelta(days=29)) == 0
    assert Worker.objects.filter(external_id=PID).exists()
    assert retention.pseudonymise_expired(now=timezone.now() + timedelta(days=31)) == 1
    p.refresh_from_db()
    assert p.worker.external_id.startswith("pseud-") and PID not in str(p.platform_data)
    assert p.platform_data["SESSION_ID"] == "s"  # what Prolific's payment rows need stays


def test_an_unfinished_prolific_operation_or_an_open_study_holds_the_identifiers(settings, closed_study):
    settings.IDENTIFIER_RETENTION_DAYS = 1
    p = _participation(closed_study, PID)
    ProlificAction.objects.create(participation=p, kind="bonus", action="BONUS", status="uncertain")
    later = timezone.now() + timedelta(days=400)
    assert retention.pseudonymise_expired(now=later) == 0
    ProlificAction.objects.update(status="done")
    closed_study.status = Study.Status.OPEN
    closed_study.save()
    assert retention.pseudonymise_expired(now=later) == 0
    closed_study.status = Study.Status.CLOSED
    closed_study.save()
    assert retention.pseudonymise_expired(now=later) == 1


def test_the_beat_task_runs_the_sweep(closed_study):
    _participation(closed_study, PID)
    assert pseudonymise_expired_identifiers.delay().get() == 0  # just closed: kept
