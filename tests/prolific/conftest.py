import pytest

from annotation.models import Participation, ParticipationEvent, Worker
from annotation.services.prolific.standin import TOKEN, StandIn
from tests.factories import ConditionFactory, ParticipationFactory, StudyFactory, WorkerFactory


@pytest.fixture
def standin():
    server = StandIn().start()
    yield server
    server.stop()


@pytest.fixture
def prolific_on(settings, standin):
    settings.PROLIFIC_API_TOKEN = TOKEN
    settings.PROLIFIC_API_URL = standin.url
    settings.PROLIFIC_WORKSPACE_ID = "ws1"
    settings.PROLIFIC_TIMEOUT_SECONDS = 1
    return standin


def join(standin, condition, pid, *, state, minutes=30, slot=0, prolific_study="PS1"):
    """A Prolific participation that took `minutes` from claim to its end, with a submission on the stand-in."""
    from datetime import timedelta

    from django.utils import timezone

    worker = WorkerFactory(platform=Worker.Platform.PROLIFIC, external_id=pid)
    session = f"sub-{pid}"
    p = ParticipationFactory(
        condition=condition,
        worker=worker,
        slot_index=slot,
        state=state,
        platform_data={"STUDY_ID": prolific_study, "SESSION_ID": session},
    )
    start = timezone.now() - timedelta(hours=2)
    ParticipationEvent.objects.create(participation=p, from_state="", to_state=Participation.State.CLAIMED, at=start)
    if state in (Participation.State.COMPLETED, Participation.State.EXCLUDED):
        ParticipationEvent.objects.create(
            participation=p, from_state="test", to_state=state, at=start + timedelta(minutes=minutes)
        )
    standin.add_submission(submission_id=session, participant=pid, study_id=prolific_study)
    if prolific_study not in standin.studies:  # the reward posted on Prolific is the study's own base_reward
        base = condition.study.base_reward
        standin.add_study(study_id=prolific_study, reward=None if base is None else int(base * 100))
    return p


@pytest.fixture
def prolific_study(db):
    """GBP, 12.00/h, posted reward 3.00: a 30-minute worker is owed 6.00, i.e. a 3.00 bonus."""
    from decimal import Decimal

    study = StudyFactory(currency="GBP", hourly_rate=Decimal("12.00"), base_reward=Decimal("3.00"))
    return study, ConditionFactory(study=study, shots=0)


@pytest.fixture
def full(prolific_on, prolific_study):
    """Two slots, both held by workers at work on Prolific study PS1 (two places, both taken), ACTIVE: the
    places sync's starting point (tests/prolific/test_places*.py, tests/mutation/test_places_mutants.py)."""
    study, condition = prolific_study
    study.workers_per_condition = 2
    study.prolific_sync_places = True
    study.save()
    prolific_on.add_study(study_id="PS1", reward=300)
    prolific_on.set_places("PS1", 2)
    ps = [join(prolific_on, condition, f"p{i}", state=Participation.State.TEST, slot=i) for i in range(2)]
    return study, prolific_on, ps
