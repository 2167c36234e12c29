"""places: keep the Prolific study's places in step with the design's free slots, while our study is open.

Prolific reopens a place by itself when a submission is RETURNED, TIMED-OUT or REJECTED (its API reference's
submission object: "The study place becomes available for another participant"; its help pages for a time-out),
and our slot is freed then too (``webhooks``), so both stay in step. An exclusion of ours (the training filter,
the attention rule, an admin, the integrity rule) frees our slot but the submission keeps its Prolific place:
without more places, nobody replaces that worker. So the places a Prolific study needs are

    the design's slots (conditions × workers per condition) + the exclusions that kept their place

where the design's slots are those open now (``slots.open_slots``): during a pilot launch, the pilot's share of
each condition (docs/studies.md, "A pilot launch"), so the Prolific study is paused once the pilot's slots are
held, and "open the rest" raises its places to the whole design and starts it again
(an exclusion whose submission was last heard RETURNED, TIMED-OUT or REJECTED on Prolific reopened its own place;
a study's closing is not replaced). Each exclusion given its place has its ``ProlificAction`` (kind ``places``),
and the total is raised to that figure in one call (``PATCH studies/{id}/`` with ``total_available_places``): an
absolute figure, so sending it again, after a lost answer or from a concurrent run, adds nothing. Prolific only
lets places grow: a study with more places than that is left alone (the pause below holds arrivals back).

Our study's status rules (``places_rows``): only an open study's places grow, and only an open study's Prolific
study is started again. While every slot of ours is held, or ours is paused, closed (or still a draft), the
Prolific study is paused (``POST studies/{id}/transition/`` ``{"action": "PAUSE"}``), so no more arrivals are sent
to be told the study is full, paused or closed; it is started again (``START``) only when ours is open and a slot
is free. The plan (the dry run) states the Prolific study's places and status, what would change, and its
expected cost: the places added × the reward posted on Prolific (Prolific's service fee on top is not given by
the API).

``on_slot_change`` and ``on_status_change`` queue a sync (``sync_places`` on Celery) after any change of a slot
or of our study's status, when the operations are on and the study opts in (``Study.prolific_sync_places``).
"""

from __future__ import annotations

import logging
from decimal import Decimal
from functools import partial
from typing import Any

from django.db import transaction

from annotation.celery import app as celery_app
from annotation.models import Participation, ProlificEvent, Study
from annotation.services.money.pay import stored_base
from annotation.services.prolific.client import ProlificClient, ProlificConnectionError, ProlificError
from annotation.services.prolific.runs import (
    DONE,
    FAILED,
    NOT_TRIED,
    SKIP,
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
    state_of,
    study_id,
)
from annotation.services.prolific.webhooks import APPROVED, SUBMISSION_EVENT
from annotation.services.state import slots

logger = logging.getLogger(__name__)

SYNC_TASK = "annotation.sync_prolific_places"
# The submission statuses whose place Prolific opens to another participant by itself (docs/prolific.md,
# "Places of rejected submissions"). Every other status of its reference (RESERVED, ACTIVE, AWAITING REVIEW,
# APPROVED, SCREENED OUT, PARTIALLY APPROVED) keeps the place.
REOPENED = ("RETURNED", "TIMED-OUT", "REJECTED")
ACTIVE, PAUSED = "ACTIVE", "PAUSED"
STUDY_ROW = 0  # the participation id of the rows about the Prolific study itself (its total, its status)


def _needing_a_place(study: Study) -> list[Participation]:
    """The exclusions whose submission keeps its Prolific place while our slot is free again. A withdrawn
    participant's too (all_objects): their withdrawal erases their data, not the place they took on Prolific."""
    excluded = prolific_participations(
        Participation.all_objects.filter(study=study, is_preview=False, state=Participation.State.EXCLUDED)
        .exclude(exclusion_kind=Participation.ExclusionKind.CLOSED)
        .select_related("worker", "study")
        .order_by("pk")
    )
    # The submission's status last heard from Prolific (webhook or polling); none heard: it keeps its place.
    # Nothing undoes an approval (as ``webhooks`` has it): a status heard after one does not count.
    last: dict[int, str] = {}
    heard = ProlificEvent.objects.filter(participation__in=excluded, event_type=SUBMISSION_EVENT)
    for participation_id, status in heard.order_by("sent_at", "pk").values_list("participation_id", "status"):
        if last.get(participation_id) != APPROVED:
            last[participation_id] = status
    return [p for p in excluded if last.get(p.pk) not in REOPENED]


