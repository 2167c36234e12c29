"""Slot accounting: the one place that says who holds a slot, which are free, and how to lock them.

A condition has N slots (the study's ``workers_per_condition``), numbered
0..N-1. A participation *holds* its slot while it is in one of
``Participation.HOLDING_STATES`` (claimed, training, test, completed); the
database's partial unique index on (condition, slot_index) is built from the
same tuple. Abandoned and excluded participations keep their slot number but
hold nothing, so the slot counts as free again.

A study opened as a pilot (``Study.in_pilot``) offers only its pilot share of each condition's slots,
numbers 0..P-1, until the rest is opened: ``open_slots`` is that rule, and every count and allocation
below takes its N from it. Who took part in the pilot stays known to the fresh-worker rule (admission)
like anyone: the rest's workers are new ones.

Free slots are counted, not only numbered: a condition has ``N - held``
free slots (never fewer than 0), and the numbers offered are the lowest
unheld ones below N, as many as that count. (Holders above N can exist once
N has been lowered; they still count.)

Whoever hands out a slot (the entry's claim, the training filter's
readmission) locks first with ``lock_study``: the study's row, then its
conditions' rows in id order. Everyone taking the locks in that order is what
keeps two such transactions from deadlocking.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from annotation.models import Condition, Participation, Study

State = Participation.State
HOLDING_STATES = Participation.HOLDING_STATES


def holding(prefix: str = "") -> Q:
    """The participations that hold a slot; ``prefix`` reaches them from another model (``participations__``)."""
    return Q(**{f"{prefix}state__in": HOLDING_STATES})


# --- The arithmetic -------------------------------------------------------------------


def open_slots_of(*, workers: int, pilot: int | None, piloting: bool) -> int:
    """The slots per condition workers may hold now: the pilot's share while piloting, else the design's N."""
    return min(pilot, workers) if piloting and pilot else workers


def open_slots(study: Study) -> int:
    """``open_slots_of`` for a study: what the entry, a readmission and the counts take as N."""
    return open_slots_of(
        workers=study.workers_per_condition, pilot=study.pilot_workers_per_condition, piloting=study.in_pilot
    )


def free_count(*, slots: int, filled: int) -> int:
    """How many slots of a condition are free: N minus its holders, never below 0."""
    return max(0, slots - filled)


def free_numbers(held: Collection[int], slots: int) -> list[int]:
    """The slot numbers a new holder may take, lowest first: unheld ones below N, as many as are free."""
    room = free_count(slots=slots, filled=len(held))
    return [i for i in range(slots) if i not in held][:room]


# --- Under the lock ---------------------------------------------------------------------


def lock_study(study_id: int) -> tuple[Study, list[Condition]]:
    """Lock the study's row, then its conditions' rows in id order; call inside a transaction.

    The one lock order of slot changes: on PostgreSQL concurrent claims of a
    study queue here instead of deadlocking; on SQLite (IMMEDIATE
    transactions) the whole transaction is serialised anyway.
    """
    study = Study.objects.select_for_update().get(pk=study_id)
    conditions = list(Condition.objects.select_for_update().filter(study=study).order_by("id"))
    return study, conditions


def _slot_holders() -> QuerySet[Participation]:
    """The participations that hold a slot number: a withdrawn participant's keeps it (their place was
    used and paid; docs/participants.md), so the database's one-holder-per-slot rule and this agree.
    No preview: the only kind without a slot number."""
    return Participation.all_objects.filter(holding(), is_preview=False)


def held_numbers(condition_id: int, *, exclude_participation: int | None = None) -> set[int]:
    """The slot numbers of the condition's holders (leaving one participation out, if given)."""
    rows = _slot_holders().filter(condition_id=condition_id)
    if exclude_participation is not None:
        rows = rows.exclude(pk=exclude_participation)
    return {slot for slot in rows.values_list("slot_index", flat=True) if slot is not None}


def free_by_condition(conditions: Iterable[Condition], slots: int) -> dict[int, list[int]]:
    """Condition id -> its free slot numbers (``free_numbers``), in one query."""
    conditions = list(conditions)
    held: dict[int, set[int]] = {c.pk: set() for c in conditions}
    rows = _slot_holders().filter(condition__in=conditions).values_list("condition_id", "slot_index")
    for condition_id, slot in rows:
        if slot is not None:  # never, outside previews
            held[condition_id].add(slot)
    return {c.pk: free_numbers(held[c.pk], slots) for c in conditions}


def slot_for_return(participation: Participation, *, slots: int) -> int | None:
    """The slot a worker who held one before takes back: their own number if it is still free, else the
    lowest free one; None when the condition is full."""
    free = free_numbers(held_numbers(participation.condition_id, exclude_participation=participation.pk), slots)
    if not free:
        return None
    return participation.slot_index if participation.slot_index in free else free[0]


# --- Counts for pages and the API -----------------------------------------------------------


@dataclass(frozen=True)
class ConditionCounts:
    """How one condition's slots stand, with a count per participation state."""

    condition_id: int
    study_id: int
    shots: int
    slots: int  # open now: the pilot's share while piloting (open_slots), else the design's N
    filled: int  # the holders: claimed + training + test + completed
    claimed: int
    in_training: int
    in_test: int
    completed: int
    excluded: int
    abandoned: int
    declined: int
    design_slots: int = 0  # the design's N (workers per condition), pilot or not

    @property
    def free(self) -> int:
        return free_count(slots=self.slots, filled=self.filled)

    def in_state(self, state: str) -> int:
        """How many of the condition's participations are in ``state``."""
        return getattr(self, _FIELD_OF_STATE[state])


# ConditionCounts field -> the state it counts.
_STATE_FIELDS = {
    "claimed": State.CLAIMED,
    "in_training": State.TRAINING,
    "in_test": State.TEST,
    "completed": State.COMPLETED,
    "excluded": State.EXCLUDED,
    "abandoned": State.ABANDONED,
    "declined": State.DECLINED,
}
_FIELD_OF_STATE: dict[str, str] = {state: name for name, state in _STATE_FIELDS.items()}


def condition_counts(studies: Iterable[Study]) -> dict[int, list[ConditionCounts]]:
    """Study id -> its conditions' counts, by shot level (one aggregate query for all the studies)."""
    studies = list(studies)
    # A join does not go through Participation.objects: staff previews are left out here by hand.
    counted = Q(participations__is_preview=False)
    per_state = {
        name: Count("participations", filter=Q(participations__state=state) & counted)
        for name, state in _STATE_FIELDS.items()
    }
    rows = (
        Condition.objects.filter(study__in=studies)
        .order_by("study_id", "shots")
        .values(
            "id",
            "study_id",
            "shots",
            "study__workers_per_condition",
            "study__pilot_workers_per_condition",
            "study__pilot_opened_at",
            "study__rest_opened_at",
        )
        .annotate(filled=Count("participations", filter=holding("participations__") & counted), **per_state)
    )
    result: dict[int, list[ConditionCounts]] = defaultdict(list)
    for r in rows:
        result[r["study_id"]].append(
            ConditionCounts(
                condition_id=r["id"],
                study_id=r["study_id"],
                shots=r["shots"],
                slots=open_slots_of(
                    workers=r["study__workers_per_condition"],
                    pilot=r["study__pilot_workers_per_condition"],
                    piloting=r["study__pilot_opened_at"] is not None and r["study__rest_opened_at"] is None,
                ),
                filled=r["filled"],
                **{name: r[name] for name in _STATE_FIELDS},
                design_slots=r["study__workers_per_condition"],
            )
        )
    return {s.pk: result.get(s.pk, []) for s in studies}
