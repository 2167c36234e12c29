"""Hearing back from Prolific: a submission's status change frees its slot at once.

Prolific tells a subscribed URL when a submission's status changes (``submission.status.change``:
``resource_id`` is the submission, ``participant_id``, ``status``) or a study's does
(``study.status.change``). A participant who returns the study, times out or is rejected there will not
come back, so their slot is freed at once (``abandonment.abandon``, the one way a participation ends as
abandoned) instead of after the study's ``abandon_after_minutes``; they stay ineligible for the task.

``receive`` checks a webhook (signature, timestamp) and hands it to ``record_and_apply``, which polling
(``polling``) calls too: every event is recorded once (``ProlificEvent``, unique on its id), and acted on
only if it still makes sense:

- an event older (``X-Timestamp``) than one already received for the same submission changes nothing;
- nothing undoes an approval: after APPROVED, or our review's approval or screen-out, a later status
  changes nothing;
- only an active participation (claimed, training, test) is freed; a completed, excluded or declined one
  keeps its state and the event is recorded beside it;
- an event acts only on the participation it provably concerns (``_participation_for``): the one whose
  SESSION_ID is the submission id, or, for a participation entered without one, the participant's only such
  participation that came from the Prolific study the submission belongs to, as Prolific's API says
  (``GET submissions/{id}/``; the payload carries no study id and the subscription covers the whole
  workspace). Otherwise the event is recorded and nothing changes.

A webhook is known by its ``X-Event-ID`` and, since that header is not signed, by its signature too: the same
signed request replayed under another id is a duplicate.

Verification follows Prolific's reference (docs/prolific.md, "Webhooks"): ``X-Prolific-Request-Signature``
is the base64 of HMAC-SHA256, keyed with the workspace's secret (its text, UTF-8), over
``X-Prolific-Request-Timestamp`` followed by the body.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import math
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from annotation.errors import ServiceError
from annotation.models import Participation, ProlificAction, ProlificEvent, ProlificHookSecret, Worker
from annotation.services.admission import abandonment
from annotation.services.prolific.client import ProlificError
from annotation.services.prolific.outcomes import PAID
from annotation.services.prolific.runs import CallLog, enabled, make_client

logger = logging.getLogger(__name__)

SUBMISSION_EVENT = "submission.status.change"
STUDY_EVENT = "study.status.change"
EVENT_TYPES = (SUBMISSION_EVENT, STUDY_EVENT)

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
EVENT_TIME_HEADER = "X-Timestamp"

# The submission statuses after which the participant will not come back: their slot is freed.
FREEING = {
    "RETURNED": "returned the study on Prolific",
    "TIMED-OUT": "timed out on Prolific",
    "REJECTED": "rejected on Prolific",
}
APPROVED = "APPROVED"


class BadWebhook(ServiceError):
    """The request is not a webhook we can read (headers or body missing or malformed)."""

    code = "bad_webhook"
    status = 400


class WebhookRefused(ServiceError):
    """The request is not from Prolific, or too old to trust: bad signature, stale timestamp, no secret."""

    code = "webhook_refused"
    status = 403


# --- Verification (no database) ------------------------------------------------------------------


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Prolific's signature of a request: base64(HMAC-SHA256(secret, timestamp + body))."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def _unix_seconds(timestamp: str) -> float:
    try:
        value = float(timestamp)
    except ValueError:
        raise BadWebhook(f"{TIMESTAMP_HEADER} is not a UNIX timestamp.") from None
    if not math.isfinite(value) or value < 0:  # nan compares false with everything, so no window holds it
        raise BadWebhook(f"{TIMESTAMP_HEADER} is not a UNIX timestamp.")
    # The reference says "UNIX timestamp" without a unit; a value in milliseconds is read as such.
    return value / 1000 if value > 1e11 else value


def verify(
    *, secrets: Iterable[str], timestamp: str, signature_header: str, body: bytes, now: float, tolerance: float
) -> None:
    """Raise unless the request is signed with one of ``secrets`` and sent within ``tolerance`` seconds."""
    secrets = [s for s in secrets if s]
    if not secrets:
        raise WebhookRefused("No webhook secret is set up (manage.py prolific subscribe --run).")
    if not timestamp or not signature_header:
        raise BadWebhook(f"{SIGNATURE_HEADER} and {TIMESTAMP_HEADER} are required.")
    if abs(now - _unix_seconds(timestamp)) > tolerance:
        raise WebhookRefused(f"{TIMESTAMP_HEADER} is more than {tolerance:g} s away from now (a replay?).")
    # The reference's example signs ``json.dumps(body)`` of the parsed body rather than the bytes
    # received; both are accepted (each needs the secret), so either reading of the docs verifies.
    bodies = [body]
    try:
        again = json.dumps(json.loads(body)).encode()
    except ValueError:
        again = body
    if again != body:
        bodies.append(again)
    given = signature_header.strip().encode()
    for secret in secrets:
        for candidate in bodies:
            if hmac.compare_digest(signature(secret, timestamp, candidate).encode(), given):
                return
    raise WebhookRefused(f"{SIGNATURE_HEADER} does not match.")


# --- Receiving -----------------------------------------------------------------------------------


def _header(headers: Mapping[str, str], name: str) -> str:
    lowered = name.lower()
    return next((str(v) for k, v in headers.items() if k.lower() == lowered), "").strip()


def receive(*, headers: Mapping[str, str], body: bytes, now: float | None = None) -> ProlificEvent | None:
    """Check a webhook and act on it; None if this event was already received (acknowledge it again).

    Raises BadWebhook (400) or WebhookRefused (403); then nothing is recorded."""
    now = time.time() if now is None else now
    verify(
        secrets=ProlificHookSecret.objects.values_list("value", flat=True),
        timestamp=_header(headers, TIMESTAMP_HEADER),
        signature_header=_header(headers, SIGNATURE_HEADER),
        body=body,
        now=now,
        tolerance=float(settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS),
    )
    try:
        payload = json.loads(body)
    except ValueError:
        raise BadWebhook("The body is not JSON.") from None
    if not isinstance(payload, dict) or not payload.get("event_type") or not payload.get("resource_id"):
        raise BadWebhook("The body has no event_type or resource_id.")
    # Prolific sends X-Event-ID on every event, the same on each retry; should one lack it, the body
    # (the same on a retry) stands in for it. The id is not signed, so the signature (over the timestamp and
    # the body) keys the request too: the same request replayed under another id is a duplicate.
    event_id = _header(headers, EVENT_ID_HEADER) or "body:" + hashlib.sha256(body).hexdigest()
    signed_digest = hashlib.sha256(_header(headers, SIGNATURE_HEADER).encode()).hexdigest()
    # X-Timestamp orders events but is not signed: it is kept no later than the signed request time.
    signed_at = _unix_seconds(_header(headers, TIMESTAMP_HEADER))
    try:
        sent = min(_unix_seconds(_header(headers, EVENT_TIME_HEADER)), signed_at)
    except BadWebhook:
        sent = signed_at
    sent_at = datetime.fromtimestamp(sent, tz=UTC)
    return record_and_apply(
        event_id=event_id,
        source=ProlificEvent.Source.WEBHOOK,
        payload=payload,
        sent_at=sent_at,
        signed_digest=signed_digest,
    )


def record_and_apply(
    *,
    event_id: str,
    source: str,
    payload: dict[str, Any],
    sent_at: datetime,
    prolific_study: str | None = None,
    signed_digest: str | None = None,
) -> ProlificEvent | None:
    """Record one status change heard from Prolific and do what it calls for, once; None if already recorded.

    The one function behind the webhook and polling. ``prolific_study``: the Prolific study the submission is
    known to belong to (polling reads it by study); otherwise it is looked up when the submission is not known
    by its id (``_study_of_submission``)."""
    event_type = str(payload.get("event_type") or "")[:60]
    resource_id = str(payload.get("resource_id") or "")[:64]
    status = str(payload.get("status") or "").upper()[:30]
    participant_id = str(payload.get("participant_id") or "")[:128]
    if _already_recorded(event_id, signed_digest):
        return None
    if event_type == SUBMISSION_EVENT and prolific_study is None and _unknown_submission(resource_id, participant_id):
        # Outside the transaction: no lock is held while Prolific answers.
        prolific_study = _study_of_submission(resource_id, participant_id)
    try:
        with transaction.atomic():
            event = ProlificEvent.objects.create(
                event_id=event_id[:100],
                signed_digest=signed_digest,
                source=source,
                event_type=event_type,
                resource_id=resource_id,
                participant_id=participant_id,
                status=status,
                sent_at=sent_at,
                payload=payload,
            )
            if event_type == SUBMISSION_EVENT:
                event.outcome = _apply_submission_status(event, prolific_study or "")
            else:
                event.outcome = "recorded"
            event.save(update_fields=["outcome", "participation"])
    except IntegrityError:
        if _already_recorded(event_id, signed_digest):
            return None
        raise
    logger.info("Prolific %s %s %s (%s): %s", event_type, resource_id, status or "-", source, event.outcome)
    return event


def _already_recorded(event_id: str, signed_digest: str | None) -> bool:
    same = Q(event_id=event_id[:100])
    if signed_digest:
        same |= Q(signed_digest=signed_digest)
    if ProlificEvent.objects.filter(same).exists():
        logger.info("Prolific event %s received again: already recorded, nothing done", event_id)
        return True
    return False


def _prolific(queryset: QuerySet[Participation]) -> QuerySet[Participation]:
    return queryset.filter(worker__platform=Worker.Platform.PROLIFIC)


def _without_session(participant_id: str) -> list[Participation]:
    """The participant's participations that recorded no SESSION_ID at entry (a hand-made link), whatever their
    state: a status heard after the work ended (a rejection of an excluded worker) still concerns the places."""
    found = _prolific(Participation.objects.filter(worker__external_id=participant_id))
    return [p for p in found if not (p.platform_data or {}).get("SESSION_ID")]


def _unknown_submission(submission_id: str, participant_id: str) -> bool:
    """No participation has this submission id, and one of the participant's might be it."""
    if _prolific(Participation.objects.filter(platform_data__SESSION_ID=submission_id)).exists():
        return False
    return bool(participant_id) and bool(_without_session(participant_id))


