"""Sample-size planning: before paying anyone, how wide each cell's 95% interval will be with 3, 5 or 10
workers per condition, what the study will cost at its rate, and how long a worker takes (docs/studies.md).

The method is a bootstrap over *simulated* workers. For each condition and each number of workers ``n``:

1. draw ``n`` worker accuracies from a normal distribution around the condition's accuracy (the pilot's
   cell, or the accuracy the researcher gives) with the pilot workers' spread, clipped to [0, 1];
2. draw each worker's answer to each test item as right (S1 = 1) or wrong (S1 = 0) with that accuracy;
3. compute the cell's interval exactly as the tables do (``bootstrap.cell_interval``: the two-way
   percentile bootstrap, annotators and items resampled), and its width;
4. repeat for many simulated studies and report the median width.

The pilot is the study's completed workers (``scores.annotator_rows``: previews, attention rows, excluded
and unfinished workers are not in it), their test S1 under the tables' default skip policy. Every figure
depends only on the study, the inputs and the seed.

Power for the question people ask (is the human cell above or below a model's score?): a design detects a
gap d at 80 % power (two-sided, 5 %) when d >= (z(0.975) + z(0.80)) x SE, the SE being the interval's half
width over z(0.975) (``DETECT_PER_WIDTH``). The widths are simulated with the workers centred on the
model's score (the hypothesis the gap is tested against; each cell's own accuracy when no model score is
given). The model's score is taken as fixed: it is computed on the same items. The workers needed for a
gap the researcher names come from the fit width² = a/n + b over the simulated sizes (the workers' share
of the variance shrinks with n, the items' does not), then checked by simulating that n and its
neighbours upward until the gap holds; a gap below the items' floor (b) needs more test items, not workers.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any

import numpy as np

from annotation.models import Study
from annotation.reporting.bootstrap import IntervalOptions, cell_interval
from annotation.reporting.figure_cache import digest, remembered
from annotation.reporting.options import ReportError
from annotation.reporting.scores import annotator_rows
from annotation.services.money.pay import pay_line, stored_base
from annotation.services.session import presentation
from annotation.services.verdicts import attention
from tasks_app.models import ExampleSetItem

DEFAULT_WORKERS = (3, 5, 10)
DEFAULT_SEED = 20211206
DEFAULT_SIMULATIONS = 100  # simulated studies per condition and number of workers (the median settles by then)
DEFAULT_RESAMPLES = 500  # bootstrap resamples per simulated study
DEFAULT_SPREAD = 0.10  # between-worker SD of accuracy when the pilot cannot tell (fewer than two workers)
LEVEL = 0.95
MAX_WORKERS = 50  # bounds the time one plan may take
Z_LEVEL = 1.959964  # two-sided 95 %
Z_POWER = 0.841621  # 80 % power
POWER = 0.80
MODEL_STREAM = 1_000_000  # the random stream of the simulations against a given model (a cell's is its shots)
# The smallest detectable gap as a share of the interval's width: (z_level + z_power) * width / (2 * z_level).
DETECT_PER_WIDTH = (Z_LEVEL + Z_POWER) / (2 * Z_LEVEL)
FORMATS = ("markdown", "json")


class PlanningError(ReportError):
    """Bad input to a plan (no pilot and no accuracy, an accuracy outside 0..1, ...): shown as is."""

    code = "planning_invalid"


@dataclass(frozen=True)
class CellPlan:
    """One condition: the accuracy assumed, the pilot behind it, the median interval width per number of workers."""

    shots: int
    accuracy: float  # 0..1, the centre the simulated workers are drawn around
    pilot_workers: int  # completed pilot workers of this condition (0 when the accuracy is given or borrowed)
    widths: dict[int, float]  # workers per condition -> median 95% interval width, S1 points (0-100)
    model_score: float  # 0..1, the score the gap is measured from (the given model's, else the cell's accuracy)
    detectable_gap: dict[int, float]  # workers per condition -> smallest gap detectable at 80% power, S1 points
    workers_for_gap: int | None = None  # workers needed to detect the named gap (None: none asked, or not reachable)
    gap_floor: float | None = None  # S1 points: no number of workers detects a smaller gap with these items

    def as_dict(self) -> dict[str, Any]:
        return {
            "shots": self.shots,
            "accuracy": round(self.accuracy, 4),
            "pilot_workers": self.pilot_workers,
            "median_width": {str(n): w for n, w in self.widths.items()},
            "model_score": round(self.model_score, 4),
            "detectable_gap": {str(n): g for n, g in self.detectable_gap.items()},
            "workers_for_gap": self.workers_for_gap,
            "gap_floor": self.gap_floor,
        }


@dataclass(frozen=True)
class ConditionTime:
    """How long one worker of a condition takes, and what they are paid for it under the study's pay rule."""

    shots: int
    training_items: int
    test_items: int
    attention_checks: int
    minutes: float
    pay: Decimal  # per worker

    @property
    def items(self) -> int:
        return self.training_items + self.test_items + self.attention_checks

    def as_dict(self) -> dict[str, Any]:
        return {
            "shots": self.shots,
            "training_items": self.training_items,
            "test_items": self.test_items,
            "attention_checks": self.attention_checks,
            "minutes": self.minutes,
            "pay_per_worker": str(self.pay),
        }


