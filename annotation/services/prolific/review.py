"""review: approve (or screen out) each Prolific submission as its participation's outcome calls for.

What each outcome calls for is ``outcomes.decide``. The approvals go in one call to Prolific's bulk
endpoint (``POST submissions/bulk-approve/``, up to ``BULK_LIMIT`` submissions a call); if Prolific
refuses it or its answer is lost, they are sent one by one (``POST submissions/{id}/transition/``,
documented as idempotent, so a submission approved twice is approved once), so each participant gets
their own answer. Screen-outs and rejections always go one by one.
"""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import Participation, Study
from annotation.services.prolific.client import ProlificClient, ProlificConnectionError, ProlificError
from annotation.services.prolific.outcomes import APPROVE, NEEDS_DECISION, NONE, REJECT, SCREEN_OUT, Decision
from annotation.services.prolific.runs import (
    DECIDE,
    DONE,
    FAILED,
    SKIP,
    TODO,
    CallLog,
    Kind,
    ProgressFn,
    Report,
    Row,
    Status,
    claim,
    existing,
    finish,
    prolific_participations,
    row_for,
    run_each,
    state_of,
)

BULK_LIMIT = 1000  # Prolific recommends at most 1,000 submissions per bulk approval


def review_rows(study: Study, decide_fn: Callable[[Participation], Decision]) -> list[tuple[Row, Decision]]:
    participations = prolific_participations(study.participations.select_related("worker", "study"))
    done_before = existing(participations, Kind.REVIEW)
    rows = []
    for p in participations:
        d = decide_fn(p)
        if d.action == NONE:
            rows.append((row_for(p, "-", SKIP, d.reason), d))
            continue
        if d.action == NEEDS_DECISION:
            rows.append((row_for(p, "-", DECIDE, d.reason), d))
            continue
        row = row_for(p, d.action, TODO, d.reason)
        if not row.submission:
            row.state, row.note = SKIP, "no Prolific submission id (SESSION_ID) was recorded at entry"
        else:
            state, note = state_of(done_before.get(p.pk), kind=Kind.REVIEW)
            row.state, row.note = state, note or d.reason
        rows.append((row, d))
    return rows


def run_review(
    client: ProlificClient,
    log: CallLog,
    report: Report,
    decisions: dict[int, Decision],
    progress: ProgressFn | None = None,
) -> None:
    todo = [row for row in report.rows if row.state == TODO]
    approvals = [row for row in todo if decisions[row.participation_id].action == APPROVE]
    for start in range(0, len(approvals), BULK_LIMIT):
        _bulk_approve(client, log, report, approvals[start : start + BULK_LIMIT])
    done_in_bulk = sum(row.state != TODO for row in todo)
    if progress is not None and done_in_bulk:
        progress(done_in_bulk, len(todo))
    shifted = None if progress is None else (lambda done, total: progress(done_in_bulk + done, len(todo)))
    run_each(report.rows, lambda row: _review_one(client, log, row, decisions[row.participation_id]), shifted)


def _bulk_approve(client: ProlificClient, log: CallLog, report: Report, rows: list[Row]) -> None:
    """Approve ``rows`` in one call; on any failure they stay to do, for the one-by-one pass."""
    claims = {}
    for row in rows:
        claimed = claim(
            row.participation_id, Kind.REVIEW, action=APPROVE, blocked=(Status.DONE,), prolific_id=row.submission
        )
        if claimed is None:
            row.state, row.note = DONE, "done by another run"
        else:
            claims[row.participation_id] = (row, claimed)
    if len(claims) < 2:
        return  # one approval is the same call either way
    try:
        client.bulk_approve([row.submission for row, _ in claims.values()])
    except ProlificConnectionError:
        return  # the one-by-one pass reports it and stops
    except ProlificError as exc:
        report.notes.append(f"bulk approval failed ({exc}): approved one by one")
        return
    for row, claimed in claims.values():
        finish(claimed, Status.DONE)
        row.state, row.note = DONE, "approved in bulk"


def _review_one(client: ProlificClient, log: CallLog, row: Row, d: Decision) -> None:
    # The transition endpoint is documented as idempotent: a row whose answer was lost may be sent again.
    claimed = claim(
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
        finish(claimed, Status.FAILED, str(exc))
        row.state, row.note = FAILED, str(exc)
        if isinstance(exc, ProlificConnectionError):
            raise
        return
    finally:
        log.action = None
    finish(claimed, Status.DONE)
    row.state = DONE
