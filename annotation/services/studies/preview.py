"""Staff previews: any study, in any state, as a worker sees it, with nothing counted.

A preview is a Participation with ``is_preview`` set, of the staff member's own preview worker
(platform ``preview``, id ``staff-<user id>``), in the condition of their choice. It takes no slot
(``slot_index`` empty; the slot and one-per-task constraints are partial on ``is_preview``), and
``Participation.objects`` / ``Response.objects``, which every count, table and export read, leave it
out. Everything else is the real thing: the preview starts claimed, and the worker pages and the
session API take it through the same steps (training with reveals, the test step with its attention
checks, and whatever steps those pages gain) as any worker. Restarting deletes it with its answers
and events; the next start lays a fresh one out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse

from annotation.errors import ServiceError
from annotation.models import Condition, Participation, Study, Worker
from annotation.services.admission import entry

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser


class NoSuchCondition(ServiceError, LookupError):
    """The study has no condition with the shots asked for."""

    code = "no_such_condition"


def preview_worker(user: AbstractBaseUser | AnonymousUser) -> Worker:
    worker, _ = Worker.objects.get_or_create(platform=Worker.Platform.PREVIEW, external_id=f"staff-{user.pk}")
    return worker


def condition_for(study: Study, shots: int | None) -> Condition:
    """The condition previewed: the one with ``shots``, else the study's largest (it shows training)."""
    conditions = list(study.conditions.order_by("-shots"))
    if not conditions:
        raise NoSuchCondition(f"the study {study.slug} has no condition to preview")
    if shots is None:
        return conditions[0]
    for condition in conditions:
        if condition.shots == shots:
            return condition
    have = ", ".join(str(c.shots) for c in sorted(conditions, key=lambda c: c.shots))
    raise NoSuchCondition(f"the study {study.slug} has no {shots}-shot condition (it has {have})")


def current(*, study: Study, user: AbstractBaseUser | AnonymousUser) -> Participation | None:
    return Participation.all_objects.filter(is_preview=True, study=study, worker=preview_worker(user)).first()


def start(*, study: Study, user: AbstractBaseUser | AnonymousUser, shots: int | None = None) -> Participation:
    """The user's preview of ``study`` in the condition with ``shots``: theirs resumed, else a fresh one."""
    condition = condition_for(study, shots)
    with transaction.atomic():
        existing = current(study=study, user=user)
        if existing is not None and (shots is None or existing.condition_id == condition.pk):
            return existing
        if existing is not None:
            existing.delete()
        # Created as an entry creates a participation, so the preview takes the same steps from here.
        return entry.new_participation(
            study=study, condition=condition, worker=preview_worker(user), slot_index=None, is_preview=True
        )


def restart(*, study: Study, user: AbstractBaseUser | AnonymousUser) -> int | None:
    """Delete the user's preview of ``study`` (its answers and events go with it); the shots it had."""
    existing = current(study=study, user=user)
    if existing is None:
        return None
    shots = existing.condition.shots
    existing.delete()
    return shots


def discard(*, study: Study, conditions: QuerySet[Condition] | None = None) -> int:
    """Delete every staff preview of the study (of ``conditions`` only, if given); how many."""
    rows = Participation.all_objects.filter(is_preview=True, study=study)
    if conditions is not None:
        rows = rows.filter(condition__in=conditions)
    return rows.delete()[1].get(Participation._meta.label, 0)


def links(study: Study) -> list[tuple[int, str]]:
    """(shots, preview URL) per condition of the study."""
    url = reverse("worker:preview", args=[study.slug])
    return [
        (shots, f"{url}?shots={shots}") for shots in study.conditions.order_by("shots").values_list("shots", flat=True)
    ]