@dataclass(frozen=True)
class StudyPlan:
    study: str
    task: str
    workers: tuple[int, ...]
    source: str  # "pilot" or "given"
    pilot_workers: int
    spread: float
    spread_source: str
    cells: list[CellPlan]
    times: list[ConditionTime]
    seconds_per_item: float
    seconds_from_study: bool
    currency: str
    hourly_rate: Decimal
    base_reward: Decimal
    costs: dict[int, Decimal]  # workers per condition -> the whole study's pay
    seed: int
    simulations: int
    resamples: int
    model_score: float | None = None  # 0..1 as given; None: each cell's own accuracy
    gap: float | None = None  # 0..1: the gap the researcher wants to detect
    assumptions: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "task": self.task,
            "workers_per_condition": list(self.workers),
            "level": LEVEL,
            "accuracy_source": self.source,
            "pilot_workers": self.pilot_workers,
            "spread": round(self.spread, 4),
            "spread_source": self.spread_source,
            "cells": [c.as_dict() for c in self.cells],
            "power": {
                "level": POWER,
                "test": "two-sided, 5 %, human cell against the model's score taken as fixed",
                "model_score": self.model_score,
                "gap": self.gap,
            },
            "time": {
                "seconds_per_item": round(self.seconds_per_item, 1),
                "seconds_from_study": self.seconds_from_study,
                "conditions": [t.as_dict() for t in self.times],
            },
            "cost": {
                "currency": self.currency,
                "hourly_rate": str(self.hourly_rate),
                "base_reward": str(self.base_reward),
                "platform_fees": "not included (the study records none)",
                "total": {str(n): str(c) for n, c in self.costs.items()},
            },
            "method": {
                "seed": self.seed,
                "simulations": self.simulations,
                "resamples": self.resamples,
                "interval": "two-way percentile bootstrap (annotators and test items resampled), as in the tables",
            },
            "assumptions": self.assumptions,
        }

    def markdown(self) -> str:
        cols = " | ".join(f"{n} workers" for n in self.workers)
        lines = [
            f"## Sample-size plan for {self.study} ({self.task})",
            "",
            f"Median width of each cell's {LEVEL:.0%} interval, in S1 points (0-100), by workers per condition:",
            "",
            f"| shots | accuracy | pilot workers | {cols} |",
            "|---|---:|---:|" + "---:|" * len(self.workers),
        ]
        for c in self.cells:
            widths = " | ".join(f"{c.widths[n]:.1f}" for n in self.workers)
            lines.append(f"| {c.shots} | {100 * c.accuracy:.1f} | {c.pilot_workers} | {widths} |")
        against = (
            f"a model scoring {100 * self.model_score:.1f}"
            if self.model_score is not None
            else "a model scoring what the cell's humans score"
        )
        lines += [
            "",
            f"Smallest human-model gap detectable at {POWER:.0%} power (two-sided, 5 %), against {against}, "
            "in S1 points:",
            "",
            f"| shots | model score | {cols} |" + (" workers for the gap |" if self.gap is not None else ""),
            "|---|---:|" + "---:|" * len(self.workers) + ("---:|" if self.gap is not None else ""),
        ]
        for c in self.cells:
            gaps = " | ".join(f"{c.detectable_gap[n]:.1f}" for n in self.workers)
            row = f"| {c.shots} | {100 * c.model_score:.1f} | {gaps} |"
            if self.gap is not None:
                if c.workers_for_gap is not None:
                    row += f" {c.workers_for_gap} |"
                elif c.gap_floor is not None:
                    row += f" none: below {c.gap_floor:.1f} with these items |"
                else:
                    row += f" more than {MAX_WORKERS} |"
            lines.append(row)
        if self.gap is not None:
            lines += ["", f"Gap to detect: {100 * self.gap:.1f} S1 points."]
        lines += [
            "",
            f"Time and pay per worker ({self.seconds_per_item:.0f} s per item, "
            + ("the study's median" if self.seconds_from_study else "the task's default estimate")
            + "):",
            "",
            "| shots | items (training + test + checks) | minutes | pay |",
            "|---|---|---:|---:|",
        ]
        for t in self.times:
            items = f"{t.items} ({t.training_items} + {t.test_items} + {t.attention_checks})"
            lines.append(f"| {t.shots} | {items} | {t.minutes:.1f} | {t.pay} {self.currency} |")
        costs = "; ".join(f"{n} workers: {c} {self.currency}" for n, c in self.costs.items())
        lines += [
            "",
            f"Cost of the whole study at {self.hourly_rate} {self.currency}/h, without platform fees: {costs}.",
            "",
            "Assumptions:",
            "",
            *(f"- {a}" for a in self.assumptions),
        ]
        return "\n".join(lines) + "\n"