def _study_of_submission(submission_id: str, participant_id: str) -> str:
    """The Prolific study a submission belongs to, asked of Prolific (``GET submissions/{id}/``); "" when it
    cannot be known (the operations off, Prolific unreachable, or the submission not the participant's)."""
    if not enabled():
        return ""
    client = make_client()
    client.on_call = CallLog()
    try:
        found = client.get_submission(submission_id)
    except ProlificError as exc:
        logger.warning("looking up Prolific submission %s failed: %s", submission_id, exc)
        return ""
    owner = str(found.get("participant") or found.get("participant_id") or "")
    if owner != participant_id:
        return ""
    return str(found.get("study_id") or "")


def _prolific_study_of(p: Participation) -> str:
    """The Prolific study a participation came from: its STUDY_ID, else the one all its study's Prolific
    participants came from; "" when neither is known."""
    own = str((p.platform_data or {}).get("STUDY_ID") or "")
    if own:
        return own
    data = _prolific(Participation.objects.filter(study_id=p.study_id)).values_list("platform_data", flat=True)
    ids = {str(d["STUDY_ID"]) for d in data if isinstance(d, dict) and d.get("STUDY_ID")}
    return ids.pop() if len(ids) == 1 else ""


def _participation_for(submission_id: str, participant_id: str, prolific_study: str) -> Participation | None:
    """The participation a submission provably is: the one whose SESSION_ID (stored at entry) is the submission
    id; else the participant's one participation without a SESSION_ID that came from the Prolific study
    the submission belongs to (``prolific_study``, as Prolific says). Otherwise none: the event concerns another
    study of the workspace, or cannot be shown to concern ours."""
    prolific = _prolific(Participation.objects.select_for_update(of=("self",)))
    found = prolific.filter(platform_data__SESSION_ID=submission_id).first()
    if found is not None or not participant_id or not prolific_study:
        return found
    candidates = [p for p in _without_session(participant_id) if _prolific_study_of(p) == prolific_study]
    if len(candidates) != 1:
        return None
    return prolific.filter(pk=candidates[0].pk).first()  # locked, as the match by SESSION_ID is


