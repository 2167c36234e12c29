"""Prolific tells the app that a participant left: the slot is free at once, and the worker stays out.

The stand-in sends signed webhooks over HTTP to a live server (the end-to-end tests) or the test client
posts them (the rules); polling reads the stand-in's submissions list.
"""

import json
import logging
import time

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.background.celery_tasks import poll_prolific_submissions
from annotation.models import (
    Participation,
    ParticipationEvent,
    ProlificCall,
    ProlificEvent,
    ProlificHookSecret,
    ProlificSubscription,
)
from annotation.services.prolific import webhooks
from annotation.services.prolific.standin import sign
from annotation.services.verdicts import overrides
from tests import entry_link
from tests.factories import ConditionFactory, StudyFactory

State = Participation.State
HOOK = "/hooks/prolific/"
PROLIFIC_STUDY = "PS1"


def take_part(client, study, pid, standin):
    """A Prolific participant opens the study's entry link (their submission is ACTIVE on the stand-in).

    The one place a test joins: the start page's form takes the slot."""
    standin.add_submission(submission_id=f"sub-{pid}", participant=pid, study_id=PROLIFIC_STUDY, status="ACTIVE")
    query = {"PROLIFIC_PID": pid, "STUDY_ID": PROLIFIC_STUDY, "SESSION_ID": f"sub-{pid}"}
    return entry_link.take_part(client, study.slug, query)


def participation_of(pid):
    return Participation.objects.get(worker__external_id=pid)


@pytest.fixture
def one_slot(db):
    """An open study with a single slot: whoever holds it keeps everyone else out."""
    study = StudyFactory(slug="one-slot", workers_per_condition=1, abandon_after_minutes=60)
    ConditionFactory(study=study, shots=0)
    return study


@pytest.fixture
def hooked(prolific_on, live_server):
    """`manage.py prolific subscribe --run` against the stand-in, for the live server's webhook URL."""
    call_command("prolific", "subscribe", "--url", live_server.url + HOOK, "--run")
    return prolific_on


# --- End to end: the stand-in's signed webhook over HTTP --------------------------------------------


@pytest.mark.parametrize("leave", ["return_submission", "time_out"])
def test_once_the_webhook_is_answered_the_slot_is_free_and_a_replacement_joins(hooked, one_slot, leave):
    standin, study = hooked, one_slot
    assert take_part(Client(), study, "p1", standin).status_code == 302
    assert take_part(Client(), study, "p2", standin).status_code == 409  # full

    [sent] = getattr(standin, leave)("p1")

    assert sent["status"] == 200, sent["answer"]
    p1 = participation_of("p1")
    assert p1.state == State.ABANDONED
    reason = ParticipationEvent.objects.get(participation=p1, to_state=State.ABANDONED).reason
    assert "on Prolific" in reason
    assert ProlificEvent.objects.get(participation=p1).outcome.startswith("slot freed")
    # A replacement takes the slot, and Prolific reopened the place by itself.
    standin.submissions.pop("sub-p2")
    assert take_part(Client(), study, "p3", standin).status_code == 302
    assert participation_of("p3").slot_index == p1.slot_index
    assert standin.places[PROLIFIC_STUDY]["reopened"] == 1


def test_the_freed_worker_can_never_enter_the_task_again(hooked, one_slot):
    standin, study = hooked, one_slot
    take_part(Client(), study, "p1", standin)
    standin.return_submission("p1")
    again = Client().get(f"/join/{study.slug}/", {"PROLIFIC_PID": "p1", "STUDY_ID": PROLIFIC_STUDY})
    assert again.status_code == 403
    assert Participation.objects.filter(worker__external_id="p1").count() == 1
    assert participation_of("p1").state == State.ABANDONED
    other = StudyFactory(task=study.task, slug="same-task")
    ConditionFactory(study=other, shots=0)
    elsewhere = Client().get(f"/join/{other.slug}/", {"PROLIFIC_PID": "p1", "STUDY_ID": "PS2"})
    assert elsewhere.status_code == 403  # already took part in the task


