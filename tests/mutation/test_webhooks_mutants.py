"""Prolific's webhooks (annotation/services/prolific/webhooks.py) pinned where mutation testing found them loose
(scripts/mutation.sh webhooks): the checks on a request's time, signature and body, and which participation an
event may touch. Each signature is computed here with hmac, as Prolific's reference describes it."""

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime

import pytest

from annotation.models import (
    Participation,
    ProlificAction,
    ProlificCall,
    ProlificEvent,
    ProlificHookSecret,
    Worker,
)
from annotation.services.prolific import webhooks
from annotation.services.prolific.client import ProlificError
from tests.factories import ConditionFactory, ParticipationFactory, StudyFactory, WorkerFactory

State = Participation.State
SECRET = "k3y"
NO_TIME = "X-Prolific-Request-Timestamp is not a UNIX timestamp."


def signed(secret: str, timestamp: str, body: bytes) -> str:
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


def check(timestamp: str, now: float, *, body: bytes = b"{}", tolerance: float = 300) -> None:
    webhooks.verify(
        secrets=[SECRET],
        timestamp=timestamp,
        signature_header=signed(SECRET, timestamp, body),
        body=body,
        now=now,
        tolerance=tolerance,
    )


# -- the request's time -------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["soon", "-1"])
def test_a_timestamp_that_is_no_time_is_named(bad):
    with pytest.raises(webhooks.BadWebhook) as refused:
        check(bad, now=0)
    assert str(refused.value) == NO_TIME


@pytest.mark.parametrize("timestamp", ["0", "0.5"])
def test_the_first_second_of_unix_time_is_a_time(timestamp):
    check(timestamp, now=0)


def test_a_timestamp_in_milliseconds_is_read_as_such():
    check("1700000000000", now=1_700_000_000)  # 1.7e12 > 1e11: milliseconds
    check("100000000000.5", now=100_000_000.0005)  # just over 1e11: milliseconds too
    check("100000000000", now=100_000_000_000)  # 1e11 itself is seconds (the year 5138)


def test_a_request_exactly_at_the_edge_of_the_window_is_accepted():
    check("100", now=400, tolerance=300)
    with pytest.raises(webhooks.WebhookRefused):
        check("100", now=401, tolerance=300)


# -- the signature and the headers --------------------------------------------------------------------------


def test_without_a_secret_the_refusal_says_how_to_set_one_up():
    with pytest.raises(webhooks.WebhookRefused) as refused:
        webhooks.verify(secrets=[""], timestamp="1", signature_header="x", body=b"{}", now=1, tolerance=300)
    assert str(refused.value) == "No webhook secret is set up (manage.py prolific subscribe --run)."


@pytest.mark.parametrize("timestamp, signature", [("1", ""), ("", "x")])
def test_a_missing_signature_or_timestamp_is_a_bad_request(timestamp, signature):
    with pytest.raises(webhooks.BadWebhook) as refused:
        webhooks.verify(
            secrets=[SECRET], timestamp=timestamp, signature_header=signature, body=b"{}", now=1, tolerance=300
        )
    assert str(refused.value) == "X-Prolific-Request-Signature and X-Prolific-Request-Timestamp are required."


def test_a_signature_over_the_reserialised_body_is_accepted():
    body = b'{"a":1}'  # what json.dumps gives of it is '{"a": 1}': the reference's example signs that
    webhooks.verify(
        secrets=[SECRET],
        timestamp="5",
        signature_header=signed(SECRET, "5", b'{"a": 1}'),
        body=body,
        now=5,
        tolerance=300,
    )


def test_a_body_that_is_not_json_is_still_checked_on_its_bytes():
    check("5", now=5, body=b"not json")
    with pytest.raises(webhooks.WebhookRefused):
        webhooks.verify(
            secrets=[SECRET], timestamp="5", signature_header=signed(SECRET, "5", b"other"), body=b"not json",
            now=5, tolerance=300,
        )  # fmt: skip


# -- receive: the body, the event's id and time -------------------------------------------------------------


@pytest.fixture
def secret(db):
    ProlificHookSecret.objects.create(workspace_id="ws1", value=SECRET)


def headers_for(body: bytes, timestamp: str, **extra: str) -> dict[str, str]:
    return {
        "X-Prolific-Request-Timestamp": timestamp,
        "X-Prolific-Request-Signature": signed(SECRET, timestamp, body),
        **extra,
    }


def test_receive_judges_the_time_by_the_now_it_is_given(secret):
    body = json.dumps({"event_type": "study.status.change", "resource_id": "PS1", "status": "PAUSED"}).encode()
    event = webhooks.receive(headers=headers_for(body, "1000", **{"X-Event-ID": "e1"}), body=body, now=1000)
    assert event.event_id == "e1"
    assert event.sent_at == datetime(1970, 1, 1, 0, 16, 40, tzinfo=UTC)  # 1000 s after the epoch