def _check_share(name: str, value: float | None, example: str) -> None:
    if value is not None and not (isinstance(value, int | float) and 0 <= value <= 1):
        raise PlanningError(f"the {name} must be a share between 0 and 1 (e.g. {example}), not {value!r}")


def _check_inputs(accuracy: float | None, workers: Sequence[int]) -> tuple[int, ...]:
    _check_share("accuracy", accuracy, "0.85")
    counts = tuple(sorted(set(workers)))
    if not counts:
        raise PlanningError("give at least one number of workers per condition, e.g. 3,5,10")
    if any(not isinstance(n, int) or not 1 <= n <= MAX_WORKERS for n in counts):
        raise PlanningError(f"each number of workers per condition must be between 1 and {MAX_WORKERS}: {workers!r}")
    return counts


def _pilot(study: Study) -> dict[int, list[float]]:
    """The pilot's completed workers' test S1 (0..1), by shots."""
    by_shots: dict[int, list[float]] = {}
    for row in annotator_rows(studies=[study]):
        if row.is_completed and row.test_s1 is not None:
            by_shots.setdefault(row.shots, []).append(row.test_s1)
    return by_shots


def pooled_spread(groups: Iterable[Sequence[float]]) -> float | None:
    """The between-worker SD around each condition's own mean, pooled over conditions (None with no
    degree of freedom: fewer than two workers in every condition)."""
    squares, dof = 0.0, 0
    for values in groups:
        if len(values) >= 2:
            m = statistics.fmean(values)
            squares += sum((v - m) ** 2 for v in values)
            dof += len(values) - 1
    return math.sqrt(squares / dof) if dof else None


def median_width(
    *,
    accuracy: float,
    spread: float,
    workers: int,
    items: int,
    rng: np.random.Generator,
    simulations: int,
    resamples: int,
) -> float:
    """The median width (0..1) of the cell's interval over ``simulations`` simulated studies."""
    widths = []
    for _ in range(simulations):
        skill = np.clip(rng.normal(accuracy, spread, size=workers), 0.0, 1.0)
        right = rng.random((workers, items)) < skill[:, None]
        scores = {w: {i: float(right[w, i]) for i in range(items)} for w in range(workers)}
        options = IntervalOptions(resamples=resamples, seed=int(rng.integers(2**31)), level=LEVEL)
        interval = cell_interval(scores, options)
        assert interval is not None  # every simulated worker answers every item
        widths.append(interval.high - interval.low)
    return float(np.median(widths))