def test_a_forged_webhook_changes_nothing_and_is_logged(hooked, one_slot, caplog):
    standin, study = hooked, one_slot
    take_part(Client(), study, "p1", standin)
    payload = {"resource_id": "sub-p1", "event_type": webhooks.SUBMISSION_EVENT, "participant_id": "p1"}
    with caplog.at_level(logging.WARNING, logger="annotation.views.prolific_hooks"):
        forged = standin.deliver(hooked_url(standin), {**payload, "status": "RETURNED"}, secret="not-the-secret")
    assert forged["status"] == 403
    assert participation_of("p1").state == State.CLAIMED
    assert not ProlificEvent.objects.exists()
    assert "does not match" in caplog.text


def test_a_replayed_webhook_changes_nothing(hooked, one_slot):
    standin, study = hooked, one_slot
    take_part(Client(), study, "p1", standin)
    [first] = standin.return_submission("p1")
    standin.submissions.pop("sub-p1")
    assert take_part(Client(), study, "p2", standin).status_code == 302

    again = standin.replay(first)  # the same event id: acknowledged, not acted on

    assert again["status"] == 200 and json.loads(again["answer"]) == {"status": "duplicate"}
    assert ProlificEvent.objects.count() == 1
    assert participation_of("p2").state == State.CLAIMED


def hooked_url(standin):
    return next(iter(standin.subscriptions.values()))["target_url"]


# --- The rules, through the test client --------------------------------------------------------------

SECRET = "s3cret-value"


@pytest.fixture
def secret(db):
    ProlificHookSecret.objects.create(workspace_id="ws1", value=SECRET)
    return SECRET


def post_event(client, status, pid="p1", *, event_id=None, timestamp=None, event_time=None, secret=SECRET):
    body = json.dumps(
        {"resource_id": f"sub-{pid}", "event_type": webhooks.SUBMISSION_EVENT, "participant_id": pid, "status": status}
    )
    timestamp = timestamp or str(int(time.time()))
    headers = {
        "X-Prolific-Request-Timestamp": timestamp,
        "X-Prolific-Request-Signature": sign(secret, timestamp, body),
        "X-Event-ID": event_id or f"ev-{status}-{time.monotonic_ns()}",
        "X-Timestamp": event_time or timestamp,
    }
    return client.post(HOOK, data=body, content_type="application/json", headers=headers)


@pytest.fixture
def claimed(prolific_study_standin, one_slot, client):
    take_part(client, one_slot, "p1", prolific_study_standin)
    return participation_of("p1")


@pytest.fixture
def prolific_study_standin(prolific_on, secret):
    return prolific_on


def test_a_stale_timestamp_is_refused_even_with_a_good_signature(claimed, client):
    old = str(int(time.time()) - 3600)
    response = post_event(client, "RETURNED", timestamp=old)
    assert response.status_code == 403 and "replay" in response.json()["detail"]
    claimed.refresh_from_db()
    assert claimed.state == State.CLAIMED and not ProlificEvent.objects.exists()


def test_a_request_without_the_signature_headers_is_a_400(claimed, client):
    response = client.post(HOOK, data="{}", content_type="application/json")
    assert response.status_code == 400
    assert not ProlificEvent.objects.exists()


def test_without_a_stored_secret_every_webhook_is_refused(prolific_on, one_slot, client):
    take_part(client, one_slot, "p1", prolific_on)
    assert post_event(client, "RETURNED").status_code == 403
    assert participation_of("p1").state == State.CLAIMED


def test_an_older_return_arriving_after_an_approval_does_not_undo_it(claimed, client):
    now = int(time.time())
    assert post_event(client, "APPROVED", event_time=str(now)).status_code == 200
    late = post_event(client, "RETURNED", event_time=str(now - 30))
    assert late.status_code == 200 and "older than the APPROVED" in late.json()["outcome"]
    claimed.refresh_from_db()
    assert claimed.state == State.CLAIMED
    assert ProlificEvent.objects.count() == 2  # both recorded


def test_nothing_after_an_approval_undoes_it(claimed, client):
    now = int(time.time())
    post_event(client, "APPROVED", event_time=str(now - 30))
    answer = post_event(client, "RETURNED", event_time=str(now)).json()
    assert "approved" in answer["outcome"]
    claimed.refresh_from_db()
    assert claimed.state == State.CLAIMED


