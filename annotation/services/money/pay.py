"""The pay rule: paid time, the amount owed at the study's hourly rate, and the bonus beyond the posted reward.

Every path that pays or shows pay calls this module: the Prolific bonus operation, the reports and
exports, the human-evaluation statement, the dashboard and the admin. The rule (docs/reports.md, "Pay"):

- **Paid time** (``paid_time``, the one function every path calls) runs from the moment the slot was
  taken (the claim event, ``lifecycle.record_claim``) to the end of the work (``work_end``), less every
  stretch between an exclusion and a readmission (``excluded_stretches``).
- **The end of the work** is the worker's last act: the claim, a step begun or ended (the start, the end
  of training, the completion, a decline), their last answer, or a readmission back to work (paid
  again from then). An exclusion during the work ends it at its own moment only when it is dated at
  the worker's act: the end-of-step rules' (at the last answer), the comprehension check's screen-out
  (at the second failed attempt) and the close-out (dated at the last activity). An exclusion someone
  else makes at a moment of their own (an admin's, the training filter's: at the end of training it is
  the last training answer's moment, the group's verdict comes later) does not: the worker is paid to
  their last act before it, not for the time they sat idle until it. An abandonment, noticed later by
  the idle sweep or the platform, is no act either. A verdict on a worker who had already completed
  comes after the work and never moves its end. A participation still at work is paid to its last
  activity.
- **Between an exclusion and a readmission** nobody works: that stretch is never paid, whatever staff
  do later. A readmission that ends the test at once (the worker had answered everything) adds nothing;
  a readmitted worker is paid again from the readmission, for the work after it.
- **Owed** = hourly rate × paid hours, rounded half-up to the cent.
- **Bonus** = owed − the posted reward (never below 0): the worker receives reward + bonus = owed, or
  the reward alone when it covers the rate. The reward must be known: with none, no bonus is computed.

``PAY_RULE_VERSION`` names this rule; each bonus record and each export's provenance carry it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Max

from annotation.models import ComprehensionAttempt, Participation, ParticipationEvent, Response, Study, SurveyResponse

# 1: paid time ran to the last completion or exclusion event (a later verdict or a readmission moved
#    it), and an unset posted reward counted as 0 (the bonus was the whole hourly pay).
# 2: paid time ends with the work; the bonus is computed from the reward actually posted.
# 3: the time between an exclusion and a readmission is not paid (version 2 paid it whenever the
#    readmission moved the end of the work: a readmission after an end-of-test exclusion paid until the
#    readmission, and a readmitted training-filter failure was paid for the whole wait).
# 4: an admin's or the training filter's exclusion during the work ends paid time at the worker's last
#    act, not at the exclusion (version 3 paid an idle worker until staff excluded them).
PAY_RULE_VERSION = "4"

CENT = Decimal("0.01")
State = Participation.State
ACTIVE = (State.CLAIMED, State.TRAINING, State.TEST)
TERMINAL = (State.COMPLETED, State.EXCLUDED, State.ABANDONED, State.DECLINED)
Kind = Participation.ExclusionKind

# Exclusions made at a moment that is not the worker's act (rule 4): an admin's, whenever staff act; the
# training filter's, whose group verdict comes after the worker moved on (its verdict at the end of
# training is at the last training answer, which counts as an act itself). Every other kind is dated at
# the worker's act (the end-of-step rules, the comprehension screen-out, the close-out); an exclusion
# recorded before kinds existed (empty) keeps its moment as the end, as version 3 did.
NOT_THE_WORKERS_ACT = (Kind.ADMIN, Kind.TRAINING_FILTER)

# Under a minute of paid time (a worker who left at once) an hourly figure says nothing: it is left
# empty rather than shown as the full rate next to "0.0 minutes".
MIN_SECONDS_FOR_RATE = 60


class BaseRewardUnknown(Exception):
    """No posted reward is known for the study: bonuses cannot be computed."""


@dataclass(frozen=True)
class BaseReward:
    """The reward posted per participant, and where it was read (stated in every dry run)."""

    amount: Decimal
    source: str


def stored_base(study: Study) -> BaseReward | None:
    """The study's posted reward as entered (``Study.base_reward``); None while it is not set."""
    if study.base_reward is None:
        return None
    return BaseReward(Decimal(study.base_reward).quantize(CENT), "the study's posted reward (base_reward)")


def require_base(study: Study) -> BaseReward:
    base = stored_base(study)
    if base is None:
        raise BaseRewardUnknown(
            f"Study {study.slug!r} has no posted reward (base_reward is empty): set it to the reward posted on "
            "the platform (0 only if none was posted) before bonuses are computed."
        )
    return base


