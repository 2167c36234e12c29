"""One function writes the audit trail (``record``); the rest read it or prepare its values.

Why one table written beside each change rather than a read that unions the records already kept
(``ParticipationEvent.actor``, ``decided_by``, ``created_by``, ``LaunchOverride``, ``Withdrawal``,
Prolific action rows, the admin's LogEntry): none of those holds the values before and after a study's
status or settings change, a withdrawal deletes or rewrites several of them, and a union of a dozen
shapes could be neither filtered by study nor exported nor permissioned as one. So each service writes
its entry in the transaction of its change, and names the existing record (an event's, a decision's,
a job's pk) in ``detail``: the trail points to them, it does not copy them."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Model, QuerySet
from django.utils import timezone

from annotation.models import AuditEntry, Participation, Study, Worker
from annotation.services.state import pseudonyms

# Who acted: a signed-in user, or the name of the command or job that acted for nobody in particular.
Actor = AbstractBaseUser | AnonymousUser | str | None
SYSTEM = "system"


def actor_name(actor: Actor) -> str:
    if isinstance(actor, str):
        return actor or SYSTEM
    if actor is None or not actor.pk:
        return SYSTEM
    return actor.get_username()


def _plain(value: Any) -> Any:
    """The value as the JSON column will give it back (dates as ISO text, decimals as text)."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def snapshot(obj: Model, fields: Iterable[str]) -> dict[str, Any]:
    """The named fields of ``obj`` as plain JSON values (a foreign key by its pk)."""
    out = {}
    for name in fields:
        field = obj._meta.get_field(name)
        out[name] = getattr(obj, field.attname)  # type: ignore[union-attr]
    return _plain(out)


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Only the keys whose value changed, before and after."""
    before, after = _plain(dict(before)), _plain(dict(after))
    keys = [k for k in {**before, **after} if before.get(k) != after.get(k)]
    return {k: before.get(k) for k in keys}, {k: after.get(k) for k in keys}


def _hide(value: Any, identifiers: dict[str, str]) -> Any:
    """``value`` with every identifier replaced by its pseudonym (a caller's slip never reaches the table)."""
    text = json.dumps(value, cls=DjangoJSONEncoder)
    for clear, alias in identifiers.items():
        text = text.replace(clear, alias)
    return json.loads(text)


def _identifiers(participation: Participation | None, others: Iterable[Participation | Worker]) -> dict[str, str]:
    people = [o.worker if isinstance(o, Participation) else o for o in others]
    if participation is not None:
        people.append(participation.worker)
    return {
        w.external_id: pseudonyms.pseudonym(platform=w.platform, external_id=w.external_id)
        for w in people
        if w.external_id and not pseudonyms.is_pseudonym(w.external_id) and w.platform != Worker.Platform.PREVIEW
    }


def record(
    *,
    actor: Actor,
    action: str,
    study: Study | None = None,
    participation: Participation | None = None,
    worker: Worker | None = None,
    target: str = "",
    others: Iterable[Participation | Worker] = (),
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    detail: Mapping[str, Any] | None = None,
    at: datetime | None = None,
) -> AuditEntry:
    """Write one entry of the trail: who (``actor``), what (``action``, one of ``AuditEntry.Action``), on
    what (a study, a participation, a worker named by pseudonym, or ``target`` for anything else), the
    values before and after, and anything else worth keeping (``detail``). Call it inside the transaction
    of the change it records. ``others``: more participants the values may name (a bulk message's
    recipients, say), whose identifiers are hidden as the target's are.

    The participant's platform identifier is never stored: the participation is named by its pk, a
    worker by the keyed hash (``state.pseudonyms``), and any copy of their identifier a caller put in
    the values is replaced by that hash."""
    if action not in AuditEntry.Action.values:
        raise ValueError(f"unknown audit action {action!r}; one of {', '.join(AuditEntry.Action.values)}")
    if study is None and participation is not None:
        study = participation.study
    hidden = _identifiers(participation, [*others, *([worker] if worker is not None else [])])
    if participation is not None:
        target = f"participation {participation.pk}"
    elif worker is not None:
        target = f"worker {pseudonyms.pseudonym(platform=worker.platform, external_id=worker.external_id)}"
    elif study is not None:
        target = f"study {study.slug}"
    user = actor if isinstance(actor, User) and actor.pk else None
    return AuditEntry.objects.create(
        at=at or timezone.now(),
        actor=user,
        actor_name=actor_name(actor)[:150],
        action=action,
        study=study,
        study_slug=study.slug if study is not None else "",
        participation=participation,
        target=target,
        before=_hide(before or {}, hidden),
        after=_hide(after or {}, hidden),
        detail=_hide(detail or {}, hidden),
    )


# --- Reading --------------------------------------------------------------------------

COLUMNS = ("id", "at", "actor", "action", "study", "participation", "target", "before", "after", "detail")


def trail(*, study_slug: str | None = None) -> QuerySet[AuditEntry]:
    """The trail, oldest first (one study's, by slug, if given: deleted studies are kept by slug)."""
    entries = AuditEntry.objects.order_by("at", "id")
    return entries.filter(study_slug=study_slug) if study_slug else entries


def _row(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.pk,
        "at": entry.at.isoformat(),
        "actor": entry.actor_name,
        "action": entry.action,
        "study": entry.study_slug,
        "participation": entry.participation_id,
        "target": entry.target,
        "before": entry.before,
        "after": entry.after,
        "detail": entry.detail,
    }


def export(entries: Iterable[AuditEntry], *, fmt: str) -> str:
    """The entries as CSV (before/after/detail as JSON text in their cells) or as a JSON list."""
    rows = [_row(e) for e in entries]
    if fmt == "json":
        return json.dumps(rows, indent=2, ensure_ascii=False, cls=DjangoJSONEncoder) + "\n"
    if fmt != "csv":
        raise ValueError(f"unknown format {fmt!r}; csv or json")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: json.dumps(v, ensure_ascii=False) if k in ("before", "after", "detail") else v for k, v in row.items()}
        )
    return out.getvalue()