def test_a_return_of_a_completed_participation_is_recorded_and_changes_nothing(claimed, client):
    Participation.objects.filter(pk=claimed.pk).update(state=State.COMPLETED)
    answer = post_event(client, "RETURNED").json()
    assert answer["outcome"] == "nothing to do: the participation is completed"
    claimed.refresh_from_db()
    assert claimed.state == State.COMPLETED
    assert ProlificEvent.objects.get().participation == claimed


def test_a_status_that_frees_nothing_is_recorded(claimed, client):
    assert post_event(client, "AWAITING REVIEW").json()["outcome"] == "recorded"
    claimed.refresh_from_db()
    assert claimed.state == State.CLAIMED


def test_a_rejection_frees_the_slot(claimed, client):
    assert post_event(client, "REJECTED").json()["outcome"] == "slot freed (rejected on Prolific)"
    claimed.refresh_from_db()
    assert claimed.state == State.ABANDONED


def test_a_submission_we_do_not_know_is_recorded(secret, client, db):
    answer = post_event(client, "RETURNED", pid="stranger").json()
    assert answer["outcome"] == "no participation of ours has this submission"


def test_a_study_status_change_is_recorded(secret, client, db):
    body = json.dumps({"resource_id": "PS1", "event_type": webhooks.STUDY_EVENT, "status": "PAUSED", "metadata": {}})
    ts = str(int(time.time()))
    headers = {
        "X-Prolific-Request-Timestamp": ts,
        "X-Prolific-Request-Signature": sign(SECRET, ts, body),
        "X-Event-ID": "study-ev-1",
    }
    response = client.post(HOOK, data=body, content_type="application/json", headers=headers)
    assert response.status_code == 200
    assert ProlificEvent.objects.get(event_id="study-ev-1").status == "PAUSED"


def test_the_signature_is_checked_on_the_bytes_received_too():
    body = b'{"a":1}'  # not what json.dumps gives: the raw bytes are what was signed
    signed = webhooks.signature("k", "100", body)
    webhooks.verify(secrets=["k"], timestamp="100", signature_header=signed, body=body, now=100, tolerance=300)
    with pytest.raises(webhooks.WebhookRefused):
        webhooks.verify(
            secrets=["k"], timestamp="100", signature_header=signed, body=b'{"a":2}', now=100, tolerance=300
        )


# --- Polling: no public URL, no webhooks ---------------------------------------------------------------


def test_with_webhooks_off_one_polling_run_frees_the_slot(prolific_on, one_slot, client, capsys):
    standin, study = prolific_on, one_slot
    take_part(client, study, "p1", standin)
    standin.set_status("sub-p1", "TIMED-OUT", notify=False)

    call_command("prolific", "poll", "--study", study.slug)

    assert "1 slot(s) freed" in capsys.readouterr().out
    assert participation_of("p1").state == State.ABANDONED
    assert ProlificEvent.objects.get().source == ProlificEvent.Source.POLL
    assert ("GET", f"/api/v1/studies/{PROLIFIC_STUDY}/submissions/", {}) in standin.requests
    standin.submissions.pop("sub-p1")
    assert take_part(Client(), study, "p2", standin).status_code == 302
    # A second run reads the same status again: nothing new is recorded.
    call_command("prolific", "poll", "--study", study.slug)
    assert ProlificEvent.objects.count() == 1


def test_the_beat_task_polls_every_study_with_prolific_workers_at_work(prolific_on, one_slot, client):
    take_part(client, one_slot, "p1", prolific_on)
    prolific_on.set_status("sub-p1", "RETURNED", notify=False)
    assert poll_prolific_submissions.delay().get() == 1
    assert participation_of("p1").state == State.ABANDONED


def test_the_beat_task_does_nothing_while_prolific_is_off(prolific_on, one_slot, client, settings):
    take_part(client, one_slot, "p1", prolific_on)
    prolific_on.set_status("sub-p1", "RETURNED", notify=False)
    settings.PROLIFIC_API_TOKEN = ""
    assert poll_prolific_submissions.delay().get() == 0
    assert participation_of("p1").state == State.CLAIMED


