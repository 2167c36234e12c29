"""The machinery every Prolific operation shares: the report, the call log, and the claim of a row.

``plan`` (the dry run) and ``run`` of each operation (``review``, ``bonus``, ``group``, ``places``) build a
``Report``: one ``Row`` per participant, with its state. A run claims the participant's ``ProlificAction``
(unique per participation and kind) and commits *before* calling Prolific, then records the answer; every
HTTP exchange goes to ``ProlificCall`` through ``CallLog``.

Run outside a database transaction: each claim is committed before its call (models/prolific.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation.errors import ServiceError
from annotation.models import Participation, ProlificAction, ProlificCall, ProlificMessage, Worker
from annotation.services.prolific.client import CallRecord, ProlificClient, ProlificConnectionError

Kind = ProlificAction.Kind
Status = ProlificAction.Status

# Row states in a report.
TODO, DONE, UNCERTAIN, SKIP, DECIDE, FAILED, NOT_TRIED = (
    "to do",
    "done",
    "uncertain",
    "skip",
    "needs decision",
    "failed",
    "not tried",
)
STATES = (TODO, DONE, UNCERTAIN, SKIP, DECIDE, FAILED, NOT_TRIED)

# What a run reports as it goes: progress(done, total) (annotation.services.jobs.Progress).
ProgressFn = Callable[[int, int], object]


class ProlificDisabled(ServiceError):
    """The integration is off: no PROLIFIC_API_TOKEN."""

    code = "prolific_off"
    status = 409


class UnknownOperation(ServiceError, ValueError):
    code = "not_found"
    status = 404


def enabled() -> bool:
    return bool(settings.PROLIFIC_API_TOKEN)


OFF_MESSAGE = "The Prolific integration is off: set PROLIFIC_API_TOKEN to turn it on (docs/prolific.md)."


def make_client() -> ProlificClient:
    if not enabled():
        raise ProlificDisabled(OFF_MESSAGE)
    return ProlificClient(
        token=settings.PROLIFIC_API_TOKEN,
        base_url=settings.PROLIFIC_API_URL,
        timeout=float(settings.PROLIFIC_TIMEOUT_SECONDS),
    )


@dataclass
class Row:
    participation_id: int
    participant: str
    study: str
    action: str
    state: str
    note: str = ""
    submission: str = ""
    prolific_study: str = ""
    amount: Decimal | None = None
    currency: str = ""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["amount"] = None if self.amount is None else f"{self.amount:.2f}"
        return data


@dataclass
class Report:
    operation: str
    study: str
    dry_run: bool
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(row.state for row in self.rows))

    @property
    def total(self) -> Decimal:
        return sum((r.amount or Decimal(0) for r in self.rows if r.state in (TODO, DONE)), Decimal("0.00"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "study": self.study,
            "dry_run": self.dry_run,
            "counts": self.counts,
            "total": f"{self.total:.2f}",
            "notes": self.notes,
            "rows": [r.as_dict() for r in self.rows],
        }


# --- Planning ------------------------------------------------------------------------------------


def prolific_participations(participations: Iterable[Participation]) -> list[Participation]:
    return [p for p in participations if p.worker.platform == Worker.Platform.PROLIFIC]


def existing(participations: list[Participation], kind: str) -> dict[int, ProlificAction]:
    rows = ProlificAction.objects.filter(participation__in=participations, kind=kind)
    return {a.participation_id: a for a in rows}


def state_of(action: ProlificAction | None, *, kind: str) -> tuple[str, str]:
    """A row's state from what was recorded before (None: never tried)."""
    if action is None:
        return TODO, ""
    if action.status == Status.DONE:
        return DONE, ""
    if action.status == Status.UNCERTAIN and kind == Kind.BONUS:
        return UNCERTAIN, f"sent, answer unknown: check bulk bonus {action.prolific_id} on Prolific. {action.error}"
    if action.status == Status.SET_UP:
        return TODO, f"pay the bonus already set up ({action.prolific_id})"
    return TODO, f"again (before: {action.error})" if action.error else ""


def study_id(p: Participation) -> str:
    """The Prolific study the participant came from (``STUDY_ID``, recorded at entry)."""
    return str((p.platform_data or {}).get("STUDY_ID", ""))


def row_for(p: Participation, action: str, state: str, note: str = "", **extra: Any) -> Row:
    data = p.platform_data or {}
    return Row(
        participation_id=p.pk,
        participant=p.worker.external_id,
        study=p.study.slug,
        action=action,
        state=state,
        note=note,
        submission=str(data.get("SESSION_ID", "")),
        prolific_study=str(data.get("STUDY_ID", "")),
        **extra,
    )


# --- Running -------------------------------------------------------------------------------------


class CallLog:
    """Writes each HTTP exchange to ProlificCall, under the action being worked on."""

    def __init__(self) -> None:
        self.action: ProlificAction | None = None
        self.message: ProlificMessage | None = None

    def __call__(self, record: CallRecord) -> None:
        ProlificCall.objects.create(
            action=self.action,
            message=self.message,
            method=record.method,
            path=record.path[:300],
            request=record.request,
            status_code=record.status,
            response=record.response,
            ok=record.ok,
            error=record.error,
            seconds=round(record.seconds, 3),
        )


def claim(
    participation_id: int, kind: str, *, action: str, blocked: tuple[str, ...], **fields: Any
) -> ProlificAction | None:
    """Take the (participation, kind) row for this run; None if it is done (or must not be retried)."""
    with transaction.atomic():
        row, _ = ProlificAction.objects.select_for_update().get_or_create(
            participation_id=participation_id, kind=kind, defaults={"action": action, "status": Status.FAILED}
        )
        if row.status in blocked:
            return None
        row.action = action
        for name, value in fields.items():
            setattr(row, name, value)
        row.save()
    return row


def finish(row: ProlificAction, status: str, error: str = "", **fields: Any) -> None:
    row.status, row.error = status, error
    for name, value in fields.items():
        setattr(row, name, value)
    row.save()


def run_each(rows: list[Row], one: Callable[[Row], None], progress: ProgressFn | None = None) -> None:
    """``one(row)`` for every row to do, in order; once Prolific is unreachable the rest are not tried."""
    unreachable = ""
    todo = [row for row in rows if row.state == TODO]
    for done, row in enumerate(todo, start=1):
        if unreachable:
            row.state, row.note = NOT_TRIED, unreachable
        else:
            try:
                one(row)
            except ProlificConnectionError as exc:
                unreachable = f"not tried: {exc}"
        if progress is not None:
            progress(done, len(todo))
