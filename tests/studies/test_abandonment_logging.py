"""The abandoned-slot sweep says at info what it released, and stays quiet when it released nothing."""

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.background.celery_tasks import release_abandoned_slots
from annotation.models import Participation
from tests.factories import ParticipationFactory

pytestmark = pytest.mark.django_db


def test_the_sweep_logs_each_released_slot_and_the_total(make_study, caplog):
    study = make_study(abandon_after_minutes=30)
    p = ParticipationFactory(condition=study.conditions.get(shots=0), state=Participation.State.TEST)
    Participation.objects.filter(pk=p.pk).update(last_activity_at=timezone.now() - timedelta(minutes=31))
    with caplog.at_level(logging.INFO, logger="annotation"):
        assert release_abandoned_slots.delay().get() == 1
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert f"released the slot of participation {p.pk} (study {study.pk}): idle for 30 min" in infos
    assert "released 1 abandoned slot(s)" in infos


def test_a_sweep_that_released_nothing_says_nothing_at_info(make_study, caplog):
    make_study(abandon_after_minutes=30)
    with caplog.at_level(logging.INFO, logger="annotation"):
        assert release_abandoned_slots.delay().get() == 0
    assert not [r for r in caplog.records if r.name.startswith("annotation") and r.levelno >= logging.INFO]