def test_a_webhook_after_the_poll_freed_the_slot_changes_nothing(prolific_on, secret, one_slot, client):
    take_part(client, one_slot, "p1", prolific_on)
    prolific_on.set_status("sub-p1", "RETURNED", notify=False)
    call_command("prolific", "poll", "--study", one_slot.slug)
    answer = post_event(client, "RETURNED").json()
    assert "nothing" in answer["outcome"]
    assert ParticipationEvent.objects.filter(to_state=State.ABANDONED).count() == 1


# --- Subscribing ---------------------------------------------------------------------------------------


def test_subscribe_shows_a_dry_run_then_sets_up_the_secret_and_subscriptions_once(prolific_on, db, capsys):
    standin, url = prolific_on, "http://127.0.0.1:9/hooks/prolific/"
    call_command("prolific", "subscribe", "--url", url)
    assert "Dry run" in capsys.readouterr().out and standin.requests == []

    call_command("prolific", "subscribe", "--url", url, "--run")

    stored = ProlificHookSecret.objects.get(workspace_id="ws1")
    assert stored.value == standin.secrets["ws1"]["value"]
    subs = {s["event_type"]: s for s in standin.subscriptions.values()}
    assert set(subs) == set(webhooks.EVENT_TYPES) and all(s["confirmed"] for s in subs.values())
    assert ProlificSubscription.objects.filter(confirmed=True).count() == 2
    # Recorded like the other operations, and the secrets never reach the log.
    logged = " ".join(f"{c.request} {c.response}" for c in ProlificCall.objects.all())
    assert ProlificCall.objects.count() == 5 and stored.value not in logged
    assert all(s["hook_secret"] not in logged for s in standin.subscriptions.values())

    writes = len(standin.writes())
    call_command("prolific", "subscribe", "--url", url, "--run")
    assert len(standin.writes()) == writes  # nothing to do the second time


def test_subscribe_refuses_a_plain_http_url_for_the_real_prolific(db, settings):
    from django.core.management import CommandError

    settings.PROLIFIC_API_TOKEN = "t"
    settings.PROLIFIC_API_URL = "https://api.prolific.com/api/v1/"
    settings.PROLIFIC_WORKSPACE_ID = "ws1"
    with pytest.raises(CommandError, match="https"):
        call_command("prolific", "subscribe", "--url", "http://example.org/hooks/prolific/")


def test_the_admin_lists_the_events_heard_from_prolific(claimed, client, admin_client):
    post_event(client, "RETURNED")
    page = admin_client.get("/admin/annotation/prolificevent/")
    assert page.status_code == 200 and "sub-p1" in page.content.decode()
    assert admin_client.get("/admin/annotation/prolificsubscription/").status_code == 200


def test_with_places_synced_a_full_study_is_paused_and_a_return_resumes_it(hooked):
    """Entry, webhook and places together: the last slot taken pauses the Prolific study; a return's webhook
    frees the slot and starts it again; the replacement fills it and it is paused again."""
    standin = hooked
    study = StudyFactory(slug="synced", workers_per_condition=1, prolific_sync_places=True)
    ConditionFactory(study=study, shots=0)
    standin.add_study(study_id=PROLIFIC_STUDY, reward=300)
    standin.set_places(PROLIFIC_STUDY, 1)
    status = lambda: standin.studies[PROLIFIC_STUDY]["status"]  # noqa: E731

    assert take_part(Client(), study, "p1", standin).status_code == 302
    assert status() == "PAUSED"
    [sent] = standin.return_submission("p1")
    assert sent["status"] == 200 and status() == "ACTIVE"
    assert standin.places[PROLIFIC_STUDY] == {"total": 1, "taken": 0, "reopened": 1}  # Prolific reopened it
    assert take_part(Client(), study, "p2", standin).status_code == 302
    assert status() == "PAUSED"
    assert not any(method == "PATCH" for method, _, _ in standin.writes())  # a return needs no new place


# --- Which participation an event concerns: only the one it provably does ------------------------------------