def test_an_event_without_its_id_is_known_by_its_body(secret):
    body = json.dumps({"event_type": "study.status.change", "resource_id": "PS1", "status": "PAUSED"}).encode()
    event = webhooks.receive(headers=headers_for(body, "1000"), body=body, now=1000)
    assert event.event_id == "body:" + hashlib.sha256(body).hexdigest()


def test_a_signature_header_missing_from_the_request_is_a_bad_request(secret):
    body = b"{}"
    with pytest.raises(webhooks.BadWebhook):
        webhooks.receive(headers={"X-Prolific-Request-Timestamp": "1000"}, body=body, now=1000)


@pytest.mark.parametrize(
    "body, why",
    [
        (b"not json", "The body is not JSON."),
        (b"[1]", "The body has no event_type or resource_id."),
        (b'{"event_type": "submission.status.change"}', "The body has no event_type or resource_id."),
        (b'{"resource_id": "s1"}', "The body has no event_type or resource_id."),
    ],
)
def test_a_signed_body_we_cannot_read_is_a_bad_request(secret, body, why):
    with pytest.raises(webhooks.BadWebhook) as refused:
        webhooks.receive(headers=headers_for(body, "1000"), body=body, now=1000)
    assert str(refused.value) == why
    assert not ProlificEvent.objects.exists()


# -- which participation an event concerns ------------------------------------------------------------------


def _prolific(pid: str, data: dict, condition=None, state=State.CLAIMED, slot=0):
    worker = Worker.objects.filter(external_id=pid).first() or WorkerFactory(
        platform=Worker.Platform.PROLIFIC, external_id=pid
    )
    condition = condition or ConditionFactory(study=StudyFactory(), shots=0)
    return ParticipationFactory(condition=condition, worker=worker, state=state, platform_data=data, slot_index=slot)


def _event(submission: str, pid: str, status: str, event_id: str = "e1"):
    return _submission_event(event_id, status, submission=submission, pid=pid)


def _state(p):
    p.refresh_from_db()
    return p.state


def _looked_up(standin):
    return [path for _, path, _ in standin.requests if path.startswith("/api/v1/submissions/")]


UNSAID = "no participation of ours has this submission (it is of a Prolific study Prolific did not say): recorded only"


