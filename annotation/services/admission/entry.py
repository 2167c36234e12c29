"""A worker arrives through a study's entry link: look, then claim a slot (or decline).

Opening the link (``look``, a GET) reads only: it resumes a worker who holds a
slot or has a page of theirs here, refuses one who can never get a slot, and
otherwise shows the start page, with nothing held and nothing recorded (a
link preview or a prefetch costs nothing). The slot is taken by ``join_study``
when the worker agrees to the consent text, or presses Start where the study
asks for none (a POST); that is also when "full" and "already took part" are
decided, and when the paid time starts (``lifecycle.record_claim``). Declining
there (``decline``) takes no slot (annotation.services.admission.consent).

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

Nothing is written unless the worker gets a slot (or declines): refused
entries leave no Worker row behind.
"""

from __future__ import annotations

import enum
import random
import secrets
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils.translation import gettext

from annotation.models import Condition, Participation, Study, Worker
from annotation.services.admission import abandonment, consent
from annotation.services.state import lifecycle, outcomes, pseudonyms, slots
from annotation.services.state.platforms import CompletionTarget, EntryParams

_random = random.SystemRandom()
# What a returning worker of the same study gets back to: their slot, their finish page, or (excluded)
# the kind page with the code that gets them paid. Abandoned workers have lost their place.
# A worker who declined the consent text gets back to the page with their code.
_RESUMABLE = (*Participation.HOLDING_STATES, Participation.State.EXCLUDED, Participation.State.DECLINED)


class Outcome(enum.StrEnum):
    START = "start"  # the start page: what the study is, and the way to take part; nothing held
    JOINED = "joined"
    RESUMED = "resumed"
    PREVIEW = "preview"
    NOT_OPEN = "not_open"  # draft, paused or closed
    FULL = "full"
    ALREADY_TOOK_PART = "already_took_part"
    SLOT_RELEASED = "slot_released"  # this study's slot was released after inactivity; still ineligible
    BLOCKED = "blocked"
    DECLINED = "declined"  # declined the consent text at the entry page: no slot was ever taken


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
    # all_objects: a withdrawn participation (left out of Participation.objects) still used the worker's try.
    return (
        Participation.all_objects.select_related("condition")
        .filter(worker=worker, task_id=study.task_id, is_preview=False)
        .first()
    )


def _answer_for_known_worker(*, worker: Worker | None, study: Study) -> JoinResult | None:
    """Resume, or refuse a blocked or returning worker; None when a new slot is needed."""
    if worker is not None and worker.blocked:
        return JoinResult(Outcome.BLOCKED, study)
    existing = _existing(worker=worker, study=study)
    if existing is None:
        return JoinResult(Outcome.DECLINED, study) if consent.has_declined(worker=worker, study=study) else None
    if existing.withdrawn_at is not None:
        return JoinResult(Outcome.ALREADY_TOOK_PART, study)  # withdrew: their data is gone, their try is not
    if existing.study_id == study.pk and existing.state in _RESUMABLE:
        return JoinResult(Outcome.RESUMED, study, existing)
    if existing.study_id == study.pk and existing.state == Participation.State.ABANDONED:
        return JoinResult(Outcome.SLOT_RELEASED, study)
    return JoinResult(Outcome.ALREADY_TOOK_PART, study)


def _find_worker(params: EntryParams) -> Worker | None:
    # A withdrawn worker (or one past the retention time) is stored under the keyed hash of their id.
    ids = (params.external_id, pseudonyms.pseudonym(platform=params.platform, external_id=params.external_id))
    return Worker.objects.filter(platform=params.platform, external_id__in=ids).order_by("external_id").first()


def _get_or_create_worker(params: EntryParams) -> Worker:
    known = _find_worker(params)
    if known is not None:
        return known
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


