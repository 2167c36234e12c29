"""The three Prolific operations on a study: review (approve / screen out), bonus, group.

``plan`` is the dry run: who, what, how much, and what was already done; it changes nothing (the bonus
plan reads the reward posted on each Prolific study, the base its bonuses top up).
``run`` does what the plan says, one participant at a time, records each call
(``ProlificCall``) and each outcome (``ProlificAction``, unique per participation and kind),
and goes on after a participant's failure. A second run does only what is still to do.

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
from annotation.models import Participation, ProlificAction, ProlificCall, ProlificGroup, Study, Worker
from annotation.services.pay import PAY_RULE_VERSION, BaseReward, pay_lines, stored_base
from annotation.services.prolific.client import (
    CallRecord,
    ProlificClient,
    ProlificConnectionError,
    ProlificError,
    ProlificRequestError,
    ProlificServerError,
)
from annotation.services.prolific.outcomes import NEEDS_DECISION, NONE, PAID, REJECT, SCREEN_OUT, Decision, decide

OPERATIONS = ("review", "bonus", "group")
CURRENCIES = ("GBP", "USD")  # what Prolific studies are paid in
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
            "notes": self.notes,
            "rows": [r.as_dict() for r in self.rows],
        }


# --- Planning ------------------------------------------------------------------------------------


def _prolific_participations(participations: Iterable[Participation]) -> list[Participation]:
    return [p for p in participations if p.worker.platform == Worker.Platform.PROLIFIC]


def _existing(participations: list[Participation], kind: str) -> dict[int, ProlificAction]:
    rows = ProlificAction.objects.filter(participation__in=participations, kind=kind)
    return {a.participation_id: a for a in rows}


def _state_of(action: ProlificAction | None, *, kind: str) -> tuple[str, str]:
    if action is None:
        return TODO, ""
    if action.status == Status.DONE:
        return DONE, ""
    if action.status == Status.UNCERTAIN and kind == Kind.BONUS:
        return UNCERTAIN, f"sent, answer unknown: check bulk bonus {action.prolific_id} on Prolific. {action.error}"
    if action.status == Status.SET_UP:
        return TODO, f"pay the bonus already set up ({action.prolific_id})"
    return TODO, f"again (before: {action.error})" if action.error else ""


def _row(p: Participation, action: str, state: str, note: str = "", **extra: Any) -> Row:
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


def _review_rows(study: Study, decide_fn: Callable[[Participation], Decision]) -> list[tuple[Row, Decision]]:
    participations = _prolific_participations(study.participations.select_related("worker", "study"))
    existing = _existing(participations, Kind.REVIEW)
    rows = []
    for p in participations:
        d = decide_fn(p)
        if d.action == NONE:
            rows.append((_row(p, "-", SKIP, d.reason), d))
            continue
        if d.action == NEEDS_DECISION:
            rows.append((_row(p, "-", DECIDE, d.reason), d))
            continue
        row = _row(p, d.action, TODO, d.reason)
        if not row.submission:
            row.state, row.note = SKIP, "no Prolific submission id (SESSION_ID) was recorded at entry"
        else:
            state, note = _state_of(existing.get(p.pk), kind=Kind.REVIEW)
            row.state, row.note = state, note or d.reason
        rows.append((row, d))
    return rows


def _study_id(p: Participation) -> str:
    return str((p.platform_data or {}).get("STUDY_ID", ""))


def _bases(
    study: Study, participations: list[Participation], client: ProlificClient | None
) -> tuple[dict[str, BaseReward | str], list[str]]:
    """The posted reward each Prolific study's bonuses top up (or why there is none), and the notes that
    state it. With the operations on it is read from Prolific; otherwise it is the study's ``base_reward``."""
    ids = sorted({_study_id(p) for p in participations} - {""})
    bases: dict[str, BaseReward | str] = {}
    notes = []
    currency = study.currency
    if client is None:
        stored = stored_base(study)
        for sid in ids:
            bases[sid] = stored or (
                "the study's posted reward (base_reward) is not set: set it (0 only if no reward was posted), "
                "or turn the Prolific operations on to read it from Prolific"
            )
        if stored is None:
            notes.append(f"no bonus computed: {bases[ids[0]] if ids else 'the posted reward is not set'}")
        else:
            notes.append(f"base reward {stored.amount} {currency} per participant: {stored.source}")
        return bases, notes
    for sid in ids:
        try:
            reward = client.posted_reward(sid)
        except ProlificError as exc:
            bases[sid] = f"could not read the reward posted on Prolific study {sid}: {exc}"
            notes.append(str(bases[sid]))
            continue
        base = BaseReward(reward, f"the reward posted on Prolific study {sid} (read from Prolific)")
        bases[sid] = base
        notes.append(f"base reward {base.amount} {currency} per participant: {base.source}")
        if study.base_reward is not None and study.base_reward != reward:
            notes.append(f"the study's base_reward ({study.base_reward}) differs from Prolific's: Prolific's is used")
    return bases, notes


