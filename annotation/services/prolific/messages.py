"""Messages to a study's participants through Prolific: to one, in bulk, or as a broadcast (docs/prolific.md).

``plan`` is the dry run: one ``Outgoing`` per Prolific call (a study whose workers came from several Prolific
studies gets one bulk message or broadcast per Prolific study), with its recipients and whether it was sent
before. ``send`` sends what the plan says and records each message (``ProlificMessage``: who sent it, when,
the text, the recipients).

Never twice: a message's ``key`` is ours, derived from what it says and to whom (``again`` gives a message
sent before a fresh key, to send it once more). The row is claimed as ``uncertain`` and committed before the
call. A message to one participant or in bulk whose answer was lost stays uncertain and is not sent again by
a run (Prolific documents no way to make those calls safe to repeat): a person checks Prolific's sent messages
and resolves it. A broadcast carries the key as its ``id``, which Prolific documents as making a resend return
the broadcast already sent: so an uncertain broadcast is simply sent again.

Bad input is refused before any call (``MessageError``): an empty text, a text over ``MAX_BODY_CHARS``, more
recipients than Prolific takes in one call (``MAX_RECIPIENTS``), a participant not of this study, an unknown
template or language.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from django.db import IntegrityError, transaction

from annotation.errors import ServiceError
from annotation.models import AuditEntry, Participation, ProlificMessage, Study
from annotation.services import audit
from annotation.services.prolific.client import ProlificClient, ProlificError
from annotation.services.prolific.message_templates import TEMPLATES
from annotation.services.prolific.runs import (
    DONE,
    FAILED,
    TODO,
    UNCERTAIN,
    CallLog,
    make_client,
    prolific_participations,
    study_id,
)
from annotation.services.state import pseudonyms

Kind = ProlificMessage.Kind
Status = ProlificMessage.Status
KINDS = tuple(Kind.values)
# Prolific's reference: a broadcast "can go to as many people as a bulk message, 4,000 by default".
MAX_RECIPIENTS = 4000
# The reference documents no maximum for a body ("Text is sanitised for safe storage and display"); this is
# ours, so that a text pasted by mistake (a whole consent form, a log) is refused before it reaches anyone.
MAX_BODY_CHARS = 5000
MAX_SUBJECT_CHARS = 200


class MessageError(ServiceError):
    """Bad input for a message: nothing was sent."""

    code = "invalid"
    status = 400


@dataclass
class Outgoing:
    """One Prolific call: a message to one participant, a bulk message or a broadcast."""

    kind: str
    prolific_study: str
    recipients: list[str]
    subject: str
    body: str
    key: str
    state: str = TODO
    note: str = ""
    template: str = ""
    language: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def texts(*, study: Study, template: str | None, language: str | None, text: str, subject: str) -> tuple[str, str]:
    """The subject and body: the template's in the language asked (or the study's, or English), or as given."""
    if template:
        if template not in TEMPLATES:
            raise MessageError(f"Unknown template {template!r}; one of {', '.join(sorted(TEMPLATES))}.")
        versions = TEMPLATES[template]
        lang = language or study.language or "en"
        if lang not in versions:
            raise MessageError(f"Template {template!r} has no {lang!r} text; it has {', '.join(versions)}.")
        chosen = versions[lang]
        return subject or chosen.subject, text or chosen.body
    if language:
        raise MessageError("--language chooses a template's text: give --template too.")
    return subject, text


def _check(kind: str, subject: str, body: str, recipients: int) -> None:
    if kind not in KINDS:
        raise MessageError(f"Unknown kind of message {kind!r}; one of {', '.join(KINDS)}.")
    if not body.strip():
        raise MessageError("The message is empty: give a text or a template.")
    if len(body) > MAX_BODY_CHARS:
        raise MessageError(f"The message has {len(body)} characters; at most {MAX_BODY_CHARS} are sent.")
    if kind == Kind.BROADCAST and not subject.strip():
        raise MessageError("A broadcast needs a subject (--subject, or a template's).")
    if len(subject) > MAX_SUBJECT_CHARS:
        raise MessageError(f"The subject has {len(subject)} characters; at most {MAX_SUBJECT_CHARS}.")
    if recipients > MAX_RECIPIENTS:
        raise MessageError(
            f"{recipients} recipients in one {kind} message; Prolific takes at most {MAX_RECIPIENTS} in one call."
        )


def recipients_of(study: Study) -> dict[str, list[str]]:
    """The study's Prolific participants who can be written to, by Prolific study (withdrawn ones left out)."""
    participations = Participation.all_objects.filter(study=study, is_preview=False, withdrawn_at__isnull=True)
    found: dict[str, list[str]] = {}
    for p in prolific_participations(participations.select_related("worker").order_by("pk")):
        pid = p.worker.external_id
        if pseudonyms.is_pseudonym(pid) or not study_id(p):
            continue
        ids = found.setdefault(study_id(p), [])
        if pid not in ids:
            ids.append(pid)
    return found


