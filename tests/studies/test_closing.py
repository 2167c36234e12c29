"""Closing a study: a grace period for the workers already in, set by the service, the admin and the API."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from annotation.background.celery_tasks import release_abandoned_slots
from annotation.models import Participation, Study
from annotation.services.admission import closing, entry
from annotation.services.admission.entry import Outcome
from annotation.services.state import lifecycle
from annotation.services.studies import studies
from tests.studies.conftest import inhouse

pytestmark = pytest.mark.django_db
State = Participation.State


def _close(study, **kwargs):
    studies.change_status(study=study, to_status=Study.Status.CLOSED, **kwargs)
    study.refresh_from_db()
    return study


def _expire(study):
    Study.objects.filter(pk=study.pk).update(closes_at=timezone.now() - timedelta(seconds=1))
    study.refresh_from_db()


def test_closing_sets_the_grace_deadline_60_minutes_ahead_by_default(study):
    before = timezone.now()
    _close(study)
    assert study.status == Study.Status.CLOSED
    assert before + timedelta(minutes=60) <= study.closes_at <= timezone.now() + timedelta(minutes=60)


def test_the_grace_period_is_given_when_closing(study):
    before = timezone.now()
    assert _close(study, grace_minutes=15).closes_at - before < timedelta(minutes=15, seconds=5)
    other = studies.create_standard_design(task=study.task, open_now=True)
    assert _close(other, grace_minutes=0).closes_at <= timezone.now()


@pytest.mark.parametrize("grace", [-1, closing.MAX_GRACE_MINUTES + 1, 1.5, "10", True])
def test_a_bad_grace_period_is_refused_and_changes_nothing(study, grace):
    with pytest.raises(ValidationError) as exc:
        studies.change_status(study=study, to_status=Study.Status.CLOSED, grace_minutes=grace)
    assert "grace_minutes" in exc.value.message_dict
    study.refresh_from_db()
    assert (study.status, study.closes_at) == (Study.Status.OPEN, None)


def test_a_grace_period_only_goes_with_closing(study):
    with pytest.raises(ValidationError, match="only when closing"):
        studies.change_status(study=study, to_status=Study.Status.PAUSED, grace_minutes=5)


def test_pausing_sets_no_deadline_and_refuses_new_entries_only(study):
    alice = entry.join_study(study=study, params=inhouse("alice")).participation
    studies.change_status(study=study, to_status=Study.Status.PAUSED)
    study.refresh_from_db()
    assert study.closes_at is None and not closing.is_over(study)
    assert entry.join_study(study=study, params=inhouse("bob")).outcome == Outcome.NOT_OPEN
    assert entry.join_study(study=study, params=inhouse("alice")).participation.pk == alice.pk


def test_a_closed_study_admits_nobody_new_but_its_workers_get_back_during_and_after_the_grace(study):
    alice = entry.join_study(study=study, params=inhouse("alice")).participation
    _close(study)
    assert entry.join_study(study=study, params=inhouse("bob")).outcome == Outcome.NOT_OPEN
    assert entry.join_study(study=study, params=inhouse("alice")).participation.pk == alice.pk  # goes on
    _expire(study)
    assert entry.join_study(study=study, params=inhouse("bob")).outcome == Outcome.NOT_OPEN
    # After the deadline the link still takes them to their page, which has their completion code.
    assert entry.join_study(study=study, params=inhouse("alice")).outcome == Outcome.RESUMED


def test_a_worker_closed_out_before_starting_is_told_the_study_closed(study):
    alice = entry.join_study(study=study, params=inhouse("alice")).participation
    _close(study, grace_minutes=0)
    closing.close_out(Participation.objects.select_related("study").get(pk=alice.pk))
    assert entry.join_study(study=study, params=inhouse("alice")).outcome == Outcome.NOT_OPEN


def test_close_out_excludes_started_workers_with_a_code_and_abandons_unstarted_ones(make_study):
    study = make_study(shots=[0], workers=3)
    claimed, started, done = (entry.join_study(study=study, params=inhouse(n)).participation for n in "abc")
    lifecycle.begin(started)
    lifecycle.begin(done)
    lifecycle.finish_test(done)
    _close(study, grace_minutes=0)
    assert closing.close_out_expired() == 2
    states = {p.worker.external_id: p for p in Participation.objects.select_related("worker")}
    assert states["a"].state == State.ABANDONED and not states["a"].completion_code
    assert states["b"].state == State.EXCLUDED and states["b"].completion_code
    assert states["b"].exclusion_kind == "closed"
    assert states["c"].state == State.COMPLETED
    assert states["b"].events.last().reason == closing.CLOSED_REASON
    assert states["a"].events.last().reason == closing.CLOSED_BEFORE_START_REASON
    assert closing.was_closed_out(states["a"]) and closing.was_closed_out(states["b"])
    assert not closing.was_closed_out(states["c"])


def test_the_periodic_sweep_closes_out_after_the_deadline_only(study):
    alice = entry.join_study(study=study, params=inhouse("alice")).participation
    lifecycle.begin(alice)
    _close(study)
    release_abandoned_slots()
    alice.refresh_from_db()
    assert alice.state in Participation.ACTIVE_STATES  # still in the grace period
    _expire(study)
    release_abandoned_slots()
    alice.refresh_from_db()
    assert alice.state == State.EXCLUDED and alice.completion_code


def test_a_study_closed_without_a_deadline_is_over(study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)  # as before deadlines existed
    study.refresh_from_db()
    assert closing.is_over(study)


# --- The API and the admin ---------------------------------------------------------------


def test_the_api_closes_with_a_grace_period_and_shows_the_deadline(admin_client, study):
    url = f"/api/studies/{study.pk}/status/"
    response = admin_client.post(url, {"status": "closed", "grace_minutes": 30}, content_type="application/json")
    assert response.status_code == 200, response.content
    study.refresh_from_db()
    assert response.json()["closes_at"] is not None
    assert timedelta(minutes=29) < study.closes_at - timezone.now() <= timedelta(minutes=30)
    assert admin_client.get(f"/api/studies/{study.pk}/").json()["closes_at"] == response.json()["closes_at"]


@pytest.mark.parametrize("body", [{"status": "closed", "grace_minutes": -5}, {"status": "paused", "grace_minutes": 5}])
def test_the_api_refuses_a_bad_grace_period(admin_client, study, body):
    response = admin_client.post(f"/api/studies/{study.pk}/status/", body, content_type="application/json")
    assert response.status_code == 400 and "grace_minutes" in response.json()["fields"]
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN


def test_the_api_schema_documents_the_grace_period(admin_client):
    schema = admin_client.get("/api/schema/").content.decode()
    assert "grace_minutes" in schema and "closes_at" in schema


def _close_action(client, study, **extra):
    url = reverse("admin:annotation_study_changelist")
    data = {"action": "close_studies", "_selected_action": [str(study.pk)], **extra}
    return client.post(url, data, follow=True).content.decode()


@pytest.fixture
def admin_browser(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.org", "pw"))
    return client


def test_the_admin_close_action_takes_a_grace_period(admin_browser, study):
    page = _close_action(admin_browser, study, grace_minutes="10")
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED and "may finish until" in page
    assert timedelta(minutes=9) < study.closes_at - timezone.now() <= timedelta(minutes=10)


def test_the_admin_close_action_defaults_to_60_minutes_and_refuses_a_bad_value(admin_browser, make_study):
    study = make_study()
    page = _close_action(admin_browser, study, grace_minutes="-3")
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and "Not closed" in page
    _close_action(admin_browser, study, grace_minutes="")
    study.refresh_from_db()
    assert timedelta(minutes=59) < study.closes_at - timezone.now() <= timedelta(minutes=60)
    assert 'name="grace_minutes"' in admin_browser.get(reverse("admin:annotation_study_changelist")).content.decode()


def test_a_close_out_is_dated_at_the_last_activity_so_pay_stops_there(study):
    from annotation.models import ParticipationEvent
    from annotation.services.money.pay import paid_seconds

    alice = entry.join_study(study=study, params=inhouse("alice")).participation
    lifecycle.begin(alice)
    now = timezone.now()
    ParticipationEvent.objects.filter(participation=alice).update(at=now - timedelta(minutes=50))
    Participation.objects.filter(pk=alice.pk).update(last_activity_at=now - timedelta(minutes=20))
    _close(study, grace_minutes=0)
    closing.close_out_expired()  # as the sweep would, long after the worker stopped
    alice.refresh_from_db()
    assert alice.state == State.EXCLUDED and alice.finished_at == now - timedelta(minutes=20)
    assert paid_seconds([alice])[alice.pk] == pytest.approx(30 * 60)


def test_a_close_out_is_dated_at_the_pay_rules_last_act_not_only_the_last_activity(study):
    # Activity is written at most every 10 s: a comprehension attempt (before the start) or a locked answer can
    # be later than it. The close-out is dated at the later act, as the pay rule reads the end of the work.
    from annotation.models import ComprehensionAttempt, ParticipationEvent, Response

    now = timezone.now()
    bob = entry.join_study(study=study, params=inhouse("bob")).participation
    carol = entry.join_study(study=study, params=inhouse("carol")).participation
    lifecycle.begin(carol)
    ParticipationEvent.objects.filter(participation__in=[bob, carol]).update(at=now - timedelta(minutes=50))
    Participation.objects.filter(pk__in=[bob.pk, carol.pk]).update(last_activity_at=now - timedelta(minutes=30))
    ComprehensionAttempt.objects.create(participation=bob, number=1, passed=False, at=now - timedelta(minutes=29))
    example = study.task.examples.first()
    Response.all_objects.create(
        participation=carol,
        example=example,
        phase="test",
        position=0,
        status="answered",
        submitted_at=now - timedelta(minutes=28),
    )
    _close(study, grace_minutes=0)
    closing.close_out_expired()
    bob.refresh_from_db()
    carol.refresh_from_db()
    assert bob.state == State.ABANDONED and bob.finished_at == now - timedelta(minutes=29)
    assert carol.state == State.EXCLUDED and carol.finished_at == now - timedelta(minutes=28)