def _bonus_rows(
    study: Study, decide_fn: Callable[[Participation], Decision], client: ProlificClient | None
) -> tuple[list[Row], list[str]]:
    participations = _prolific_participations(study.participations.select_related("worker", "study"))
    bases, notes = _bases(study, participations, client)
    lines = {}
    for sid, base in bases.items():
        if isinstance(base, BaseReward):
            same = [p for p in participations if _study_id(p) == sid]
            lines.update(pay_lines(study=study, participations=same, base=base))
    existing = _existing(participations, Kind.BONUS)
    currency = (study.currency or "").upper()
    rows = []
    for p in participations:
        d = decide_fn(p)
        action = existing.get(p.pk)
        line = lines.get(p.pk)
        row = _row(p, "BONUS", TODO, currency=currency)
        if line is not None:
            # What the pay rule owes beyond the reward posted on Prolific.
            row.amount, row.note = line.bonus, f"{line.minutes} paid minutes"
        if d.action not in PAID:
            row.state, row.note, row.amount = SKIP, f"no bonus: {d.reason}", None
        elif not row.prolific_study:
            row.state, row.note = SKIP, "no Prolific study id (STUDY_ID) was recorded at entry"
        elif action is not None and action.amount is not None and action.status != Status.FAILED:
            # Set up or paid before: it stays as recorded, whatever the rule (or its base) says now.
            row.state, row.note = _state_of(action, kind=Kind.BONUS)
            row.amount = action.amount
            row.note = row.note or f"recorded under pay rule version {action.pay_rule_version or '1'}"
        elif line is None or line.bonus is None:
            row.state, row.note = SKIP, f"no bonus computed: {bases.get(_study_id(p))}"
        elif line.bonus <= 0:
            row.state, row.note = SKIP, "no bonus owed: the posted reward covers the hourly rate"
        elif currency not in CURRENCIES:
            row.state, row.note = SKIP, f"the study's currency {currency!r} is not one Prolific pays in (GBP, USD)"
        else:
            state, note = _state_of(action, kind=Kind.BONUS)
            row.state, row.note = state, note or row.note
        rows.append(row)
    notes.append(f"pay rule version {PAY_RULE_VERSION} (annotation.services.pay; docs/reports.md)")
    return rows, notes


def group_name(study: Study) -> str:
    return f"Took part in {study.task.slug}"


def _group_rows(study: Study) -> list[Row]:
    participations = _prolific_participations(
        Participation.objects.filter(task=study.task).select_related("worker", "study").order_by("study", "pk")
    )
    existing = _existing(participations, Kind.GROUP)
    rows = []
    for p in participations:
        state, note = _state_of(existing.get(p.pk), kind=Kind.GROUP)
        rows.append(_row(p, "GROUP", state, note))
    return rows