def _study_row(study: Study, action: str, state: str, note: str, prolific_study: str, **extra: Any) -> Row:
    return Row(
        participation_id=STUDY_ROW,
        participant="-",
        study=study.slug,
        action=action,
        state=state,
        note=note,
        prolific_study=prolific_study,
        **extra,
    )


def places_rows(study: Study, client: ProlificClient | None) -> tuple[list[Row], list[str]]:
    """The dry run: one row per exclusion to give a place, then the Prolific study's own changes."""
    # Which Prolific study is ours, from every arrival: a withdrawn participant's too (all_objects), whose
    # STUDY_ID names no person, or the sync forgets the study once the only arrival withdraws.
    arrivals = Participation.all_objects.filter(study=study, is_preview=False).select_related("worker", "study")
    ids = sorted({study_id(p) for p in prolific_participations(arrivals)} - {""})
    if not ids:
        return [], ["no Prolific participant has come yet: the Prolific study is not known"]
    if len(ids) > 1:
        return [], [f"participants came from several Prolific studies ({', '.join(ids)}): set their places by hand"]
    sid = ids[0]
    counts = slots.condition_counts([study])[study.pk]
    design = sum(c.slots for c in counts)
    free = sum(c.free for c in counts)
    needing = _needing_a_place(study)
    before = existing(needing, Kind.PLACES)
    is_open = study.status == Study.Status.OPEN
    rows = []
    for p in needing:
        state, note = state_of(before.get(p.pk), kind=Kind.PLACES)
        if state == TODO and not is_open:  # given once the study is open again (a closed one never is)
            state, note = SKIP, f"our study is {study.status}: places are added only while it is open"
        rows.append(row_for(p, "PLACE +1", state, note or f"excluded ({p.get_exclusion_kind_display()})"))
    target = design + len(needing)
    whole = sum(c.design_slots for c in counts)
    pilot = f"the pilot opens {design} of the design's {whole} slots" if design < whole else ""
    notes = [
        f"{pilot or f'the design has {design} slots'}, {free} free; {len(needing)} exclusion(s) kept their "
        "Prolific place"
    ]
    if not is_open:
        notes.append(f"our study is {study.status}: Prolific's study is paused, started again only once ours is open")
    currency = (study.currency or "").upper()
    if client is None:
        if not is_open:
            notes.append(f"Prolific study {sid}: its status is not read while the operations are off")
            return rows, notes
        base = stored_base(study)
        todo = sum(r.state == TODO for r in rows)
        cost = None if base is None else base.amount * todo
        notes.append(f"Prolific study {sid}: its places are not read while the operations are off")
        if todo:
            rows.append(_study_row(study, f"PLACES +{todo}", TODO, "", sid, amount=cost, currency=currency))
        return rows, notes
    try:
        prolific = client.get_study(sid)
    except ProlificError as exc:
        notes.append(f"could not read Prolific study {sid}: {exc}")
        for r in rows:
            if r.state == TODO:
                r.state, r.note = SKIP, "the Prolific study could not be read"
        return rows, notes
    total = _int(prolific.get("total_available_places"))
    taken = _int(prolific.get("places_taken"))
    status = str(prolific.get("status") or "")
    reward = _int(prolific.get("reward"))
    notes.append(
        f"Prolific study {sid}: {total} places, {'?' if taken is None else taken} taken, {status or 'status unknown'}"
    )
    if total is None:
        notes.append("Prolific gave no total_available_places: the places are left as they are")
        for r in rows:
            if r.state == TODO:
                r.state, r.note = SKIP, "Prolific's total of places is unknown"
    elif not is_open:
        pass  # the exclusions' rows say why nothing grows
    elif total >= target:
        for r in rows:
            if r.state == TODO:  # a run records it, with no call
                r.note = f"Prolific already has {total} places (needed: {target}): recorded, nothing sent"
        if total > target:
            notes.append(f"Prolific has more places than the design needs ({total} > {target}); they cannot be lowered")
    else:
        added = target - total
        cost = None if reward is None else (Decimal(reward) / 100 * added).quantize(Decimal("0.01"))
        each = "reward unknown" if reward is None else f"{Decimal(reward) / 100:.2f} {currency} each"
        note = f"{total} → {target} places; expected cost {added} × reward ({each}) + Prolific's service fee"
        rows.append(_study_row(study, f"PLACES {total}→{target}", TODO, note, sid, amount=cost, currency=currency))
    free_after = free  # growing places frees no slot of ours
    if status == ACTIVE and not is_open:
        rows.append(_study_row(study, "PAUSE", TODO, f"our study is {study.status}: no more arrivals", sid))
    elif free_after == 0 and status == ACTIVE:
        rows.append(_study_row(study, "PAUSE", TODO, "every slot is held: no more arrivals", sid))
    elif free_after > 0 and status == PAUSED and is_open:
        rows.append(_study_row(study, "RESUME", TODO, f"{free_after} slot(s) free again", sid))
    return rows, notes


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def run_places(client: ProlificClient, log: CallLog, study: Study, report: Report) -> None:
    """Raise the total, then pause or resume, as the plan says (each done once; the plan is re-read each run)."""
    study_rows = [r for r in report.rows if r.participation_id == STUDY_ROW and r.state == TODO]
    exclusions = [r for r in report.rows if r.participation_id != STUDY_ROW and r.state == TODO]
    if not any(r.action.startswith("PLACES") for r in study_rows):
        _record(exclusions, report.rows[0].prolific_study if report.rows else "")
    for row in study_rows:
        try:
            if row.action.startswith("PLACES"):
                target = int(row.action.rsplit("→", 1)[1])
                _grow(client, log, row, exclusions, target)
            else:
                client.transition_study(row.prolific_study, "PAUSE" if row.action == "PAUSE" else "START")
                row.state = DONE
        except ProlificConnectionError as exc:
            row.state, row.note = FAILED, str(exc)
            for rest in study_rows:
                if rest.state == TODO:
                    rest.state, rest.note = NOT_TRIED, f"not tried: {exc}"
            return
        except ProlificError as exc:
            row.state, row.note = FAILED, str(exc)