def _key(
    study: Study, kind: str, prolific_study: str, recipients: list[str], subject: str, body: str, again: str
) -> str:
    what = json.dumps([study.pk, kind, prolific_study, sorted(recipients), subject, body, again])
    return hashlib.sha256(what.encode()).hexdigest()[:32]


def plan(
    *,
    study: Study,
    kind: str,
    text: str = "",
    subject: str = "",
    template: str | None = None,
    language: str | None = None,
    participant: str | None = None,
    again: str = "",
    actor: audit.Actor = None,
) -> list[Outgoing]:
    """The dry run: the calls ``send`` would make now, each with its state. Sends nothing; with an ``actor``
    (a person's dry run, not ``send``'s own) the audit trail records who looked at what."""
    subject, body = texts(study=study, template=template, language=language, text=text, subject=subject)
    by_study = recipients_of(study)
    if kind == Kind.ONE:
        if not participant:
            raise MessageError("A message to one participant needs their Prolific id (--to).")
        where = next((sid for sid, ids in by_study.items() if participant in ids), None)
        if where is None:
            raise MessageError(f"No Prolific participant with this id in study {study.slug!r} (or they withdrew).")
        by_study = {where: [participant]}
    elif participant:
        raise MessageError(f"--to is for a message to one participant; a {kind} message goes to all of them.")
    if not by_study:
        raise MessageError(f"Study {study.slug!r} has no Prolific participant to write to.")
    out = []
    for sid, ids in sorted(by_study.items()):
        _check(kind, subject, body, len(ids))
        key = _key(study, kind, sid, ids, subject, body, again)
        item = Outgoing(kind, sid, ids, subject, body, key, template=template or "", language=language or "")
        before = ProlificMessage.objects.filter(key=key).first()
        if before is not None:
            item.state, item.note = _state_of(before)
        out.append(item)
    if actor is not None:
        for item in out:
            _audit(AuditEntry.Action.MESSAGE_DRY_RUN, actor, study, item)
    return out


def _audit(action: str, actor: audit.Actor, study: Study, item: Outgoing) -> None:
    """One entry per call: the text and how many it reaches (the recipients' ids stay in the message's row,
    which a withdrawal pseudonymizes)."""
    after = {"kind": item.kind, "prolific_study": item.prolific_study, "recipient_count": len(item.recipients)}
    after |= {"subject": item.subject, "text": item.body, "state": item.state}
    audit.record(actor=actor, action=action, study=study, after=after, detail={"key": item.key, "note": item.note})


def _state_of(row: ProlificMessage) -> tuple[str, str]:
    if row.status == Status.DONE:
        return DONE, f"sent {row.updated_at:%Y-%m-%d %H:%M} UTC by {row.sent_by}"
    if row.status == Status.UNCERTAIN and row.kind == Kind.BROADCAST:
        return TODO, "sent before, answer unknown: sent again under the same id, which Prolific sends once"
    if row.status == Status.UNCERTAIN:
        return UNCERTAIN, f"sent, answer unknown: check Prolific's sent messages, then resolve {row.key}"
    return TODO, f"again (before: {row.error})"