def plan(
    *,
    operation: str,
    study: Study,
    decide_fn: Callable[[Participation], Decision] = decide,
    client: ProlificClient | None = None,
) -> Report:
    """The dry run: what ``run`` would do now. Changes nothing; the bonus plan reads the posted reward
    from Prolific when the operations are on (``client``, default one from the settings)."""
    report = Report(operation=operation, study=study.slug, dry_run=True)
    if operation == "review":
        report.rows = [row for row, _ in _review_rows(study, decide_fn)]
    elif operation == "bonus":
        if client is None and enabled():
            client = make_client()
        report.rows, report.notes = _bonus_rows(study, decide_fn, client)
    elif operation == "group":
        report.rows = _group_rows(study)
        group = ProlificGroup.objects.filter(task=study.task).first()
        if group is not None:
            report.notes.append(f"participant group {group.name!r} ({group.group_id})")
        else:
            report.notes.append(f"creates the participant group {group_name(study)!r}")
            if not settings.PROLIFIC_WORKSPACE_ID:
                report.notes.append("PROLIFIC_WORKSPACE_ID is not set: the group cannot be created")
    else:
        raise UnknownOperation(f"Unknown operation {operation!r}; one of {', '.join(OPERATIONS)}.")
    if not enabled():
        report.notes.append(OFF_MESSAGE)
    return report


# --- Running -------------------------------------------------------------------------------------


class _Log:
    """Writes each HTTP exchange to ProlificCall, under the action being worked on."""

    def __init__(self) -> None:
        self.action: ProlificAction | None = None

    def __call__(self, record: CallRecord) -> None:
        ProlificCall.objects.create(
            action=self.action,
            method=record.method,
            path=record.path[:300],
            request=record.request,
            status_code=record.status,
            response=record.response,
            ok=record.ok,
            error=record.error,
            seconds=round(record.seconds, 3),
        )


CallLog = _Log  # for the other Prolific services (subscriptions, polling) to record their calls the same way