def enter_without_session(client, study, pid, standin, *, prolific_study=PROLIFIC_STUDY):
    """A hand-made (or older) Prolific link: PROLIFIC_PID and STUDY_ID, no SESSION_ID recorded."""
    standin.add_submission(submission_id=f"own-{pid}", participant=pid, study_id=prolific_study, status="ACTIVE")
    query = {"PROLIFIC_PID": pid, "STUDY_ID": prolific_study}
    assert entry_link.take_part(client, study.slug, query).status_code == 302
    p = participation_of(pid)
    assert "SESSION_ID" not in p.platform_data
    return p


def test_a_rejection_in_another_study_of_the_workspace_leaves_our_worker_at_work(hooked, one_slot):
    """Finding 2: the payload has no study id; Prolific's API says the submission is of another study."""
    standin, study = hooked, one_slot
    worker = Client()
    ours = enter_without_session(worker, study, "p1", standin)
    standin.add_study(study_id="PS9", reward=100)
    standin.add_submission(submission_id="elsewhere", participant="p1", study_id="PS9", status="AWAITING REVIEW")

    [sent] = standin.set_status("elsewhere", "REJECTED")

    assert sent["status"] == 200
    assert "of Prolific study PS9" in json.loads(sent["answer"])["outcome"]
    ours.refresh_from_db()
    assert ours.state == State.CLAIMED
    event = ProlificEvent.objects.get(resource_id="elsewhere")
    assert event.participation is None and event.status == "REJECTED"
    assert ("GET", "/api/v1/submissions/elsewhere/", {}) in standin.requests  # asked, not guessed
    assert worker.get("/api/session/current/").status_code == 200  # still at work, not locked out


def test_a_return_of_the_workers_own_submission_is_matched_through_prolific(hooked, one_slot):
    standin, study = hooked, one_slot
    ours = enter_without_session(Client(), study, "p1", standin)

    [sent] = standin.set_status("own-p1", "RETURNED")

    assert json.loads(sent["answer"])["outcome"] == "slot freed (returned the study on Prolific)"
    ours.refresh_from_db()
    assert ours.state == State.ABANDONED
    assert ProlificEvent.objects.get(resource_id="own-p1").participation == ours


def test_a_rejection_after_an_exclusion_is_matched_through_prolific_and_frees_no_place(hooked, one_slot):
    """Once the work ended the event is still the participation's (its place is Prolific's to reopen), though
    it frees nothing: without the match, the places sync bought a place for an exclusion Prolific reopened."""
    standin, study = hooked, one_slot
    ours = enter_without_session(Client(), study, "p1", standin)
    overrides.override(ours, admit=False, reason="staff", actor=None)

    [sent] = standin.set_status("own-p1", "REJECTED")

    assert json.loads(sent["answer"])["outcome"] == "nothing to do: the participation is excluded"
    assert ProlificEvent.objects.get(resource_id="own-p1").participation == ours
    ours.refresh_from_db()
    assert ours.state == State.EXCLUDED


def test_when_prolific_cannot_say_which_study_nothing_changes(prolific_on, secret, one_slot, client, settings):
    ours = enter_without_session(Client(), one_slot, "p1", prolific_on)
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"  # unreachable
    answer = post_event(client, "REJECTED", pid="p1").json()
    assert answer["outcome"].startswith("no participation of ours has this submission")
    settings.PROLIFIC_API_TOKEN = ""  # the operations off: nobody to ask
    answer = post_event(client, "RETURNED", pid="p1").json()
    assert answer["outcome"].startswith("no participation of ours has this submission")
    ours.refresh_from_db()
    assert ours.state == State.CLAIMED and ProlificEvent.objects.filter(participation=None).count() == 2


def test_polling_matches_by_the_study_it_read(prolific_on, one_slot):
    """Polling reads submissions study by study: it needs no look-up to know which study one is of."""
    standin = prolific_on
    ours = enter_without_session(Client(), one_slot, "p1", standin)
    standin.set_status("own-p1", "TIMED-OUT", notify=False)
    call_command("prolific", "poll", "--study", one_slot.slug)
    ours.refresh_from_db()
    assert ours.state == State.ABANDONED
    assert not any(path.startswith("/api/v1/submissions/") for _, path, _ in standin.requests)