def send(
    *,
    study: Study,
    kind: str,
    sent_by: str,
    text: str = "",
    subject: str = "",
    template: str | None = None,
    language: str | None = None,
    participant: str | None = None,
    again: str = "",
    client: ProlificClient | None = None,
    actor: audit.Actor = None,
) -> list[Outgoing]:
    """Send what the plan says, each call once (see the module's docstring). Run outside a transaction.
    The audit trail gets each call and its state (``actor``: who sent it; default ``sent_by``)."""
    items = plan(
        study=study,
        kind=kind,
        text=text,
        subject=subject,
        template=template,
        language=language,
        participant=participant,
        again=again,
    )
    client = client or make_client()
    log = CallLog()
    client.on_call = log
    for item in items:
        if item.state == TODO:
            _send_one(client, log, study, item, sent_by)
            _audit(AuditEntry.Action.MESSAGE, actor if actor is not None else sent_by, study, item)
    return items


def _claim(study: Study, item: Outgoing, sent_by: str) -> ProlificMessage | None:
    """The message's row, claimed as uncertain and committed before the call; None if it must not be sent."""
    blocked = (Status.DONE,) if item.kind == Kind.BROADCAST else (Status.DONE, Status.UNCERTAIN)
    fields = {
        "study": study,
        "kind": item.kind,
        "prolific_study": item.prolific_study,
        "template": item.template,
        "language": item.language,
        "subject": item.subject,
        "body": item.body,
        "recipients": item.recipients,
        "recipient_count": len(item.recipients),
        "sent_by": sent_by[:150],
    }
    try:
        with transaction.atomic():
            row, created = ProlificMessage.objects.select_for_update().get_or_create(
                key=item.key, defaults={**fields, "status": Status.UNCERTAIN}
            )
            if created:
                return row
            if row.status in blocked:
                return None
            row.status, row.error, row.sent_by = Status.UNCERTAIN, "", sent_by[:150]
            row.save(update_fields=["status", "error", "sent_by", "updated_at"])
            return row
    except IntegrityError:  # another run created it between our read and our insert
        return None


def _send_one(client: ProlificClient, log: CallLog, study: Study, item: Outgoing, sent_by: str) -> None:
    row = _claim(study, item, sent_by)
    if row is None:
        item.state, item.note = UNCERTAIN, "being sent by another run, or sent already"
        return
    log.message = row
    try:
        if item.kind == Kind.ONE:
            answer = client.send_message(recipient_id=item.recipients[0], body=item.body, study_id=item.prolific_study)
        elif item.kind == Kind.BULK:
            answer = client.bulk_message(ids=item.recipients, body=item.body, study_id=item.prolific_study)
        else:
            answer = client.broadcast(
                broadcast_id=item.key,
                study_id=item.prolific_study,
                subject=item.subject,
                body=item.body,
                participant_ids=item.recipients,
            )
    except ProlificError as exc:
        if exc.definite:  # refused: nothing sent; a run tries again
            row.status, row.error = Status.FAILED, str(exc)
            item.state, item.note = FAILED, str(exc)
            if exc.status == 404 and item.kind == Kind.BROADCAST:
                item.note += " (broadcasts are not enabled for this study's workspace: send a bulk message)"
        else:
            row.status, row.error = Status.UNCERTAIN, str(exc)
            item.state, item.note = _state_of(row)
            if item.kind == Kind.BROADCAST:
                item.state = UNCERTAIN
                item.note = f"{exc} Run again: the broadcast's own id ({item.key}) keeps Prolific from sending twice."
        row.save(update_fields=["status", "error", "updated_at"])
        return
    finally:
        log.message = None
    row.status, row.prolific_id = Status.DONE, str(answer.get("id") or "")[:64]
    row.save(update_fields=["status", "prolific_id", "updated_at"])
    item.state, item.note = DONE, f"broadcast {row.prolific_id}" if row.prolific_id else "sent"


def resolve(*, key: str, sent: bool, note: str) -> ProlificMessage:
    """A person checked an uncertain message on Prolific: mark it sent, or free it to be sent again."""
    # audit: prolific_message_resolved before=uncertain after=done|failed
    row = ProlificMessage.objects.filter(key=key).first()
    if row is None:
        raise MessageError(f"No message with key {key!r}.")
    if row.status != Status.UNCERTAIN:
        raise MessageError(f"Message {key} is {row.status}, not uncertain: nothing to resolve.")
    row.status = Status.DONE if sent else Status.FAILED
    row.error = f"resolved by hand: {note}"[:1000]
    row.save(update_fields=["status", "error", "updated_at"])
    return row