def fit_width(widths: dict[int, float]) -> tuple[float, float] | None:
    """(a, b) of width² = a/n + b by least squares over the sizes simulated, both at least 0; None with one size."""
    if len(widths) < 2:
        return None
    xs = [1 / n for n in widths]
    ys = [w * w for w in widths.values()]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    a = max(0.0, sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx)
    return a, max(0.0, my - a * mx)


def _times(study: Study, seconds: float, test_items: int) -> list[ConditionTime]:
    checks = study.attention_checks.count() if test_items else 0
    result = []
    for condition in study.conditions.order_by("shots"):
        training = 0
        if condition.training_set_id:
            training = ExampleSetItem.objects.filter(example_set_id=condition.training_set_id).count()
        total_seconds = (training + test_items + checks) * seconds
        base = stored_base(study)
        line = pay_line(
            rate=study.hourly_rate, base=base.amount if base else None, participation_id=0, seconds=total_seconds
        )
        pay = line.amount
        result.append(ConditionTime(condition.shots, training, test_items, checks, round(total_seconds / 60, 1), pay))
    return result


def plan_for_study(
    study: Study,
    *,
    accuracy: float | None = None,
    workers: Sequence[int] = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    simulations: int = DEFAULT_SIMULATIONS,
    resamples: int = DEFAULT_RESAMPLES,
    model_score: float | None = None,
    gap: float | None = None,
) -> StudyPlan:
    """The plan of ``study``: from its pilot's completed workers, or from ``accuracy`` (0..1) when given; the
    detectable gap against ``model_score`` (0..1; each cell's accuracy when None), and the workers needed
    to detect ``gap`` (0..1) when given."""
    counts = _check_inputs(accuracy, workers)
    _check_share("model score", model_score, "0.80")
    _check_share("gap", gap, "0.05")
    if gap is not None and gap <= 0:
        raise PlanningError(f"the gap to detect must be above 0 (e.g. 0.05 for 5 S1 points), not {gap!r}")
    if simulations < 1:
        raise PlanningError(f"simulations must be at least 1, not {simulations!r}")
    IntervalOptions(resamples=resamples, seed=seed, level=LEVEL)  # refuses bad resamples or seed before any work
    pilot = _pilot(study)
    pilot_n = sum(len(v) for v in pilot.values())
    if accuracy is None and not pilot_n:
        raise PlanningError(
            f"study {study.slug!r} has no completed pilot worker yet (previews, excluded and unfinished workers "
            f"do not count): give the accuracy to plan with, e.g. manage.py plan_study {study.slug} --accuracy 0.85"
        )
    test_items = attention.definitions.test_set_size(study)
    if not test_items:
        raise PlanningError(f"the task of study {study.slug!r} has no test set: nothing to plan")
    shots = list(study.conditions.order_by("shots").values_list("shots", flat=True))
    if not shots:
        raise PlanningError(f"study {study.slug!r} has no condition: nothing to plan")

    spread = pooled_spread(pilot.values())
    spread_source = "the pilot's workers: their SD around their condition's mean, pooled over conditions"
    if spread is None:
        spread, spread_source = DEFAULT_SPREAD, "a default: no condition of the pilot has two completed workers"
    everyone = statistics.fmean(v for values in pilot.values() for v in values) if pilot_n else math.nan
    simulated: dict[tuple[float, int, int], float] = {}

    def width(centre: float, n: int, *, stream: int) -> float:
        """The median width (S1 points) of ``n`` workers around ``centre``; one random stream per cell and size."""
        key = (centre, n, stream)
        if key not in simulated:
            # A pure function of these inputs: kept between requests (the dashboard's pilot card) under their digest.
            inputs = digest("plan-width", centre, spread, n, test_items, seed, stream, simulations, resamples)
            simulated[key] = 100 * remembered(
                "plan-width",
                inputs,
                lambda: median_width(
                    accuracy=centre,
                    spread=spread,
                    workers=n,
                    items=test_items,
                    rng=np.random.default_rng([seed, stream, n]),
                    simulations=simulations,
                    resamples=resamples,
                ),
            )
        return simulated[key]

    cells = []
    for n_shots in shots:
        own = pilot.get(n_shots, [])
        centre = accuracy if accuracy is not None else (statistics.fmean(own) if own else everyone)
        widths = {n: round(width(centre, n, stream=n_shots), 1) for n in counts}
        # Against a given model, one set of simulations serves every cell: the same items and workers.
        null, stream = (model_score, MODEL_STREAM) if model_score is not None else (centre, n_shots)
        at_null = {n: width(null, n, stream=stream) for n in counts}
        detectable = {n: round(DETECT_PER_WIDTH * w, 1) for n, w in at_null.items()}
        needed, floor = _workers_for_gap(gap, at_null, partial(width, null, stream=stream)) if gap else (None, None)
        cells.append(
            CellPlan(
                n_shots,
                centre,
                len(own) if accuracy is None else 0,
                widths,
                model_score=null,
                detectable_gap=detectable,
                workers_for_gap=needed,
                gap_floor=floor,
            )
        )

    seconds, from_study = presentation.seconds_per_item(study)
    times = _times(study, seconds, test_items)
    costs = {n: sum((n * t.pay for t in times), Decimal("0.00")) for n in counts}
    base = Decimal(study.base_reward or 0)
    assumptions = [
        (
            f"Accuracy: {accuracy:.2f} as given, for every condition."
            if accuracy is not None
            else f"Accuracy: each condition's pilot cell, the mean test S1 of its completed workers ({pilot_n} in "
            "all; a skipped item scores 0); a condition without pilot workers takes the mean of all of them."
        ),
        f"Workers differ: each simulated worker's accuracy is drawn from a normal distribution around the "
        f"condition's accuracy with SD {spread:.3f} ({spread_source}), clipped to [0, 1].",
        "Each answer is right (S1 = 1) or wrong (S1 = 0) with the worker's accuracy, independently of the other "
        "items: exact for classification; for span tasks, whose S1 also takes values in between, it overstates "
        "the spread of item scores, so the widths err on the wide side. No worker skips, and items are taken as "
        "equally hard: where they differ in difficulty (the pilot's are not modelled), the real intervals are "
        "wider, the more so the more workers there are.",
        f"Interval: the tables' {LEVEL:.0%} two-way percentile bootstrap (annotators and the {test_items} test "
        f"items resampled), {resamples} resamples, on each of {simulations} simulated studies; the median width "
        f"is shown (seed {seed}).",
        f"Time: {seconds:.0f} s per item ("
        + ("the study's median active time per answered item" if from_study else "the task's default estimate")
        + "), over the training items, the test items and the attention checks; consent, survey and reading "
        "the instructions are not counted.",
        f"Power: the smallest gap detectable at {POWER:.0%} power (two-sided, 5 %) is "
        f"(z 0.975 + z 0.80) / (2 z 0.975) = {DETECT_PER_WIDTH:.3f} times the interval's width simulated with the "
        "workers centred on the model's score ("
        + (
            f"{model_score:.2f} as given"
            if model_score is not None
            else "each cell's own accuracy: no model score given"
        )
        + "), the model's score taken as fixed (it is computed on the same items)."
        + (
            f" Workers for a gap of {100 * gap:.1f} points: from the fit width² = a/n + b over the sizes above, "
            "checked by simulating that size (and the next ones until it holds); a gap under the items' floor "
            "needs more test items."
            if gap is not None
            else ""
        ),
        f"Pay: each worker is paid for that time by the study's pay rule (rate {study.hourly_rate} "
        f"{study.currency}/h"
        + (f", posted reward {base} topped up to the rate" if base > 0 else ", no posted reward")
        + "); the cost is without platform fees (the study records none), without replacements of workers "
        "who are excluded or leave, and without the pilot already paid.",
    ]
    return StudyPlan(
        study=study.slug,
        task=study.task.name,
        workers=counts,
        source="given" if accuracy is not None else "pilot",
        pilot_workers=pilot_n,
        spread=spread,
        spread_source=spread_source,
        cells=cells,
        times=times,
        seconds_per_item=seconds,
        seconds_from_study=from_study,
        currency=study.currency,
        hourly_rate=Decimal(study.hourly_rate),
        base_reward=base,
        costs=costs,
        seed=seed,
        simulations=simulations,
        resamples=resamples,
        model_score=model_score,
        gap=gap,
        assumptions=assumptions,
    )