# --- Timestamps and replays ----------------------------------------------------------------------------------


def test_a_timestamp_from_the_future_is_refused_even_with_a_good_signature(claimed, client):
    ahead = str(int(time.time()) + 3600)
    response = post_event(client, "RETURNED", timestamp=ahead)
    assert response.status_code == 403 and "replay" in response.json()["detail"]
    claimed.refresh_from_db()
    assert claimed.state == State.CLAIMED and not ProlificEvent.objects.exists()


@pytest.mark.parametrize("bad", ["nan", "NaN", "inf", "-inf", "-5"])
def test_a_signed_timestamp_that_is_no_time_is_a_400(claimed, client, bad):
    response = post_event(client, "RETURNED", timestamp=bad)
    assert response.status_code == 400 and response.json()["error"] == "bad_webhook"
    claimed.refresh_from_db()
    assert claimed.state == State.CLAIMED and not ProlificEvent.objects.exists()


def test_an_unsigned_event_time_that_is_no_time_falls_back_to_the_signed_one(claimed, client):
    now = int(time.time())
    response = post_event(client, "RETURNED", timestamp=str(now), event_time="nan")
    assert response.status_code == 200
    assert ProlificEvent.objects.get().sent_at.timestamp() == now


def test_an_unsigned_event_time_ahead_of_the_signed_one_cannot_make_later_events_look_older(claimed, client):
    """X-Timestamp is not signed: one far ahead is read as the signed request time, so it cannot make the
    genuine RETURNED that follows look older and be ignored."""
    now = int(time.time())
    post_event(client, "AWAITING REVIEW", timestamp=str(now - 10), event_time=str(now + 86400))
    assert ProlificEvent.objects.get().sent_at.timestamp() == now - 10
    answer = post_event(client, "RETURNED", timestamp=str(now)).json()
    assert answer["outcome"] == "slot freed (returned the study on Prolific)"


def test_a_captured_request_replayed_under_a_new_event_id_is_a_duplicate(claimed, client):
    now = str(int(time.time()))
    first = post_event(client, "AWAITING REVIEW", event_id="ev-1", timestamp=now)
    assert first.json()["status"] == "recorded"
    again = post_event(client, "AWAITING REVIEW", event_id="ev-forged-2", timestamp=now, event_time=now)
    assert again.status_code == 200 and again.json() == {"status": "duplicate"}
    assert ProlificEvent.objects.count() == 1


def test_a_replay_over_http_under_a_new_id_records_nothing(hooked, one_slot):
    standin, study = hooked, one_slot
    take_part(Client(), study, "p1", standin)
    [first] = standin.return_submission("p1")
    again = standin.post(first["url"], {**first["headers"], "X-Event-ID": "a-fresh-id"}, first["body"])
    assert again["status"] == 200 and json.loads(again["answer"]) == {"status": "duplicate"}
    assert ProlificEvent.objects.count() == 1


def test_a_link_without_study_id_is_matched_by_the_study_its_colleagues_came_from(hooked):
    """Neither SESSION_ID nor STUDY_ID: the participation's Prolific study is the one every other Prolific
    participant of its study came from."""
    standin = hooked
    study = StudyFactory(slug="two-slots", workers_per_condition=2)
    ConditionFactory(study=study, shots=0)
    take_part(Client(), study, "p0", standin)  # a full link: PS1
    standin.add_submission(submission_id="own-p1", participant="p1", study_id=PROLIFIC_STUDY, status="ACTIVE")
    standin.add_study(study_id="PS9", reward=100)
    standin.add_submission(submission_id="other-p1", participant="p1", study_id="PS9", status="AWAITING REVIEW")
    assert entry_link.take_part(Client(), study.slug, {"PROLIFIC_PID": "p1"}).status_code == 302

    standin.set_status("other-p1", "REJECTED")
    assert participation_of("p1").state == State.CLAIMED
    standin.set_status("own-p1", "RETURNED")
    assert participation_of("p1").state == State.ABANDONED