@dataclass(frozen=True)
class PayLine:
    participation_id: int
    seconds: float
    owed: Decimal
    base: Decimal | None  # None: the posted reward is not known
    bonus: Decimal | None
    effective_hourly: Decimal | None
    below_rate: bool

    @property
    def minutes(self) -> float:
        return round(self.seconds / 60, 2)

    @property
    def amount(self) -> Decimal:
        """What the worker receives: reward + bonus, or the owed amount while the reward is unknown."""
        if self.base is None or self.bonus is None:
            return self.owed
        return self.base + self.bonus

    @property
    def received_hourly(self) -> Decimal | None:
        """What the worker received (``amount``) per paid hour, the figure set against a platform's minimum
        and recommended rates; None under ``MIN_SECONDS_FOR_RATE`` of paid time."""
        if self.seconds < MIN_SECONDS_FOR_RATE:
            return None
        return (self.amount * Decimal(3600) / Decimal(str(self.seconds))).quantize(CENT, ROUND_HALF_UP)


def work_end(
    events: Iterable[tuple[str, str, datetime]],
    *,
    last_answer: datetime | None,
    state: str,
    last_activity: datetime,
    start: datetime | None = None,
    exclusion_kind: str = "",
) -> datetime:
    """The end of paid time, the worker's last act, from a participation's events ``(from_state, to_state,
    at)`` in time order (the claim, which ``start`` gives, left out). ``exclusion_kind`` is the
    participation's now: it says whether a standing exclusion made during the work is dated at the
    worker's act (``NOT_THE_WORKERS_ACT``)."""
    acts = [at for at in (start, last_answer) if at is not None]
    completed = ended = False
    excluded_at: datetime | None = None  # the standing exclusion made during the work, if any
    for from_state, to_state, at in events:
        ended = ended or to_state in TERMINAL
        if to_state == State.EXCLUDED:
            excluded_at = at if from_state in ACTIVE and not completed else None
        elif to_state == State.ABANDONED:
            pass  # noticed later (the idle sweep, a return on the platform): not an act
        elif completed and (to_state == State.COMPLETED or from_state == State.EXCLUDED):
            pass  # a readmission of a worker who had finished, and the completion it gives: after the work
        else:
            # A step begun or ended, a decline, or a readmission back to work (the wait before it is not
            # paid: ``excluded_stretches``).
            acts.append(at)
            completed = completed or to_state == State.COMPLETED
            excluded_at = None
    if state == State.EXCLUDED and excluded_at is not None and exclusion_kind not in NOT_THE_WORKERS_ACT:
        acts.append(excluded_at)
    if (state in ACTIVE and not completed) or (state in TERMINAL and not ended) or not acts:
        acts.append(last_activity)  # still at work (paid so far), or an end that left no event
    return max(acts)


def excluded_stretches(events: Iterable[tuple[str, str, datetime]]) -> list[tuple[datetime, datetime | None]]:
    """Each stretch from an exclusion to the readmission that followed it (None: not readmitted), from a
    participation's events ``(from_state, to_state, at)`` in time order."""
    stretches: list[tuple[datetime, datetime | None]] = []
    excluded_at: datetime | None = None
    for from_state, to_state, at in events:
        if to_state == State.EXCLUDED:
            excluded_at = at
        elif from_state == State.EXCLUDED and excluded_at is not None:  # a readmission
            stretches.append((excluded_at, at))
            excluded_at = None
    if excluded_at is not None:
        stretches.append((excluded_at, None))
    return stretches


def paid_time(
    events: Iterable[tuple[str, str, datetime]],
    *,
    start: datetime,
    last_answer: datetime | None,
    state: str,
    last_activity: datetime,
    exclusion_kind: str = "",
) -> float:
    """THE pay rule's paid time, in seconds, of one participation: from ``start`` (the slot taken) to the
    end of the work (``work_end``), less the part of every stretch between an exclusion and a readmission
    (``excluded_stretches``) that falls inside it. ``events`` are ``(from_state, to_state, at)`` in time
    order, the claim left out; ``last_answer`` is the worker's last locked answer (attention checks too);
    ``state``, ``last_activity`` and ``exclusion_kind`` are the participation's now. Pure: no database."""
    events = list(events)
    end = work_end(
        events,
        last_answer=last_answer,
        state=state,
        last_activity=last_activity,
        start=start,
        exclusion_kind=exclusion_kind,
    )
    idle = 0.0
    for excluded_at, readmitted_at in excluded_stretches(events):
        left, right = max(excluded_at, start), min(readmitted_at or end, end)
        idle += max(0.0, (right - left).total_seconds())
    return max(0.0, (end - start).total_seconds() - idle)