def _record(exclusions: list[Row], prolific_study: str) -> None:
    """Prolific already has the places these exclusions need: record them, with no call."""
    for r in exclusions:
        claimed = claim(
            r.participation_id, Kind.PLACES, action="PLACE", blocked=(Status.DONE,), prolific_id=prolific_study
        )
        if claimed is not None:
            finish(claimed, Status.DONE)
        r.state = DONE


def _grow(client: ProlificClient, log: CallLog, row: Row, exclusions: list[Row], target: int) -> None:
    claims = []
    for r in exclusions:
        # Claimed before the call; a row left uncertain is settled by the next run, which reads the total again.
        claimed = claim(
            r.participation_id, Kind.PLACES, action="PLACE", blocked=(Status.DONE,), prolific_id=row.prolific_study
        )
        if claimed is not None:
            finish(claimed, Status.UNCERTAIN)
            claims.append((r, claimed))
    try:
        client.set_places(row.prolific_study, target)
    except ProlificError as exc:
        status = Status.FAILED if exc.definite else Status.UNCERTAIN
        for r, claimed in claims:
            finish(claimed, status, str(exc))
            r.state, r.note = FAILED, str(exc)
        raise
    for r, claimed in claims:
        finish(claimed, Status.DONE)
        r.state, r.note = DONE, f"Prolific study {row.prolific_study} has {target} places"
    row.state = DONE


# --- After a slot changes --------------------------------------------------------------------------


def on_slot_change(participation: Participation) -> None:
    """A slot was taken or freed: sync the places after commit, if the operations are on and the study opts in."""
    _queue(participation.study_id)


def on_status_change(study: Study) -> None:
    """Our study was opened, paused or closed: sync after commit (a pause or close pauses Prolific's study)."""
    _queue(study.pk)


def _queue(study_pk: int) -> None:
    if not enabled():
        return
    if not Study.objects.filter(pk=study_pk, prolific_sync_places=True).exists():
        return
    transaction.on_commit(partial(_send, study_pk))


def _send(study_pk: int) -> None:
    # By name, as annotation.services.jobs does: a service never imports the Celery entry points.
    celery_app.loader.import_default_modules()
    celery_app.tasks[SYNC_TASK].delay(study_pk)


def sync(*, study_id: int) -> dict[str, int]:
    """Bring one opted-in study's Prolific places and status in step with ours now (the Celery task, and polling's
    beat): grow and start only while ours is open, pause otherwise. Its counts by row state; nothing when the
    operations are off or the study does not opt in."""
    if not enabled():
        return {}
    study = Study.objects.select_related("task").filter(pk=study_id, prolific_sync_places=True).first()
    if study is None:
        return {}
    client = make_client()
    log = CallLog()
    client.on_call = log
    report = Report(operation="places", study=study.slug, dry_run=False)
    report.rows, report.notes = places_rows(study, client)
    run_places(client, log, study, report)
    changes = "; ".join(
        f"{r.action}: {r.state} {r.note}".strip() for r in report.rows if r.participation_id == STUDY_ROW
    )
    logger.info("Prolific places of %s: %s; %s; %s", study.slug, report.counts, "; ".join(report.notes), changes)
    return report.counts
