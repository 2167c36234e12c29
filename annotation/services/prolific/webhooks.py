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
- nothing undoes an approval: after APPROVED, a later status changes nothing;
- only an active participation (claimed, training, test) is freed; a completed, excluded or declined one
  keeps its state and the event is recorded beside it.

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
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.errors import ServiceError
from annotation.models import Participation, ProlificEvent, ProlificHookSecret, Worker
from annotation.services.admission import abandonment

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
    # (the same on a retry) stands in for it.
    event_id = _header(headers, EVENT_ID_HEADER) or "body:" + hashlib.sha256(body).hexdigest()
    # X-Timestamp orders events but is not signed: it is kept no later than the signed request time.
    signed_at = _unix_seconds(_header(headers, TIMESTAMP_HEADER))
    try:
        sent = min(_unix_seconds(_header(headers, EVENT_TIME_HEADER)), signed_at)
    except BadWebhook:
        sent = signed_at
    sent_at = datetime.fromtimestamp(sent, tz=UTC)
    return record_and_apply(event_id=event_id, source=ProlificEvent.Source.WEBHOOK, payload=payload, sent_at=sent_at)


def record_and_apply(*, event_id: str, source: str, payload: dict[str, Any], sent_at: datetime) -> ProlificEvent | None:
    """Record one status change heard from Prolific and do what it calls for, once; None if already recorded.

    The one function behind the webhook and polling."""
    event_type = str(payload.get("event_type") or "")[:60]
    resource_id = str(payload.get("resource_id") or "")[:64]
    status = str(payload.get("status") or "").upper()[:30]
    participant_id = str(payload.get("participant_id") or "")[:128]
    try:
        with transaction.atomic():
            event = ProlificEvent.objects.create(
                event_id=event_id[:100],
                source=source,
                event_type=event_type,
                resource_id=resource_id,
                participant_id=participant_id,
                status=status,
                sent_at=sent_at,
                payload=payload,
            )
            if event_type == SUBMISSION_EVENT:
                event.outcome = _apply_submission_status(event)
            else:
                event.outcome = "recorded"
            event.save(update_fields=["outcome", "participation"])
    except IntegrityError:
        if ProlificEvent.objects.filter(event_id=event_id[:100]).exists():
            logger.info("Prolific event %s received again: already recorded, nothing done", event_id)
            return None
        raise
    logger.info("Prolific %s %s %s (%s): %s", event_type, resource_id, status or "-", source, event.outcome)
    return event


def _participation_for(submission_id: str, participant_id: str) -> Participation | None:
    """The participation of a submission: by the SESSION_ID stored at entry (the submission id), else the
    participant's one active participation that has none recorded."""
    prolific = Participation.objects.select_for_update(of=("self",)).filter(worker__platform=Worker.Platform.PROLIFIC)
    found = prolific.filter(platform_data__SESSION_ID=submission_id).first()
    if found is not None or not participant_id:
        return found
    candidates = [
        p
        for p in prolific.filter(worker__external_id=participant_id, state__in=Participation.ACTIVE_STATES)
        if not (p.platform_data or {}).get("SESSION_ID")
    ]
    return candidates[0] if len(candidates) == 1 else None


def _apply_submission_status(event: ProlificEvent) -> str:
    participation = _participation_for(event.resource_id, event.participant_id)
    if participation is None:
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
    reason = FREEING.get(event.status)
    if reason is None:
        return "recorded"
    if participation.state not in Participation.ACTIVE_STATES:
        return f"nothing to do: the participation is {participation.state}"
    if not abandonment.abandon(participation, reason=reason, at=timezone.now()):
        return "nothing to do: the participation moved on"
    return f"slot freed ({reason})"