def _claim(
    *, study: Study, params: EntryParams, consent_hash: str | None = None, language: str | None = None
) -> JoinResult:
    with transaction.atomic():
        locked, conditions = slots.lock_study(study.pk)
        # Re-check under the lock: the status may have changed, and an earlier entry of the
        # same worker may have committed while this one waited.
        known = _answer_for_known_worker(worker=_find_worker(params), study=locked)
        if known is not None:
            return known
        if locked.status != Study.Status.OPEN:
            return JoinResult(Outcome.NOT_OPEN, locked)
        free = slots.free_by_condition(conditions, slots.open_slots(locked))
        condition_id = choose_condition(free)
        if condition_id is None and abandonment.release_abandoned(study=locked):
            free = slots.free_by_condition(conditions, slots.open_slots(locked))  # idle slots just released
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
                if consent.is_asked(locked):
                    consent.agree(participation, shown_hash=consent_hash, language=language)
        except IntegrityError:
            # Only reachable when a concurrent entry of the same worker into another study of
            # this task won (that study's locks are not ours); our slot is safe under our locks.
            known = _answer_for_known_worker(worker=worker, study=locked)
            return known or JoinResult(Outcome.FULL, locked)
        return JoinResult(Outcome.JOINED, locked, participation)


def look(*, study: Study, params: EntryParams) -> JoinResult:
    """What opening the entry link shows (a GET: reads only, takes no slot).

    - MTurk preview: only the task description.
    - A returning worker of this study whose slot is still theirs resumes it
      (also while the study is paused, so nobody loses work already done); an
      excluded or declining one gets back to the page with their code.
    - A worker who has taken part in the task before, in any other study or
      condition, or who abandoned their slot, is refused, as is a blocked one.
    - A closed study admits nobody new, but a worker of this study whose slot or finish page is still
      theirs gets back to it: to go on during the grace period closing gave them, and afterwards to
      find their completion code (annotation.services.admission.closing).
    - Otherwise an open study shows its start page (``Outcome.START``); whether a slot is free is
      decided when the worker takes part (``join_study``).
    """
    if study.status == Study.Status.DRAFT:
        return JoinResult(Outcome.NOT_OPEN, study)
    if study.status == Study.Status.CLOSED:
        if params.preview:
            return JoinResult(Outcome.NOT_OPEN, study)
        known = _answer_for_known_worker(worker=_find_worker(params), study=study)
        return (
            known
            if known is not None and known.outcome in _SHOWN_AFTER_CLOSING
            else JoinResult(Outcome.NOT_OPEN, study)
        )
    if params.preview:
        return JoinResult(Outcome.PREVIEW if study.is_open else Outcome.NOT_OPEN, study)
    known = _answer_for_known_worker(worker=_find_worker(params), study=study)
    if known is not None:
        return known
    if not study.is_open:
        return JoinResult(Outcome.NOT_OPEN, study)
    return JoinResult(Outcome.START, study)


_SHOWN_AFTER_CLOSING = (Outcome.RESUMED, Outcome.DECLINED)


def join_study(
    *, study: Study, params: EntryParams, consent_hash: str | None = None, language: str | None = None
) -> JoinResult:
    """The worker takes part (agrees to the consent text, or presses Start): claim a slot, or say why not.

    Where the study asks for consent, the claim records the agreement to its text in ``language``
    (``consent_hash``: the text the page showed; a changed text raises ``consent.ConsentError`` and
    nothing is claimed). A worker ``look`` would resume or refuse gets that answer here too.
    """
    seen = look(study=study, params=params)
    if seen.outcome != Outcome.START:
        return seen
    if consent.is_asked(study):
        consent.check_shown(study, consent_hash, language)
    return _claim(study=study, params=params, consent_hash=consent_hash, language=language)


def decline(*, study: Study, params: EntryParams) -> JoinResult:
    """The worker declined the consent text on the entry page: recorded once, and no slot is taken."""
    seen = look(study=study, params=params)
    if seen.outcome != Outcome.START:
        return seen
    if not consent.is_asked(study):
        raise consent.ConsentError("no_consent", gettext("this study has no consent step"))
    worker = _get_or_create_worker(params)  # not blocked: ``look`` refuses a blocked worker it knows
    consent.decline_at_entry(worker=worker, study=study, platform_data=dict(params.platform_data))
    return JoinResult(Outcome.DECLINED, study)


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
    Outcome.DECLINED: outcomes.Outcome.DECLINED,
}


def refusal_target(*, result: JoinResult, params: EntryParams) -> CompletionTarget | None:
    """The code and way back for a worker refused because the study is full or they already took part,
    or who declined the consent text at the entry page."""
    outcome = REFUSAL_OUTCOMES.get(result.outcome)
    if outcome is None:
        return None
    return outcomes.target_for(
        study=result.study, outcome=outcome, platform=params.platform, platform_data=params.platform_data
    )
