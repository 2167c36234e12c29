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

from annotation.models import Worker
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


def export_participants(*, task: Task, fmt: str, qualification_name: str = "") -> tuple[str, str, str]:
    """(content, content type, file name) of the export in the given format."""
    if fmt == "prolific":
        return prolific_blocklist(task=task), "text/plain; charset=utf-8", f"{task.slug}-prolific-blocklist.txt"
    if fmt == "mturk":
        content = mturk_qualification_csv(task=task, qualification_name=qualification_name)
        return content, "text/csv; charset=utf-8", f"{task.slug}-mturk-qualification.csv"
    raise ValidationError({"format": f"Unknown format {fmt!r}; one of {', '.join(FORMATS)}."})


def block_worker(*, worker: Worker, reason: str, actor: AbstractBaseUser | None = None) -> Worker:
    """Keep the worker out of every study from now on (their past answers stay)."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": "Say why the worker is blocked."})
    by = f" (by {actor.get_username()})" if actor is not None else ""
    worker.blocked, worker.blocked_reason = True, f"{reason}{by}"[:300]
    Worker.objects.filter(pk=worker.pk).update(blocked=True, blocked_reason=worker.blocked_reason)
    return worker


def unblock_worker(*, worker: Worker) -> Worker:
    worker.blocked, worker.blocked_reason = False, ""
    Worker.objects.filter(pk=worker.pk).update(blocked=False, blocked_reason="")
    return worker
