"""group: add everyone who took part in a task to its Prolific participant group (a blocklist for its other studies).

The group (*Took part in <task>*) is created in ``PROLIFIC_WORKSPACE_ID`` on the first run and its id stored
(``ProlificGroup``). Everyone is added in one call (``POST participant-groups/{id}/participants/``; members
already in are ignored); if Prolific refuses it, they are added one by one so each failure is reported.
"""

from __future__ import annotations

import json

from django.conf import settings

from annotation.models import Participation, ProlificAction, ProlificGroup, Study
from annotation.services.prolific.client import (
    CallRecord,
    ProlificClient,
    ProlificConnectionError,
    ProlificError,
    ProlificRequestError,
    ProlificServerError,
)
from annotation.services.prolific.runs import (
    DONE,
    FAILED,
    OFF_MESSAGE,
    TODO,
    CallLog,
    Kind,
    Report,
    Row,
    Status,
    claim,
    enabled,
    existing,
    finish,
    make_client,
    prolific_participations,
    row_for,
    run_each,
    state_of,
)


def group_name(study: Study) -> str:
    return f"Took part in {study.task.slug}"


def group_rows(study: Study) -> list[Row]:
    participations = prolific_participations(
        Participation.objects.filter(task=study.task).select_related("worker", "study").order_by("study", "pk")
    )
    before = existing(participations, Kind.GROUP)
    rows = []
    for p in participations:
        state, note = state_of(before.get(p.pk), kind=Kind.GROUP)
        rows.append(row_for(p, "GROUP", state, note))
    return rows


def plan_notes(study: Study) -> list[str]:
    group = ProlificGroup.objects.filter(task=study.task).first()
    if group is not None:
        return [f"participant group {group.name!r} ({group.group_id})"]
    notes = [f"creates the participant group {group_name(study)!r}"]
    if not settings.PROLIFIC_WORKSPACE_ID:
        notes.append("PROLIFIC_WORKSPACE_ID is not set: the group cannot be created")
    return notes


def _ensure_group(client: ProlificClient, study: Study) -> ProlificGroup:
    group = ProlificGroup.objects.filter(task=study.task).first()
    if group is not None:
        return group
    if not settings.PROLIFIC_WORKSPACE_ID:
        raise ProlificRequestError("PROLIFIC_WORKSPACE_ID is not set: cannot create the participant group.")
    name = group_name(study)
    answer = client.create_group(
        name=name,
        workspace_id=settings.PROLIFIC_WORKSPACE_ID,
        description=f"Everyone who took part in {study.task.slug}: block them from its other studies.",
    )
    group_id = str(answer.get("id") or "")
    if not group_id:
        raise ProlificServerError(f"Prolific created a group but gave no id: {answer!r}")
    group, _ = ProlificGroup.objects.get_or_create(task=study.task, defaults={"group_id": group_id, "name": name})
    return group


def run_group(client: ProlificClient, log: CallLog, study: Study, report: Report) -> None:
    todo = [row for row in report.rows if row.state == TODO]
    if not todo:
        return
    try:
        group = _ensure_group(client, study)
    except ProlificError as exc:
        for row in todo:
            row.state, row.note = FAILED, str(exc)
        return
    report.notes = [f"participant group {group.name!r} ({group.group_id})"]
    claims = {}
    for row in todo:
        claimed = claim(
            row.participation_id, Kind.GROUP, action="GROUP", blocked=(Status.DONE,), prolific_id=group.group_id
        )
        if claimed is None:
            row.state, row.note = DONE, "done by another run"
        else:
            claims[row.participation_id] = (row, claimed)
    ids = sorted({row.participant for row, _ in claims.values()})
    try:
        client.add_to_group(group.group_id, ids)  # adding a member twice is ignored by Prolific
    except (ProlificRequestError, ProlificServerError):
        # One bad id spoils the batch: add one by one, so each participant gets their own answer.
        run_each(
            [row for row, _ in claims.values()],
            lambda row: _group_one(client, log, group, *claims[row.participation_id]),
        )
        return
    except ProlificError as exc:
        for row, claimed in claims.values():
            finish(claimed, Status.FAILED, str(exc))
            row.state, row.note = FAILED, str(exc)
        return
    for row, claimed in claims.values():
        finish(claimed, Status.DONE)
        row.state = DONE


def _group_one(client: ProlificClient, log: CallLog, group: ProlificGroup, row: Row, claimed: ProlificAction) -> None:
    log.action = claimed
    try:
        client.add_to_group(group.group_id, [row.participant])
    except ProlificError as exc:
        finish(claimed, Status.FAILED, str(exc))
        row.state, row.note = FAILED, str(exc)
        if isinstance(exc, ProlificConnectionError):
            raise
        return
    finally:
        log.action = None
    finish(claimed, Status.DONE)
    row.state = DONE


class _PseudonymisedLog(CallLog):
    """The call log of a withdrawn participant's removal: their id is written as its pseudonym."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def __call__(self, record: CallRecord) -> None:
        request = json.loads(json.dumps(record.request).replace(self.old, self.new))
        answer, error = record.response.replace(self.old, self.new), record.error.replace(self.old, self.new)
        super().__call__(
            CallRecord(record.method, record.path, request, record.status, answer, record.ok, error, record.seconds)
        )


def groups_of(task_ids: set[int]) -> list[ProlificGroup]:
    return list(ProlificGroup.objects.filter(task__in=task_ids).order_by("name"))


def remove_member(
    *, participant: str, pseudonym: str, task_ids: set[int], client: ProlificClient | None = None
) -> list[str]:
    """Take a withdrawn participant out of the participant groups of their tasks; what happened, group by group.

    Prolific ignores a non-member, so a second try is harmless. The call log names them by their pseudonym."""
    # audit: prolific_group_remove before=member after=removed
    groups = groups_of(task_ids)
    if not groups:
        return []
    if client is None and not enabled():
        return [f"not removed from Prolific participant group {g.name!r}: {OFF_MESSAGE}" for g in groups]
    client = client or make_client()
    client.on_call = _PseudonymisedLog(participant, pseudonym)
    notes = []
    for g in groups:
        try:
            client.remove_from_group(g.group_id, [participant])
        except ProlificError as exc:
            notes.append(
                f"NOT removed from Prolific participant group {g.name!r} ({g.group_id}): "
                f"{str(exc).replace(participant, pseudonym)} Remove them on Prolific by hand."
            )
        else:
            notes.append(f"removed from Prolific participant group {g.name!r} ({g.group_id})")
    return notes