def _workers_for_gap(
    gap: float, widths: dict[int, float], simulate: Callable[[int], float]
) -> tuple[int | None, float | None]:
    """(workers needed to detect ``gap`` (0..1), the items' floor in S1 points when no number of workers can).

    ``widths`` are the simulated widths (S1 points) by size; ``simulate(n)`` gives another size's."""
    target = 100 * gap / DETECT_PER_WIDTH  # the width the gap needs
    fit = fit_width(widths)
    if fit is None:  # one size only: scale by 1/sqrt(n), the items' share unknown
        [(n0, w0)] = widths.items()
        guess = math.ceil(n0 * (w0 / target) ** 2)
    else:
        a, b = fit
        if target * target <= b:
            return None, round(DETECT_PER_WIDTH * math.sqrt(b), 1)
        guess = math.ceil(a / (target * target - b))
    for n in range(max(1, guess), MAX_WORKERS + 1):
        if simulate(n) <= target:
            return n, None
        if n >= guess + 5:  # the fit was far off: say the bound rather than simulate on
            break
    return None, None


def render(plan: StudyPlan, fmt: str) -> str:
    if fmt not in FORMATS:
        raise PlanningError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    return plan.markdown() if fmt == "markdown" else json.dumps(plan.as_dict(), indent=2) + "\n"