def _claim(
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


def _finish(row: ProlificAction, status: str, error: str = "", **fields: Any) -> None:
    row.status, row.error = status, error
    for name, value in fields.items():
        setattr(row, name, value)
    row.save()


def run(
    *,
    operation: str,
    study: Study,
    client: ProlificClient | None = None,
    decide_fn: Callable[[Participation], Decision] = decide,
) -> Report:
    """Do what the plan says; report each participant's outcome."""
    client = client or make_client()
    log = _Log()
    client.on_call = log
    report = plan(operation=operation, study=study, decide_fn=decide_fn, client=client)
    report.dry_run = False
    report.notes = [n for n in report.notes if n != OFF_MESSAGE]
    if operation == "review":
        decisions = {row.participation_id: d for row, d in _review_rows(study, decide_fn)}
        _run_each(report.rows, lambda row: _review_one(client, log, row, decisions[row.participation_id]))
    elif operation == "bonus":
        _run_each(report.rows, lambda row: _bonus_one(client, log, row))
    else:
        _run_group(client, log, study, report)
    return report


def _run_each(rows: list[Row], one: Callable[[Row], None]) -> None:
    unreachable = ""
    for row in rows:
        if row.state != TODO:
            continue
        if unreachable:
            row.state, row.note = NOT_TRIED, unreachable
            continue
        try:
            one(row)
        except ProlificConnectionError as exc:
            unreachable = f"not tried: {exc}"


def _review_one(client: ProlificClient, log: _Log, row: Row, d: Decision) -> None:
    # The transition endpoint is documented as idempotent: a row whose answer was lost may be sent again.
    claimed = _claim(
        row.participation_id, Kind.REVIEW, action=d.action, blocked=(Status.DONE,), prolific_id=row.submission
    )
    if claimed is None:
        row.state, row.note = DONE, "done by another run"
        return
    log.action = claimed
    try:
        if d.action == SCREEN_OUT:
            client.complete(row.submission, completion_code=d.completion_code)
        elif d.action == REJECT:
            client.reject(row.submission, message=d.message, category=d.rejection_category)
        else:
            client.approve(row.submission)
    except ProlificError as exc:
        _finish(claimed, Status.FAILED, str(exc))
        row.state, row.note = FAILED, str(exc)
        if isinstance(exc, ProlificConnectionError):
            raise
        return
    finally:
        log.action = None
    _finish(claimed, Status.DONE)
    row.state = DONE


def _bonus_one(client: ProlificClient, log: _Log, row: Row) -> None:
    assert row.amount is not None
    # Claimed as uncertain, and committed, before any call: a concurrent run or one after a crash skips it,
    # so no second bulk bonus is set up and no bulk bonus is paid twice.
    claimed = _claim(
        row.participation_id,
        Kind.BONUS,
        action="BONUS",
        blocked=(Status.DONE, Status.UNCERTAIN),
        status=Status.UNCERTAIN,
    )
    if claimed is None:
        row.state, row.note = UNCERTAIN, "being paid by another run, or uncertain"
        return
    log.action = claimed
    try:
        bulk_id = claimed.prolific_id  # only a row whose set-up worked and whose payment was refused has one
        if not bulk_id:
            try:
                answer = client.set_up_bonus(study_id=row.prolific_study, bonuses=[(row.participant, row.amount)])
            except ProlificError as exc:  # setting up pays nothing: safe to try again later
                _finish(claimed, Status.FAILED, str(exc))
                row.state, row.note = FAILED, str(exc)
                if isinstance(exc, ProlificConnectionError):
                    raise
                return
            bulk_id = str(answer.get("id") or "")
            expected = int(row.amount * 100)
            got = answer.get("amount")
            if not bulk_id or (got is not None and round(float(got)) != expected):
                error = f"Prolific set up an unexpected bonus ({answer!r}); expected {expected} cents. Not paid."
                _finish(claimed, Status.FAILED, error)
                row.state, row.note = FAILED, error
                return
            # Still uncertain: from here on the bulk bonus exists and may be paid.
            _finish(
                claimed,
                Status.UNCERTAIN,
                prolific_id=bulk_id,
                amount=row.amount,
                currency=row.currency,
                pay_rule_version=PAY_RULE_VERSION,
            )
        else:
            row.amount = claimed.amount
        try:
            client.pay_bonus(bulk_id)
        except ProlificError as exc:
            if exc.definite:  # refused: nothing paid; the next run pays the same bulk bonus
                _finish(claimed, Status.SET_UP, str(exc))
                row.state, row.note = FAILED, str(exc)
            else:
                _finish(claimed, Status.UNCERTAIN, str(exc))
                row.state = UNCERTAIN
                row.note = f"{exc} Check bulk bonus {bulk_id} on Prolific before paying again."
            return
    finally:
        log.action = None
    _finish(claimed, Status.DONE)
    row.state, row.note = DONE, f"bulk bonus {bulk_id}"


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


def _run_group(client: ProlificClient, log: _Log, study: Study, report: Report) -> None:
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
        claimed = _claim(
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
        _run_each(
            [row for row, _ in claims.values()],
            lambda row: _group_one(client, log, group, *claims[row.participation_id]),
        )
        return
    except ProlificError as exc:
        for row, claimed in claims.values():
            _finish(claimed, Status.FAILED, str(exc))
            row.state, row.note = FAILED, str(exc)
        return
    for row, claimed in claims.values():
        _finish(claimed, Status.DONE)
        row.state = DONE


def _group_one(client: ProlificClient, log: _Log, group: ProlificGroup, row: Row, claimed: ProlificAction) -> None:
    log.action = claimed
    try:
        client.add_to_group(group.group_id, [row.participant])
    except ProlificError as exc:
        _finish(claimed, Status.FAILED, str(exc))
        row.state, row.note = FAILED, str(exc)
        if isinstance(exc, ProlificConnectionError):
            raise
        return
    finally:
        log.action = None
    _finish(claimed, Status.DONE)
    row.state = DONE


def resolve_uncertain(*, action: ProlificAction, paid: bool, note: str) -> ProlificAction:
    """A person checked an uncertain bonus on Prolific: mark it paid, or free it to be paid again."""
    if action.status != Status.UNCERTAIN:
        raise ValueError("Only an uncertain action can be resolved.")
    status = Status.DONE if paid else Status.SET_UP
    _finish(action, status, f"resolved by hand: {note}"[:1000])
    return action
