"""A worker arrives through a study's entry link: resume, refuse, or claim a slot.

The claim is race-safe. In one transaction ``slots.lock_study`` locks the
study's row and its conditions' rows (``SELECT ... FOR UPDATE``, conditions
in id order, so two entries can never deadlock), which serialises the entries
of a study; the worker goes to the condition with the most free slots (ties
at random) and takes its lowest free slot number below N (``slots`` does the
counting). A full study first releases its idle slots (those past the
study's inactivity timeout, as the periodic sweep would). The database has
the last word: the partial unique constraint on (condition, slot_index) for
holding states and the unique (worker, task) refuse whatever slipped through
(e.g. the same worker entering two studies of one task at once), and such a
refusal becomes the right polite answer instead of an error. On SQLite,
whose transactions here begin IMMEDIATE, the whole transaction is serialised
instead of the rows.

Nothing is written unless the worker gets a slot: refused entries leave no
Worker row behind.
"""

from __future__ import annotations

import enum
import random
import secrets
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from annotation.models import Condition, Participation, Study, Worker
from annotation.services import abandonment, lifecycle, outcomes, slots
from annotation.services.platforms import CompletionTarget, EntryParams

_random = random.SystemRandom()
# What a returning worker of the same study gets back to: their slot, their finish page, or (excluded)
# the kind page with the code that gets them paid. Abandoned workers have lost their place.
# A worker who declined the consent text gets back to the page with their code.
_RESUMABLE = (*Participation.HOLDING_STATES, Participation.State.EXCLUDED, Participation.State.DECLINED)


class Outcome(enum.StrEnum):
    JOINED = "joined"
    RESUMED = "resumed"
    PREVIEW = "preview"
    NOT_OPEN = "not_open"  # draft, paused or closed
    FULL = "full"
    ALREADY_TOOK_PART = "already_took_part"
    SLOT_RELEASED = "slot_released"  # this study's slot was released after inactivity; still ineligible
    BLOCKED = "blocked"


@dataclass(frozen=True)
class JoinResult:
    outcome: Outcome
    study: Study
    participation: Participation | None = None

    @property
    def admitted(self) -> bool:
        return self.outcome in (Outcome.JOINED, Outcome.RESUMED)


def _existing(*, worker: Worker | None, study: Study) -> Participation | None:
    if worker is None:
        return None
    return Participation.objects.select_related("condition").filter(worker=worker, task_id=study.task_id).first()


def _answer_for_known_worker(*, worker: Worker | None, study: Study) -> JoinResult | None:
    """Resume, or refuse a blocked or returning worker; None when a new slot is needed."""
    if worker is not None and worker.blocked:
        return JoinResult(Outcome.BLOCKED, study)
    existing = _existing(worker=worker, study=study)
    if existing is None:
        return None
    if existing.study_id == study.pk and existing.state in _RESUMABLE:
        return JoinResult(Outcome.RESUMED, study, existing)
    if existing.study_id == study.pk and existing.state == Participation.State.ABANDONED:
        return JoinResult(Outcome.SLOT_RELEASED, study)
    return JoinResult(Outcome.ALREADY_TOOK_PART, study)


def _find_worker(params: EntryParams) -> Worker | None:
    return Worker.objects.filter(platform=params.platform, external_id=params.external_id).first()


def _get_or_create_worker(params: EntryParams) -> Worker:
    # get_or_create inserts in a savepoint and falls back to a get on IntegrityError, so two
    # first entries of the same worker (e.g. into two studies at once) end with one row.
    worker, _ = Worker.objects.get_or_create(platform=params.platform, external_id=params.external_id)
    return worker


def choose_condition(free: dict[int, list[int]]) -> int | None:
    """The condition id with the most free slots, ties broken at random; None if all are full.

    ``free`` maps condition ids to their free slot numbers (``slots.free_by_condition``).
    """
    most = max((len(v) for v in free.values()), default=0)
    if most == 0:
        return None
    return _random.choice(sorted(cid for cid, v in free.items() if len(v) == most))


def new_participation(
    *,
    study: Study,
    condition: Condition,
    worker: Worker,
    slot_index: int | None,
    platform_data: dict | None = None,
    is_preview: bool = False,
) -> Participation:
    """A participation as it begins, claimed, with its first event: a real entry's or a staff preview's
    (``slot_index`` None), so that both go through the same steps from here on."""
    participation = Participation.all_objects.create(
        study=study,
        condition=condition,
        task_id=study.task_id,
        worker=worker,
        slot_index=slot_index,
        is_preview=is_preview,
        state=Participation.State.CLAIMED,
        test_seed=secrets.randbits(62) if study.test_order == Study.TestOrder.SHUFFLED else None,
        platform_data=platform_data or {},
    )
    lifecycle.record_claim(participation)
    return participation