def _paid_by_our_review(participation: Participation) -> bool:
    """Whether our review approved (or screened out) the submission on Prolific: as final as an APPROVED heard,
    so a status heard after it (even about a worker readmitted since) changes nothing."""
    return ProlificAction.objects.filter(
        participation=participation,
        kind=ProlificAction.Kind.REVIEW,
        status=ProlificAction.Status.DONE,
        action__in=PAID,
    ).exists()


def _apply_submission_status(event: ProlificEvent, prolific_study: str) -> str:
    participation = _participation_for(event.resource_id, event.participant_id, prolific_study)
    if participation is None:
        if event.participant_id and _without_session(event.participant_id):
            where = f"Prolific study {prolific_study}" if prolific_study else "a Prolific study Prolific did not say"
            return f"no participation of ours has this submission (it is of {where}): recorded only"
        return "no participation of ours has this submission"
    event.participation = participation
    earlier = ProlificEvent.objects.filter(resource_id=event.resource_id, event_type=SUBMISSION_EVENT).exclude(
        pk=event.pk
    )
    if event.sent_at is not None:
        newer = earlier.filter(sent_at__gt=event.sent_at).order_by("-sent_at").first()
        if newer is not None:
            return f"older than the {newer.status} already received: nothing done"
    if event.status != APPROVED and earlier.filter(status=APPROVED).exists():
        return "the submission was approved: nothing undoes it"
    if event.status != APPROVED and _paid_by_our_review(participation):
        return "our review approved the submission: nothing undoes it"
    reason = FREEING.get(event.status)
    if reason is None:
        return "recorded"
    if participation.state not in Participation.ACTIVE_STATES:
        return f"nothing to do: the participation is {participation.state}"
    if not abandonment.abandon(participation, reason=reason, at=timezone.now()):
        return "nothing to do: the participation moved on"
    return f"slot freed ({reason})"