def rehearsal_section(study_slug: str) -> dict[str, Any]:
    """What the rehearsal's report shows under "Sample-size planning": the plan from the real study's pilot
    (its Markdown under ``markdown``), or why there is none (``error``: e.g. no pilot yet)."""
    study = Study.objects.select_related("task").filter(slug=study_slug).first()
    if study is None:
        return {"error": f"no study {study_slug!r}"}
    try:
        plan = plan_for_study(study)
    except PlanningError as exc:
        return {"error": str(exc)}
    return {**plan.as_dict(), "markdown": plan.markdown()}


# The dashboard's pilot card plans on the page's request: fewer simulated studies than plan_study's default,
# said on the page with the command that reproduces it (the same seed and counts give the same figures).
PILOT_SIMULATIONS = 40
PILOT_RESAMPLES = 200


def pilot_section(study: Study) -> dict[str, Any]:
    """The dashboard's pilot card while ``study`` runs as a pilot: each condition's pilot results (completed
    workers, their mean test S1) and the plan from them for the design's workers per condition and the usual
    sizes, or why there is no plan yet (``error``: e.g. no completed pilot worker)."""
    workers = tuple(sorted({*DEFAULT_WORKERS, min(study.workers_per_condition, MAX_WORKERS)}))
    sizes = ",".join(str(n) for n in workers)
    section: dict[str, Any] = {
        "share": study.pilot_workers_per_condition,
        "design": study.workers_per_condition,
        "command": f"manage.py plan_study {study.slug} --workers {sizes} --simulations {PILOT_SIMULATIONS} "
        f"--resamples {PILOT_RESAMPLES}",
    }
    try:
        plan = plan_for_study(study, workers=workers, simulations=PILOT_SIMULATIONS, resamples=PILOT_RESAMPLES)
    except PlanningError as exc:
        return {**section, "error": str(exc)}
    rows = [
        {
            "shots": c.shots,
            "pilot_workers": c.pilot_workers,
            "accuracy": round(100 * c.accuracy, 1),
            "widths": [c.widths[n] for n in plan.workers],
            "gaps": [c.detectable_gap[n] for n in plan.workers],
        }
        for c in plan.cells
    ]
    return {
        **section,
        "plan": plan.as_dict(),
        "workers": list(plan.workers),
        "rows": rows,
        "costs": [str(plan.costs[n]) for n in plan.workers],
        "currency": plan.currency,
        "times": [t.as_dict() for t in plan.times],
        "assumptions": plan.assumptions,
    }
