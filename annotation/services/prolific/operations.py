"""The Prolific operations on a study, by name: review (approve / screen out), bonus, group, places.

``plan`` is the dry run: who, what, how much, and what was already done; it changes nothing (the bonus and
places plans read the Prolific study: its posted reward, its places). ``run`` does what the plan says, one
participant at a time, records each call (``ProlificCall``) and each outcome (``ProlificAction``, unique per
participation and kind), and goes on after a participant's failure. A second run does only what is still to do.

Each operation has its module (``review``, ``bonus``, ``group``, ``places``); what they share (the report, the
call log, the claim of a row) is ``runs``. The names the entry points use are re-exported here.
Run outside a database transaction: each claim is committed before its call (models/prolific.py).
"""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import AuditEntry, Participation, Study
from annotation.services import audit
from annotation.services.prolific import bonus, group, places, review
from annotation.services.prolific.client import ProlificClient
from annotation.services.prolific.outcomes import Decision, decide
from annotation.services.prolific.runs import (
    DECIDE,
    DONE,
    FAILED,
    NOT_TRIED,
    OFF_MESSAGE,
    SKIP,
    STATES,
    TODO,
    UNCERTAIN,
    CallLog,
    ProgressFn,
    ProlificDisabled,
    Report,
    Row,
    UnknownOperation,
    enabled,
    make_client,
    run_each,
)

OPERATIONS = ("review", "bonus", "group", "places")
resolve_uncertain = bonus.resolve_uncertain
group_name = group.group_name

__all__ = [
    "DECIDE",
    "DONE",
    "FAILED",
    "NOT_TRIED",
    "OFF_MESSAGE",
    "OPERATIONS",
    "SKIP",
    "STATES",
    "TODO",
    "UNCERTAIN",
    "CallLog",
    "ProlificDisabled",
    "Report",
    "Row",
    "UnknownOperation",
    "enabled",
    "group_name",
    "make_client",
    "plan",
    "resolve_uncertain",
    "run",
]


def _audited(report: Report) -> dict[str, object]:
    """What the trail keeps of a report: counts, total and each row by participation, without the
    participant's or submission's Prolific id."""
    rows = [
        {k: v for k, v in row.as_dict().items() if k not in ("participant", "submission", "study")}
        for row in report.rows
    ]
    return {"counts": report.counts, "total": f"{report.total:.2f}", "notes": report.notes, "rows": rows}


def plan(
    *,
    operation: str,
    study: Study,
    decide_fn: Callable[[Participation], Decision] = decide,
    client: ProlificClient | None = None,
    actor: audit.Actor = None,
) -> Report:
    """The dry run: what ``run`` would do now. Changes nothing but the audit trail, which gets who asked and
    what it showed; the bonus and places plans read the Prolific study when the operations are on
    (``client``, default one from the settings)."""
    report = _plan(operation=operation, study=study, decide_fn=decide_fn, client=client)
    shown = _audited(report)
    audit.record(
        actor=actor,
        action=AuditEntry.Action.PROLIFIC_DRY_RUN,
        study=study,
        after={"counts": shown["counts"], "total": shown["total"]},
        detail={"operation": operation, **shown},
    )
    return report


def _plan(
    *,
    operation: str,
    study: Study,
    decide_fn: Callable[[Participation], Decision],
    client: ProlificClient | None,
) -> Report:
    report = Report(operation=operation, study=study.slug, dry_run=True)
    if operation not in OPERATIONS:
        raise UnknownOperation(f"Unknown operation {operation!r}; one of {', '.join(OPERATIONS)}.")
    if client is None and enabled() and operation in ("bonus", "places"):
        client = make_client()
    if operation == "review":
        report.rows = [row for row, _ in review.review_rows(study, decide_fn)]
    elif operation == "bonus":
        report.rows, report.notes = bonus.bonus_rows(study, decide_fn, client)
    elif operation == "group":
        report.rows = group.group_rows(study)
        report.notes = group.plan_notes(study)
    else:
        report.rows, report.notes = places.places_rows(study, client)
    if not enabled():
        report.notes.append(OFF_MESSAGE)
    return report


def run(
    *,
    operation: str,
    study: Study,
    client: ProlificClient | None = None,
    decide_fn: Callable[[Participation], Decision] = decide,
    progress: ProgressFn | None = None,
    actor: audit.Actor = None,
) -> Report:
    """Do what the plan says; report each participant's outcome (``progress(done, total)`` as it goes).

    The audit trail gets the run once it ends (or fails): the plan's counts before, the outcome's after.
    Not in one transaction with the calls: each claim is committed before its call (the module's docstring)."""
    client = client or make_client()
    log = CallLog()
    client.on_call = log
    report = _plan(operation=operation, study=study, decide_fn=decide_fn, client=client)
    planned = _audited(report)
    try:
        _run(operation, study, client, log, report, decide_fn, progress)
    except Exception as exc:
        _record_run(actor, study, operation, planned, report, error=f"{type(exc).__name__}: {exc}")
        raise
    _record_run(actor, study, operation, planned, report)
    return report


def _record_run(
    actor: audit.Actor, study: Study, operation: str, planned: dict[str, object], report: Report, error: str = ""
) -> None:
    done = _audited(report)
    audit.record(
        actor=actor,
        action=AuditEntry.Action.PROLIFIC_RUN,
        study=study,
        before={"counts": planned["counts"], "total": planned["total"]},
        after={"counts": done["counts"], "total": done["total"]},
        detail={"operation": operation, **done, **({"error": error} if error else {})},
    )


def _run(
    operation: str,
    study: Study,
    client: ProlificClient,
    log: CallLog,
    report: Report,
    decide_fn: Callable[[Participation], Decision],
    progress: ProgressFn | None,
) -> None:
    report.dry_run = False
    report.notes = [n for n in report.notes if n != OFF_MESSAGE]
    if operation == "review":
        decisions = {row.participation_id: d for row, d in review.review_rows(study, decide_fn)}
        review.run_review(client, log, report, decisions, progress)
    elif operation == "bonus":
        run_each(report.rows, lambda row: bonus.bonus_one(client, log, row), progress)
    elif operation == "group":
        group.run_group(client, log, study, report)
    else:
        places.run_places(client, log, study, report)
    if progress is not None and operation in ("group", "places"):
        progress(len(report.rows), len(report.rows))