def _claim(*, study: Study, params: EntryParams) -> JoinResult:
    with transaction.atomic():
        locked, conditions = slots.lock_study(study.pk)
        # Re-check under the lock: the status may have changed, and an earlier entry of the
        # same worker may have committed while this one waited.
        known = _answer_for_known_worker(worker=_find_worker(params), study=locked)
        if known is not None:
            return known
        if locked.status != Study.Status.OPEN:
            return JoinResult(Outcome.NOT_OPEN, locked)
        free = slots.free_by_condition(conditions, locked.workers_per_condition)
        condition_id = choose_condition(free)
        if condition_id is None and abandonment.release_abandoned(study=locked):
            free = slots.free_by_condition(conditions, locked.workers_per_condition)  # idle slots just released
            condition_id = choose_condition(free)
        if condition_id is None:
            return JoinResult(Outcome.FULL, locked)
        condition = next(c for c in conditions if c.pk == condition_id)
        worker = _get_or_create_worker(params)
        if worker.blocked:
            return JoinResult(Outcome.BLOCKED, locked)
        try:
            with transaction.atomic():
                participation = new_participation(
                    study=locked,
                    condition=condition,
                    worker=worker,
                    slot_index=free[condition_id][0],
                    platform_data=dict(params.platform_data),
                )
        except IntegrityError:
            # Only reachable when a concurrent entry of the same worker into another study of
            # this task won (that study's locks are not ours); our slot is safe under our locks.
            known = _answer_for_known_worker(worker=worker, study=locked)
            return known or JoinResult(Outcome.FULL, locked)
        return JoinResult(Outcome.JOINED, locked, participation)


def join_study(*, study: Study, params: EntryParams) -> JoinResult:
    """Admit a worker arriving through the study's entry link, or say why not.

    - MTurk preview: only the task description, nothing stored.
    - A returning worker of this study whose slot is still theirs resumes it
      (also while the study is paused, so nobody loses work already done); an
      excluded one gets back to the page that tells them so, with their code.
    - A worker who has taken part in the task before, in any other study or
      condition, or who abandoned their slot, is refused, as is a blocked one.
    - A closed study admits nobody new, but a worker of this study whose slot or finish page is still
      theirs gets back to it: to go on during the grace period closing gave them, and afterwards to
      find their completion code (annotation.services.closing).
    - Otherwise an open study with a free slot gives them one.
    """
    if study.status == Study.Status.DRAFT:
        return JoinResult(Outcome.NOT_OPEN, study)
    if study.status == Study.Status.CLOSED:
        if params.preview:
            return JoinResult(Outcome.NOT_OPEN, study)
        known = _answer_for_known_worker(worker=_find_worker(params), study=study)
        return known if known is not None and known.admitted else JoinResult(Outcome.NOT_OPEN, study)
    if params.preview:
        return JoinResult(Outcome.PREVIEW if study.is_open else Outcome.NOT_OPEN, study)
    known = _answer_for_known_worker(worker=_find_worker(params), study=study)
    if known is not None:
        return known
    if not study.is_open:
        return JoinResult(Outcome.NOT_OPEN, study)
    return _claim(study=study, params=params)


def completion_target(participation: Participation) -> CompletionTarget:
    """Where the finish page sends the worker: Prolific redirect, MTurk form post, or just the code.

    A participation still at work has no outcome yet: it gets the "completed" code (what a closed-out
    worker who had started is paid with)."""
    target = outcomes.participation_target(participation)
    if target is not None:
        return target
    return outcomes.target_for(
        study=participation.study,
        outcome=outcomes.Outcome.COMPLETED,
        platform=participation.worker.platform,
        platform_data=participation.platform_data or {},
        code=participation.completion_code,
    )


# Entry refusals that send the worker back with a code of their own (where the platform takes one).
REFUSAL_OUTCOMES = {
    Outcome.FULL: outcomes.Outcome.FULL,
    Outcome.ALREADY_TOOK_PART: outcomes.Outcome.ALREADY_TOOK_PART,
}


def refusal_target(*, result: JoinResult, params: EntryParams) -> CompletionTarget | None:
    """The code and way back for a worker refused because the study is full or they already took part."""
    outcome = REFUSAL_OUTCOMES.get(result.outcome)
    if outcome is None:
        return None
    return outcomes.target_for(
        study=result.study, outcome=outcome, platform=params.platform, platform_data=params.platform_data
    )
