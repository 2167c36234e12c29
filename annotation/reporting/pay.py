"""Pay in the reports: each condition's median effective hourly pay and totals.

The rule itself (paid time, owed amount, bonus) lives in ``annotation.services.money.pay``; this module
only sums its lines per condition for the tables, the statement and the dashboard.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from annotation.models import Study
from annotation.services.money.pay import CENT, PayLine, pay_lines


@dataclass(frozen=True)
class ConditionPay:
    study_slug: str
    shots: int
    n_workers: int
    median_effective_hourly: Decimal | None
    below_rate: bool
    total_amount: Decimal
    total_bonus: Decimal | None  # None while the study's posted reward is not set


def condition_pay(*, study: Study) -> list[ConditionPay]:
    """Each condition's median effective hourly pay over everyone who was paid (any final state)."""
    participations = list(study.participations.select_related("condition"))
    lines = pay_lines(study=study, participations=participations)
    by_shots: dict[int, list[PayLine]] = defaultdict(list)
    for p in participations:
        by_shots[p.condition.shots].append(lines[p.pk])
    known = study.base_reward is not None
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
                total_bonus=sum((line.bonus or Decimal(0) for line in group), Decimal("0.00")) if known else None,
            )
        )
    return result
