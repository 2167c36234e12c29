"""Releasing idle slots: who is abandoned, when, and what it frees."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.background.celery_tasks import release_abandoned_slots
from annotation.models import Participation
from annotation.services.admission import entry
from annotation.services.admission.abandonment import release_abandoned
from annotation.services.state import lifecycle
from tests.factories import ParticipationFactory
from tests.studies.conftest import inhouse

pytestmark = pytest.mark.django_db
State = Participation.State


def _idle(condition, minutes, *, state=State.TEST, slot=0):
    p = ParticipationFactory(condition=condition, state=state, slot_index=slot)
    Participation.objects.filter(pk=p.pk).update(last_activity_at=timezone.now() - timedelta(minutes=minutes))
    return p


def test_active_participations_idle_past_the_timeout_are_abandoned_with_an_event(make_study):
    study = make_study(abandon_after_minutes=30)
    condition = study.conditions.get(shots=10)
    idle = [_idle(condition, 31, state=s, slot=i) for i, s in enumerate([State.CLAIMED, State.TRAINING, State.TEST])]
    assert release_abandoned() == 3
    for p in idle:
        p.refresh_from_db()
        assert p.state == State.ABANDONED and p.finished_at is not None
        assert p.events.get().reason == "no activity for 30 minutes"


def test_recent_activity_and_finished_participations_are_left_alone(make_study):
    study = make_study(abandon_after_minutes=30)
    condition = study.conditions.get(shots=0)
    recent = _idle(condition, 29, slot=0)
    done = _idle(condition, 500, state=State.COMPLETED, slot=1)
    excluded = _idle(condition, 500, state=State.EXCLUDED, slot=2)
    assert release_abandoned() == 0
    for p, state in ((recent, State.TEST), (done, State.COMPLETED), (excluded, State.EXCLUDED)):
        p.refresh_from_db()
        assert p.state == state


def test_each_study_uses_its_own_timeout(make_study):
    short, long = make_study(abandon_after_minutes=10), make_study(abandon_after_minutes=120)
    a = _idle(short.conditions.get(shots=0), 15)
    b = _idle(long.conditions.get(shots=0), 15)
    assert release_abandoned() == 1
    a.refresh_from_db(), b.refresh_from_db()
    assert (a.state, b.state) == (State.ABANDONED, State.TEST)


def test_now_can_be_given(make_study):
    study = make_study(abandon_after_minutes=60)
    p = ParticipationFactory(condition=study.conditions.get(shots=0), state=State.TEST)
    assert release_abandoned(now=timezone.now() + timedelta(minutes=59)) == 0
    assert release_abandoned(now=timezone.now() + timedelta(minutes=61)) == 1
    p.refresh_from_db()
    assert p.state == State.ABANDONED


def test_activity_keeps_a_worker_in(make_study):
    study = make_study(abandon_after_minutes=5)
    p = _idle(study.conditions.get(shots=0), 10)
    p.refresh_from_db()  # as each request loads it
    lifecycle.touch(p)
    assert release_abandoned() == 0


def test_activity_is_written_at_most_every_few_seconds(make_study, django_assert_num_queries):
    study = make_study(abandon_after_minutes=5)
    p = _idle(study.conditions.get(shots=0), 10)
    p.refresh_from_db()
    now = timezone.now()
    with django_assert_num_queries(1):
        lifecycle.touch(p, at=now)
    with django_assert_num_queries(0):  # a request right after: nothing to write
        lifecycle.touch(p, at=now + lifecycle.TOUCH_INTERVAL - timedelta(seconds=1))
    with django_assert_num_queries(1):
        lifecycle.touch(p, at=now + lifecycle.TOUCH_INTERVAL)
    p.refresh_from_db()
    assert p.last_activity_at == now + lifecycle.TOUCH_INTERVAL


def test_the_freed_slot_goes_to_a_fresh_worker_and_the_idle_one_stays_out(make_study):
    study = make_study(shots=[0], workers=1, abandon_after_minutes=5)
    gone = entry.join_study(study=study, params=inhouse("gone")).participation
    assert entry.join_study(study=study, params=inhouse("next")).outcome == entry.Outcome.FULL
    Participation.objects.filter(pk=gone.pk).update(last_activity_at=timezone.now() - timedelta(minutes=6))
    release_abandoned()
    fresh = entry.join_study(study=study, params=inhouse("next"))
    assert fresh.outcome == entry.Outcome.JOINED and fresh.participation.slot_index == 0
    assert entry.join_study(study=study, params=inhouse("gone")).outcome == entry.Outcome.SLOT_RELEASED


def test_the_periodic_task_is_registered_under_its_beat_name_and_releases_slots(make_study, settings):
    assert release_abandoned_slots.name == settings.CELERY_BEAT_SCHEDULE["release-abandoned-slots"]["task"]
    study = make_study(abandon_after_minutes=1)
    _idle(study.conditions.get(shots=0), 2)
    assert release_abandoned_slots.apply().get(timeout=60) == 1  # eager: runs in this process


def test_a_full_study_releases_its_idle_slots_for_a_newcomer_without_the_periodic_task(make_study):
    study = make_study(shots=[0], workers=1, abandon_after_minutes=5)
    gone = entry.join_study(study=study, params=inhouse("gone")).participation
    Participation.objects.filter(pk=gone.pk).update(last_activity_at=timezone.now() - timedelta(minutes=6))
    fresh = entry.join_study(study=study, params=inhouse("next"))  # no sweep ran
    assert fresh.outcome == entry.Outcome.JOINED and fresh.participation.slot_index == 0
    gone.refresh_from_db()
    assert (
        gone.state == State.ABANDONED
        and gone.events.get(to_state=State.ABANDONED).reason == "no activity for 5 minutes"
    )
    assert entry.join_study(study=study, params=inhouse("gone")).outcome == entry.Outcome.SLOT_RELEASED


def test_a_full_study_keeps_its_workers_who_are_still_within_the_timeout_and_other_studies_are_untouched(make_study):
    study, other = make_study(shots=[0], workers=1, abandon_after_minutes=5), make_study(abandon_after_minutes=5)
    busy = entry.join_study(study=study, params=inhouse("busy")).participation
    Participation.objects.filter(pk=busy.pk).update(last_activity_at=timezone.now() - timedelta(minutes=4))
    elsewhere = _idle(other.conditions.get(shots=0), 60)
    assert entry.join_study(study=study, params=inhouse("next")).outcome == entry.Outcome.FULL
    busy.refresh_from_db(), elsewhere.refresh_from_db()
    assert (busy.state, elsewhere.state) == (State.CLAIMED, State.TEST)
    assert release_abandoned(study=other) == 1