def test_an_event_about_another_submission_of_a_worker_with_a_session_is_not_looked_up(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"})
    prolific_on.add_submission(submission_id="other-p1", participant="p1", study_id="PS9")
    event = _event("other-p1", "p1", "REJECTED")
    assert event.outcome == "no participation of ours has this submission"
    assert _looked_up(prolific_on) == [] and _state(ours) == State.CLAIMED


def test_a_submission_known_by_its_session_is_not_looked_up(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"})
    _prolific("p1", {"STUDY_ID": "PS2"})  # the same worker in another study of ours, entered without a session
    prolific_on.add_submission(submission_id="sub-p1", participant="p1", study_id="PS1")
    assert _event("sub-p1", "p1", "RETURNED").outcome == "slot freed (returned the study on Prolific)"
    assert _looked_up(prolific_on) == [] and _state(ours) == State.ABANDONED


def test_with_the_operations_off_nobody_is_asked_and_nothing_changes(standin, settings, db):
    settings.PROLIFIC_API_TOKEN = ""
    ours = _prolific("p1", {"STUDY_ID": "PS1"})
    assert _event("own-p1", "p1", "RETURNED").outcome == UNSAID
    assert _state(ours) == State.CLAIMED


def test_a_participation_of_no_known_study_is_never_matched(prolific_on, db):
    ours = _prolific("p1", {})  # neither SESSION_ID nor STUDY_ID, and no colleague to tell the study
    prolific_on.add_submission(submission_id="own-p1", participant="p1", study_id="PS1")
    assert _event("own-p1", "p1", "RETURNED").outcome == (
        "no participation of ours has this submission (it is of Prolific study PS1): recorded only"
    )
    assert _state(ours) == State.CLAIMED


def test_an_unknown_study_is_not_matched_by_an_unknown_study(standin, settings, db):
    settings.PROLIFIC_API_TOKEN = ""  # nobody to ask: the submission's study is unknown too
    ours = _prolific("p1", {})
    assert _event("own-p1", "p1", "RETURNED").outcome == UNSAID
    assert _state(ours) == State.CLAIMED


def test_when_prolific_is_unreachable_the_failure_is_logged_and_nothing_changes(prolific_on, settings, caplog, db):
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"
    ours = _prolific("p1", {"STUDY_ID": "PS1"})
    with caplog.at_level("WARNING", logger="annotation.services.prolific.webhooks"):
        assert _event("own-p1", "p1", "RETURNED").outcome == UNSAID
    (record,) = [r for r in caplog.records if r.name == "annotation.services.prolific.webhooks"]
    assert record.msg == "looking up Prolific submission %s failed: %s"
    assert record.args[0] == "own-p1" and isinstance(record.args[1], ProlificError)
    assert _state(ours) == State.CLAIMED


def test_a_submission_prolific_says_is_someone_elses_is_not_matched(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1"})
    prolific_on.add_submission(submission_id="own-p1", participant="p2", study_id="PS1")
    assert _event("own-p1", "p1", "RETURNED").outcome == UNSAID
    assert _state(ours) == State.CLAIMED


def test_a_submission_answered_without_its_study_is_not_matched(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1"})
    prolific_on.submissions["own-p1"] = {"id": "own-p1", "participant": "p1", "status": "RETURNED"}
    assert _event("own-p1", "p1", "RETURNED").outcome == UNSAID
    assert _state(ours) == State.CLAIMED


def test_the_owner_is_read_from_participant_id_too_and_the_look_up_is_logged(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1"})
    prolific_on.submissions["own-p1"] = {"id": "own-p1", "participant_id": "p1", "study_id": "PS1"}
    assert _event("own-p1", "p1", "RETURNED").outcome == "slot freed (returned the study on Prolific)"
    assert _state(ours) == State.ABANDONED
    assert ProlificCall.objects.filter(path="submissions/own-p1/").count() == 1


def test_the_own_study_id_wins_over_colleagues_from_several_studies(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1"})
    colleague = {"STUDY_ID": "PS2", "SESSION_ID": "sub-p2"}
    ParticipationFactory(
        condition=ours.condition,
        worker=WorkerFactory(platform=Worker.Platform.PROLIFIC, external_id="p2"),
        slot_index=1,
        platform_data=colleague,
    )
    prolific_on.add_submission(submission_id="own-p1", participant="p1", study_id="PS1")
    assert _event("own-p1", "p1", "RETURNED").outcome == "slot freed (returned the study on Prolific)"
    assert _state(ours) == State.ABANDONED


# -- what is recorded, and what an earlier event of the same submission decides -----------------------------


def test_each_field_is_kept_to_its_column_and_a_missing_one_is_empty(db):
    long = {"event_type": "e" * 70, "resource_id": "r" * 70, "status": "s" * 40, "participant_id": "p" * 140}
    event = webhooks.record_and_apply(
        event_id="e1", source=ProlificEvent.Source.WEBHOOK, payload=long, sent_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert (event.event_type, event.resource_id) == ("e" * 60, "r" * 64)
    assert (event.status, event.participant_id) == ("S" * 30, "p" * 128)
    bare = webhooks.record_and_apply(
        event_id="e2", source=ProlificEvent.Source.POLL, payload={}, sent_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    bare.refresh_from_db()
    assert (bare.event_type, bare.resource_id, bare.status, bare.participant_id) == ("", "", "", "")
    assert bare.outcome == "recorded"


def test_only_an_earlier_event_of_the_same_submission_counts(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"})
    _prolific(
        "p2", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p2"}, condition=ours.condition, state=State.COMPLETED, slot=1
    )
    later = datetime(2026, 11, 28, 10, 0, tzinfo=UTC)
    webhooks.record_and_apply(
        event_id="e0",
        source=ProlificEvent.Source.WEBHOOK,
        payload={
            "event_type": webhooks.SUBMISSION_EVENT,
            "resource_id": "sub-p2",
            "participant_id": "p2",
            "status": "APPROVED",
        },
        sent_at=later,
    )  # another submission, approved an hour after our event
    assert _event("sub-p1", "p1", "RETURNED").outcome == "slot freed (returned the study on Prolific)"
    assert _state(ours) == State.ABANDONED


def test_an_approval_is_named_as_what_nothing_undoes(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"})
    _event("sub-p1", "p1", "APPROVED", event_id="e0")
    assert _event("sub-p1", "p1", "RETURNED").outcome == "the submission was approved: nothing undoes it"
    assert _state(ours) == State.CLAIMED


Action = ProlificAction


@pytest.mark.parametrize(
    "kind, action, status, freed",
    [
        (Action.Kind.REVIEW, "APPROVE", Action.Status.DONE, False),
        (Action.Kind.REVIEW, "SCREEN_OUT", Action.Status.DONE, False),
        (Action.Kind.REVIEW, "REJECT", Action.Status.DONE, True),
        (Action.Kind.REVIEW, "APPROVE", Action.Status.FAILED, True),  # nothing was done on Prolific
        (Action.Kind.REVIEW, "APPROVE", Action.Status.UNCERTAIN, True),  # not known to be done
        (Action.Kind.GROUP, "APPROVE", Action.Status.DONE, True),  # not a review
    ],
)
def test_our_reviews_approval_is_as_final_as_one_heard(prolific_on, db, kind, action, status, freed):
    # A worker readmitted after our review approved their submission is at work again: a status heard after the
    # approval changes nothing, as after an APPROVED heard (the lifecycle model's finding of 2026-11-28).
    ours = _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"}, state=State.TEST)
    ProlificAction.objects.create(participation=ours, kind=kind, action=action, status=status)
    event = _event("sub-p1", "p1", "RETURNED")
    if freed:
        assert (event.outcome, _state(ours)) == ("slot freed (returned the study on Prolific)", State.ABANDONED)
    else:
        assert (event.outcome, _state(ours)) == ("our review approved the submission: nothing undoes it", State.TEST)


def test_an_approval_heard_after_our_reviews_approval_is_recorded(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"}, state=State.COMPLETED)
    ProlificAction.objects.create(participation=ours, kind=Action.Kind.REVIEW, action="APPROVE", status="done")
    assert _event("sub-p1", "p1", "APPROVED").outcome == "recorded"


def test_our_reviews_approval_of_another_participation_frees_this_one(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"}, state=State.TEST)
    other = _prolific("p2", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p2"}, condition=ours.condition, slot=1)
    ProlificAction.objects.create(participation=other, kind=Action.Kind.REVIEW, action="APPROVE", status="done")
    assert _event("sub-p1", "p1", "RETURNED").outcome == "slot freed (returned the study on Prolific)"


# -- duplicates, and what is logged -------------------------------------------------------------------------

WEBHOOKS_LOG = "annotation.services.prolific.webhooks"


def _submission_event(event_id: str, status: str, digest=None, submission="sub-p1", pid="p1"):
    payload = {"event_type": webhooks.SUBMISSION_EVENT, "resource_id": submission, "participant_id": pid}
    return webhooks.record_and_apply(
        event_id=event_id,
        source=ProlificEvent.Source.WEBHOOK,
        payload={**payload, "status": status},
        sent_at=datetime(2026, 11, 28, 9, 0, tzinfo=UTC),
        signed_digest=digest,
    )


def test_a_long_event_id_is_kept_to_its_column_and_known_again(db):
    long_id = "i" * 120
    first = _submission_event(long_id, "AWAITING REVIEW", submission="s9", pid="nobody")
    first.refresh_from_db()
    assert first.event_id == "i" * 100 and first.payload["status"] == "AWAITING REVIEW"
    assert _submission_event(long_id, "AWAITING REVIEW", submission="s9", pid="nobody") is None
    assert ProlificEvent.objects.count() == 1


def test_a_retry_under_the_same_id_with_a_new_signature_is_a_duplicate(db):
    assert _submission_event("e1", "RETURNED", digest="d1", submission="s9", pid="nobody") is not None
    assert _submission_event("e1", "RETURNED", digest="d2", submission="s9", pid="nobody") is None
    assert ProlificEvent.objects.count() == 1


def test_a_replay_under_a_new_id_is_known_before_prolific_is_asked(prolific_on, db):
    ours = _prolific("p1", {"STUDY_ID": "PS1"})
    prolific_on.add_submission(submission_id="own-p1", participant="p1", study_id="PS9")
    _submission_event("e1", "REJECTED", digest="d1", submission="own-p1")
    assert len(_looked_up(prolific_on)) == 1
    assert _submission_event("e2", "REJECTED", digest="d1", submission="own-p1") is None
    assert len(_looked_up(prolific_on)) == 1  # known by its signature: not looked up again
    assert _state(ours) == State.CLAIMED


def _logged(caplog):
    return [r.getMessage() for r in caplog.records if r.name == WEBHOOKS_LOG]


def test_each_event_is_logged_with_what_was_done(prolific_on, caplog, db):
    _prolific("p1", {"STUDY_ID": "PS1", "SESSION_ID": "sub-p1"})
    with caplog.at_level("INFO", logger=WEBHOOKS_LOG):
        _submission_event("e1", "RETURNED")
        webhooks.record_and_apply(
            event_id="e2",
            source=ProlificEvent.Source.POLL,
            payload={"event_type": webhooks.STUDY_EVENT, "resource_id": "PS1"},
            sent_at=datetime(2026, 11, 28, 9, 0, tzinfo=UTC),
        )
        _submission_event("e1", "RETURNED")
    assert _logged(caplog) == [
        "Prolific submission.status.change sub-p1 RETURNED (webhook): slot freed (returned the study on Prolific)",
        "Prolific study.status.change PS1 - (poll): recorded",
        "Prolific event e1 received again: already recorded, nothing done",
    ]
