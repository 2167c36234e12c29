"""bonus: pay each approved participant what the pay rule owes beyond the reward posted on Prolific.

The plan reads the posted reward of each Prolific study (``GET studies/{id}/``), the base the bonuses top up,
and asks the pay rule (``annotation.services.money.pay``) for each participant's bonus. One bulk bonus is set up and
paid per participant (``POST submissions/bonus-payments/``, then ``POST bulk-bonus-payments/{id}/pay/``,
documented as NOT idempotent): a row is claimed as uncertain before any call, so no bonus is paid twice, and a
pay call whose answer was lost leaves it uncertain for a person to check (``resolve_uncertain``).
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from annotation.models import AuditEntry, Participation, ProlificAction, Study
from annotation.services import audit
from annotation.services.money.pay import PAY_RULE_VERSION, BaseReward, pay_lines, stored_base
from annotation.services.prolific.client import ProlificClient, ProlificConnectionError, ProlificError
from annotation.services.prolific.outcomes import PAID, Decision
from annotation.services.prolific.runs import (
    DONE,
    FAILED,
    SKIP,
    TODO,
    UNCERTAIN,
    CallLog,
    Kind,
    Row,
    Status,
    claim,
    existing,
    finish,
    prolific_participations,
    row_for,
    state_of,
    study_id,
)

CURRENCIES = ("GBP", "USD")  # what Prolific studies are paid in


def bases(
    study: Study, participations: list[Participation], client: ProlificClient | None
) -> tuple[dict[str, BaseReward | str], list[str]]:
    """The posted reward each Prolific study's bonuses top up (or why there is none), and the notes that
    state it. With the operations on it is read from Prolific; otherwise it is the study's ``base_reward``."""
    ids = sorted({study_id(p) for p in participations} - {""})
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


def bonus_rows(
    study: Study, decide_fn: Callable[[Participation], Decision], client: ProlificClient | None
) -> tuple[list[Row], list[str]]:
    participations = prolific_participations(study.participations.select_related("worker", "study"))
    found, notes = bases(study, participations, client)
    lines = {}
    for sid, base in found.items():
        if isinstance(base, BaseReward):
            same = [p for p in participations if study_id(p) == sid]
            lines.update(pay_lines(study=study, participations=same, base=base))
    before = existing(participations, Kind.BONUS)
    currency = (study.currency or "").upper()
    rows = []
    for p in participations:
        d = decide_fn(p)
        action = before.get(p.pk)
        line = lines.get(p.pk)
        row = row_for(p, "BONUS", TODO, currency=currency)
        if line is not None:
            # What the pay rule owes beyond the reward posted on Prolific.
            row.amount, row.note = line.bonus, f"{line.minutes} paid minutes"
        if d.action not in PAID:
            row.state, row.note, row.amount = SKIP, f"no bonus: {d.reason}", None
        elif not row.prolific_study:
            row.state, row.note = SKIP, "no Prolific study id (STUDY_ID) was recorded at entry"
        elif action is not None and action.amount is not None and action.status != Status.FAILED:
            # Set up or paid before: it stays as recorded, whatever the rule (or its base) says now.
            row.state, row.note = state_of(action, kind=Kind.BONUS)
            row.amount = action.amount
            row.note = row.note or f"recorded under pay rule version {action.pay_rule_version or '1'}"
        elif line is None or line.bonus is None:
            row.state, row.note = SKIP, f"no bonus computed: {found.get(study_id(p))}"
        elif line.bonus <= 0:
            row.state, row.note = SKIP, "no bonus owed: the posted reward covers the hourly rate"
        elif currency not in CURRENCIES:
            row.state, row.note = SKIP, f"the study's currency {currency!r} is not one Prolific pays in (GBP, USD)"
        else:
            state, note = state_of(action, kind=Kind.BONUS)
            row.state, row.note = state, note or row.note
        rows.append(row)
    notes.append(f"pay rule version {PAY_RULE_VERSION} (annotation.services.money.pay; docs/reports.md)")
    return rows, notes


def bonus_one(client: ProlificClient, log: CallLog, row: Row) -> None:
    assert row.amount is not None
    # Claimed as uncertain, and committed, before any call: a concurrent run or one after a crash skips it,
    # so no second bulk bonus is set up and no bulk bonus is paid twice.
    claimed = claim(
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
                finish(claimed, Status.FAILED, str(exc))
                row.state, row.note = FAILED, str(exc)
                if isinstance(exc, ProlificConnectionError):
                    raise
                return
            bulk_id = str(answer.get("id") or "")
            expected = int(row.amount * 100)
            got = answer.get("amount")
            if not bulk_id or (got is not None and round(float(got)) != expected):
                error = f"Prolific set up an unexpected bonus ({answer!r}); expected {expected} cents. Not paid."
                finish(claimed, Status.FAILED, error)
                row.state, row.note = FAILED, error
                return
            # Still uncertain: from here on the bulk bonus exists and may be paid.
            finish(
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
                finish(claimed, Status.SET_UP, str(exc))
                row.state, row.note = FAILED, str(exc)
            else:
                finish(claimed, Status.UNCERTAIN, str(exc))
                row.state = UNCERTAIN
                row.note = f"{exc} Check bulk bonus {bulk_id} on Prolific before paying again."
            return
    finally:
        log.action = None
    finish(claimed, Status.DONE)
    row.state, row.note = DONE, f"bulk bonus {bulk_id}"


def resolve_uncertain(*, action: ProlificAction, paid: bool, note: str, actor: audit.Actor = None) -> ProlificAction:
    """A person checked an uncertain bonus on Prolific: mark it paid, or free it to be paid again."""
    if action.status != Status.UNCERTAIN:
        raise ValueError("Only an uncertain action can be resolved.")
    status = Status.DONE if paid else Status.SET_UP
    with transaction.atomic():
        before = {"status": action.status}
        finish(action, status, f"resolved by hand: {note}"[:1000])
        audit.record(
            actor=actor,
            action=AuditEntry.Action.PROLIFIC_RESOLVE,
            participation=action.participation,
            before=before,
            after={"status": status},
            detail={"prolific_action": action.pk, "kind": action.kind, "amount": action.amount, "note": note},
        )
    return action
