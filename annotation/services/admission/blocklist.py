"""Keeping past participants out: blocking workers here, and lists for the platforms.

Inside the app, a worker takes part in a task at most once (enforced at
entry). These exports let researchers also stop past participants on the
platform, before they even start:

- Prolific: a custom blocklist, the participant ids one per line (Prolific's
  "custom blocklist" field accepts ids separated by new lines or commas).
- Mechanical Turk: a worker CSV for the requester site's "Upload CSV" that
  assigns a qualification (score 1) to every past participant; the HIT then
  requires that this qualification "has not been granted".
"""

from __future__ import annotations

import csv
import io

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import AuditEntry, Worker
from annotation.services import audit
from tasks_app.models import Task

FORMATS = ("prolific", "mturk")


def participant_ids(*, task: Task, platform: str) -> list[str]:
    """Every worker id of this platform that has taken part in the task, in any study and state."""
    return list(
        Worker.objects.filter(platform=platform, participations__task=task)
        .distinct()
        .order_by("external_id")
        .values_list("external_id", flat=True)
    )


def default_qualification_name(task: Task) -> str:
    return f"took-part-{task.slug}"


def prolific_blocklist(*, task: Task) -> str:
    ids = participant_ids(task=task, platform=Worker.Platform.PROLIFIC)
    return "".join(f"{pid}\n" for pid in ids)


def mturk_qualification_csv(*, task: Task, qualification_name: str = "") -> str:
    name = (qualification_name or default_qualification_name(task)).strip()
    if not name or "," in name or '"' in name:
        raise ValidationError({"qualification": "The qualification name must be non-empty, without commas or quotes."})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["Worker ID", f"UPDATE-{name}"])
    for worker_id in participant_ids(task=task, platform=Worker.Platform.MTURK):
        writer.writerow([worker_id, "1"])
    return out.getvalue()


def export_participants(
    *, task: Task, fmt: str, qualification_name: str = "", actor: audit.Actor = None
) -> tuple[str, str, str]:
    """(content, content type, file name) of the export in the given format; the audit trail gets it (it
    holds identifiers), with how many it names."""
    if fmt == "prolific":
        content, result = (
            prolific_blocklist(task=task),
            ("text/plain; charset=utf-8", f"{task.slug}-prolific-blocklist.txt"),
        )
    elif fmt == "mturk":
        content = mturk_qualification_csv(task=task, qualification_name=qualification_name)
        result = ("text/csv; charset=utf-8", f"{task.slug}-mturk-qualification.csv")
    else:
        raise ValidationError({"format": f"Unknown format {fmt!r}; one of {', '.join(FORMATS)}."})
    platform = Worker.Platform.PROLIFIC if fmt == "prolific" else Worker.Platform.MTURK
    audit.record(
        actor=actor,
        action=AuditEntry.Action.EXPORT,
        target=f"task {task.slug}",
        detail={
            "kind": f"participants ({fmt})",
            "file": result[1],
            "participants": len(participant_ids(task=task, platform=platform)),
        },
    )
    return content, *result


def block_worker(*, worker: Worker, reason: str, actor: AbstractBaseUser | None = None) -> Worker:
    """Keep the worker out of every study from now on (their past answers stay)."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": "Say why the worker is blocked."})
    by = f" (by {actor.get_username()})" if actor is not None else ""
    with transaction.atomic():
        before = audit.snapshot(worker, _AUDITED)
        worker.blocked, worker.blocked_reason = True, f"{reason}{by}"[:300]
        Worker.objects.filter(pk=worker.pk).update(blocked=True, blocked_reason=worker.blocked_reason)
        after = audit.snapshot(worker, _AUDITED)
        audit.record(actor=actor, action=AuditEntry.Action.BLOCK, worker=worker, before=before, after=after)
    return worker


def unblock_worker(*, worker: Worker, actor: audit.Actor = None) -> Worker:
    with transaction.atomic():
        before = audit.snapshot(worker, _AUDITED)
        worker.blocked, worker.blocked_reason = False, ""
        Worker.objects.filter(pk=worker.pk).update(blocked=False, blocked_reason="")
        after = audit.snapshot(worker, _AUDITED)
        audit.record(actor=actor, action=AuditEntry.Action.UNBLOCK, worker=worker, before=before, after=after)
    return worker


_AUDITED = ("blocked", "blocked_reason")
