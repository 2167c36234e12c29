"""Paid time and pay: at the study's hourly rate, with effective hourly pay and bonuses.

Paid time runs from the claim to the end of the participation as recorded in
its ParticipationEvent rows: the completed or excluded event, or for an
abandoned (or still running) slot its last recorded activity.

Pay: with no posted reward (``Study.base_reward`` = 0) a worker is paid the
hourly rate for the paid time. With a posted reward the worker receives it,
the *effective* hourly pay is reward / paid hours, and where that falls below
the rate the bonus ``rate × hours − reward`` makes it up.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

from annotation.models import Participation, ParticipationEvent, Study

CENT = Decimal("0.01")
State = Participation.State


@dataclass(frozen=True)
class PayLine:
    participation_id: int
    seconds: float
    base: Decimal
    bonus: Decimal
    amount: Decimal
    effective_hourly: Decimal | None
    below_rate: bool

    @property
    def minutes(self) -> float:
        return round(self.seconds / 60, 2)


def paid_seconds(participations: Iterable[Participation]) -> dict[int, float]:
    """Seconds of paid time per participation id, from the recorded transitions."""
    participations = list(participations)
    starts: dict[int, datetime] = {}
    ends: dict[int, datetime] = {}
    events = ParticipationEvent.objects.filter(participation__in=participations).values_list(
        "participation_id", "to_state", "at"
    )
    for pid, to_state, at in events.order_by("at", "id"):
        if to_state == State.CLAIMED and pid not in starts:
            starts[pid] = at
        elif to_state in (State.COMPLETED, State.EXCLUDED):
            ends[pid] = at  # the last one wins: an admin may readmit an excluded worker
    result = {}
    for p in participations:
        start = starts.get(p.pk, p.created_at)
        end = ends.get(p.pk) if p.state in (State.COMPLETED, State.EXCLUDED) else None
        end = end or p.last_activity_at or start
        result[p.pk] = max(0.0, (end - start).total_seconds())
    return result


# Under a minute of paid time (a worker who left at once) an hourly figure says nothing: it is left
# empty rather than shown as the full rate next to "0.0 minutes".
MIN_SECONDS_FOR_RATE = 60


def pay_line(*, study: Study, participation_id: int, seconds: float) -> PayLine:
    rate = Decimal(study.hourly_rate)
    hours = Decimal(str(seconds)) / Decimal(3600)
    owed = (rate * hours).quantize(CENT, ROUND_HALF_UP)
    base = Decimal(study.base_reward or 0).quantize(CENT)
    if base <= 0:
        effective = rate if seconds >= MIN_SECONDS_FOR_RATE else None
        return PayLine(participation_id, seconds, Decimal("0.00"), Decimal("0.00"), owed, effective, False)
    effective = (base / hours).quantize(CENT, ROUND_HALF_UP) if seconds >= MIN_SECONDS_FOR_RATE else None
    below = effective is not None and effective < rate
    bonus = max(Decimal("0.00"), owed - base) if below else Decimal("0.00")
    return PayLine(participation_id, seconds, base, bonus, base + bonus, effective, below)


def pay_lines(*, study: Study, participations: Iterable[Participation]) -> dict[int, PayLine]:
    seconds = paid_seconds(participations)
    return {pid: pay_line(study=study, participation_id=pid, seconds=s) for pid, s in seconds.items()}


@dataclass(frozen=True)
class ConditionPay:
    study_slug: str
    shots: int
    n_workers: int
    median_effective_hourly: Decimal | None
    below_rate: bool
    total_amount: Decimal
    total_bonus: Decimal


def condition_pay(*, study: Study) -> list[ConditionPay]:
    """Each condition's median effective hourly pay over everyone who was paid (any final state)."""
    participations = list(study.participations.select_related("condition"))
    lines = pay_lines(study=study, participations=participations)
    by_shots: dict[int, list[PayLine]] = defaultdict(list)
    for p in participations:
        by_shots[p.condition.shots].append(lines[p.pk])
    result = []
    for condition in study.conditions.order_by("shots"):
        group = by_shots.get(condition.shots, [])
        rates = [line.effective_hourly for line in group if line.effective_hourly is not None]
        median = Decimal(statistics.median(rates)).quantize(CENT, ROUND_HALF_UP) if rates else None
        result.append(
            ConditionPay(
                study_slug=study.slug,
                shots=condition.shots,
                n_workers=len(group),
                median_effective_hourly=median,
                below_rate=median is not None and median < study.hourly_rate,
                total_amount=sum((line.amount for line in group), Decimal("0.00")),
                total_bonus=sum((line.bonus for line in group), Decimal("0.00")),
            )
        )
    return result