@dataclass
class _Record:
    """What the pay rule reads of one participation: the claim, its later events, its last answer."""

    participation: Participation
    start: datetime
    events: list[tuple[str, str, datetime]]
    last_answer: datetime | None


def _records(participations: Iterable[Participation]) -> list[_Record]:
    """The pay rule's inputs for each participation, read from the database in four queries."""
    participations = list(participations)
    starts: dict[int, datetime] = {}
    events: dict[int, list[tuple[str, str, datetime]]] = {p.pk: [] for p in participations}
    rows = ParticipationEvent.objects.filter(participation__in=participations).values_list(
        "participation_id", "from_state", "to_state", "at"
    )
    for pid, from_state, to_state, at in rows.order_by("at", "id"):
        if to_state == State.CLAIMED:
            starts.setdefault(pid, at)
        else:
            events[pid].append((from_state, to_state, at))
    # Every locked answer counts, attention checks included (all_objects): it is work. So do the answers
    # before the first step: the comprehension check's attempts and the survey placed before training (the
    # one after the test comes after the work's end, the completion).
    answers = (
        Response.all_objects.filter(participation__in=participations, submitted_at__isnull=False)
        .values("participation_id")
        .annotate(last=Max("submitted_at"))
        .order_by()
    )
    attempts = (
        ComprehensionAttempt.objects.filter(participation__in=participations)
        .values("participation_id")
        .annotate(last=Max("at"))
        .order_by()
    )
    surveys = (
        SurveyResponse.objects.filter(participation__in=participations, placement=Study.SurveyPlacement.BEFORE_TRAINING)
        .values("participation_id")
        .annotate(last=Max("submitted_at"))
        .order_by()
    )
    last_answers: dict[int, datetime] = {}
    for row in [*answers, *attempts, *surveys]:
        pid, last = row["participation_id"], row["last"]
        last_answers[pid] = max(last, last_answers.get(pid, last))
    return [_Record(p, starts.get(p.pk, p.created_at), events[p.pk], last_answers.get(p.pk)) for p in participations]


def paid_seconds(participations: Iterable[Participation]) -> dict[int, float]:
    """Seconds of paid time per participation id (``paid_time``)."""
    return {
        r.participation.pk: paid_time(
            r.events,
            start=r.start,
            last_answer=r.last_answer,
            state=r.participation.state,
            last_activity=r.participation.last_activity_at,
            exclusion_kind=r.participation.exclusion_kind,
        )
        for r in _records(participations)
    }


def work_ends(participations: Iterable[Participation]) -> dict[int, datetime]:
    """The end of the work (``work_end``) per participation id, as the participations stand now: for one
    still at work, its last act so far, which is where a close-out dates its end (``closing.close_out``)."""
    return {
        r.participation.pk: work_end(
            r.events,
            last_answer=r.last_answer,
            state=r.participation.state,
            last_activity=r.participation.last_activity_at,
            start=r.start,
            exclusion_kind=r.participation.exclusion_kind,
        )
        for r in _records(participations)
    }


def owed(*, rate: Decimal, seconds: float) -> Decimal:
    """Rate × hours, half-up to the cent (multiplied before dividing, so a half cent stays exact)."""
    return (Decimal(rate) * Decimal(str(seconds)) / Decimal(3600)).quantize(CENT, ROUND_HALF_UP)


def pay_line(*, rate: Decimal, base: Decimal | None, participation_id: int, seconds: float) -> PayLine:
    """One worker's pay. ``base`` is the posted reward (None: unknown, so no bonus is computed)."""
    rate = Decimal(rate)
    amount = owed(rate=rate, seconds=seconds)
    timed = seconds >= MIN_SECONDS_FOR_RATE
    if base is None:
        return PayLine(participation_id, seconds, amount, None, None, None, False)
    if base <= 0:  # paid by the hour: the whole owed amount is the bonus
        return PayLine(participation_id, seconds, amount, Decimal("0.00"), amount, rate if timed else None, False)
    hours = Decimal(str(seconds)) / Decimal(3600)
    effective = (base / hours).quantize(CENT, ROUND_HALF_UP) if timed else None
    below = effective is not None and effective < rate
    bonus = max(Decimal("0.00"), amount - base) if below else Decimal("0.00")
    return PayLine(participation_id, seconds, amount, base, bonus, effective, below)


def pay_lines(
    *, study: Study, participations: Iterable[Participation], base: BaseReward | None = None
) -> dict[int, PayLine]:
    """Each participation's pay line; ``base`` defaults to the study's stored posted reward."""
    base = base or stored_base(study)
    amount = None if base is None else base.amount
    seconds = paid_seconds(participations)
    return {
        pid: pay_line(rate=study.hourly_rate, base=amount, participation_id=pid, seconds=s)
        for pid, s in seconds.items()
    }
