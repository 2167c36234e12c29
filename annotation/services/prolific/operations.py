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

from annotation.models import Participation, Study
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


def plan(
    *,
    operation: str,
    study: Study,
    decide_fn: Callable[[Participation], Decision] = decide,
    client: ProlificClient | None = None,
) -> Report:
    """The dry run: what ``run`` would do now. Changes nothing; the bonus and places plans read the Prolific
    study when the operations are on (``client``, default one from the settings)."""
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
) -> Report:
    """Do what the plan says; report each participant's outcome (``progress(done, total)`` as it goes)."""
    client = client or make_client()
    log = CallLog()
    client.on_call = log
    report = plan(operation=operation, study=study, decide_fn=decide_fn, client=client)
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
    return report
