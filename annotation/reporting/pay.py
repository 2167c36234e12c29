"""Pay in the reports: who the platform paid, and each condition's median effective hourly pay and totals.

The rule itself (paid time, owed amount, bonus) lives in ``annotation.services.money.pay``; this module
only sums its lines per condition for the tables, the statement and the dashboard. Fairness figures
(medians, below-rate flags, totals) are over the participations the platform paid (``platform_paid``),
never over workers who returned, timed out or declined and were never paid.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from annotation.models import Participation, ProlificAction, Study
from annotation.services.money.pay import ACTIVE, CENT, PayLine, pay_lines
from annotation.services.prolific.outcomes import PAID, REJECT, decide


@dataclass(frozen=True)
class ConditionPay:
    study_slug: str
    shots: int
    n_workers: int  # the workers paid
    median_effective_hourly: Decimal | None
    below_rate: bool
    total_amount: Decimal
    total_bonus: Decimal | None  # None while the study's posted reward is not set


def platform_paid(participations: Iterable[Participation]) -> list[Participation]:
    """The participations the platform paid: approved or screened out. That is a completed worker, one
    excluded by a rule (or closed out), and one who failed the attention checks once a person approved them,
    as ``services.prolific.outcomes.decide`` has it; a review recorded as done has the last word (a rejected
    submission is not paid). Never a worker who returned, timed out, declined or is still at work."""
    participations = list(participations)
    reviewed = dict(
        ProlificAction.objects.filter(
            participation__in=participations, kind=ProlificAction.Kind.REVIEW, status=ProlificAction.Status.DONE
        ).values_list("participation_id", "action")
    )
    paid = []
    for p in participations:
        if p.state in ACTIVE:
            continue  # at work again (readmitted after a review): counted when this work ends
        action = reviewed.get(p.pk)
        if action == REJECT:
            continue
        if action in PAID or decide(p).action in PAID:
            paid.append(p)
    return paid


def condition_pay(*, study: Study) -> list[ConditionPay]:
    """Each condition's median effective hourly pay and totals over the workers the platform paid."""
    participations = platform_paid(study.participations.select_related("condition", "study"))
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
