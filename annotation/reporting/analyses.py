"""Analyses beyond the main table, per study.

- Training overlaps, as in the paper's appendix: each pair of few-shot groups,
  both groups' S1 on the training examples they share, and the larger group's
  S1 on the examples only its set has (mean ± std over completed annotators).
- Majority-vote S1 per condition next to the mean of the annotators' S1.
- Inter-annotator agreement per condition: Fleiss' kappa for labels, mean
  pairwise S1 for spans, and Krippendorff's alpha for both (alpha.py), also
  per task with every condition pooled.
- Per-item difficulty, confidence against correctness (per level, and
  Spearman's rho with a bootstrap interval), time per item.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from itertools import combinations
from typing import Any

from django.db.models import Avg, Count, F, FloatField, Q, QuerySet, Sum
from django.db.models.functions import Cast

from annotation.models import Condition, Participation, Response, Study
from annotation.reporting.agreement import (
    Coded,
    as_answer,
    fleiss_kappa,
    majority_label,
    majority_spans,
    pairwise_s1,
)
from annotation.reporting.alpha import alpha_of, ratings_by_condition, task_alpha
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.correlation import CORRELATION_METHOD
from annotation.reporting.figure_cache import spearman_with_interval
from annotation.reporting.options import MetricOptions
from annotation.reporting.pay import condition_pay
from annotation.reporting.scores import policy_score
from annotation.services.session import samples
from annotation.services.verdicts import training_s1
from tasks_app.models import Example
from tasks_app.scoring import SKIP_ANSWER, mean, s1, std

Status = Response.Status
Phase = Response.Phase
COMPLETED = Participation.State.COMPLETED


def _pct(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(value * 100, 2)


def _spread(values: list[float], ddof: int) -> dict[str, Any]:
    return {"mean": _pct(mean(values)), "std": _pct(std(values, ddof=ddof)), "n": len(values)}


def _completed_ids(condition: Condition) -> list[int]:
    return list(condition.participations.filter(state=COMPLETED).values_list("pk", flat=True))


def _training_scores(participation_ids: list[int], example_ids: set[int]) -> list[float]:
    """The annotators' training S1 on these examples; those without one are left out, not counted as 0."""
    scores = training_s1.by_participation(participation_ids, example_ids=example_ids)
    return [value for value in scores.values() if value is not None]


def training_overlap_values(*, study: Study) -> list[dict[str, Any]]:
    """Per pair of few-shot groups (smaller, larger): each completed annotator's S1 (0..1) on the training
    examples both sets hold, for both groups, and the larger group's on the examples only its set holds."""
    conditions = [c for c in study.conditions.order_by("shots") if c.training_set_id]
    sets = {c.pk: set(samples.training_ids(c)) for c in conditions}
    completed = {c.pk: _completed_ids(c) for c in conditions}
    result = []
    for small, large in combinations(conditions, 2):
        shared = sets[small.pk] & sets[large.pk]
        extra = sets[large.pk] - sets[small.pk]
        base = {"pair": f"{small.shots} vs {large.shots}", "small_shots": small.shots, "large_shots": large.shots}
        for group in (small, large):
            result.append(
                {
                    **base,
                    "subset": "shared",
                    "examples": len(shared),
                    "group_shots": group.shots,
                    "values": _training_scores(completed[group.pk], shared),
                }
            )
        if extra:
            result.append(
                {
                    **base,
                    "subset": f"only in the {large.shots}-shot set",
                    "examples": len(extra),
                    "group_shots": large.shots,
                    "values": _training_scores(completed[large.pk], extra),
                }
            )
    return result


def training_overlaps(*, study: Study, options: MetricOptions) -> list[dict[str, Any]]:
    """The appendix analysis for one study, each row as mean ± std (0-100) over the group's annotators."""
    return [
        {
            "pair": row["pair"],
            "subset": row["subset"],
            "examples": row["examples"],
            "group_shots": row["group_shots"],
            **_spread(row["values"], options.ddof),
        }
        for row in training_overlap_values(study=study)
    ]


def _test_answers(
    condition: Condition, options: MetricOptions
) -> tuple[dict[int, dict[int, list[str]]], dict[int, list[str]], dict[int, dict[int, float]]]:
    """The completed annotators' test answers as {example id: {participation id: answer strings}}, the
    gold per example, and their item scores as {participation id: {example id: S1}}.

    A skip stands for ``SKIP_ANSWER`` among the answers. The scores are the stored ones under the
    options' skip policy (``scores.policy_score``); a skip the policy leaves out is left out altogether.
    """
    answers: dict[int, dict[int, list[str]]] = defaultdict(dict)
    scores: dict[int, dict[int, float]] = defaultdict(dict)
    answered = Response.objects.filter(
        participation__condition=condition, participation__state=COMPLETED, phase=Phase.TEST
    ).exclude(status=Status.PENDING)
    rows = answered.annotate(s=policy_score(options)).values_list(
        "participation_id", "example_id", "status", "answer", "s"
    )
    items: set[int] = set()
    for pid, example_id, status, answer, score in rows.iterator(chunk_size=2000):
        items.add(example_id)
        if score is None:  # a skip the policy leaves out
            continue
        answers[example_id][pid] = list(SKIP_ANSWER) if status == Status.SKIPPED else answer or []
        scores[pid][example_id] = score
    return answers, gold_of(items, answered), scores


def gold_of(items: set[int], answered: QuerySet[Response]) -> dict[int, list[str]]:
    """The gold of each item, read once (not once per answer) through ``answered``'s items as a subquery;
    an item it no longer reaches (its answers erased since they were read) by its id."""
    gold = dict(Example.objects.filter(pk__in=answered.values("example_id")).values_list("pk", "gold_answers"))
    if missing := items - gold.keys():
        gold.update(Example.objects.filter(pk__in=missing).values_list("pk", "gold_answers"))
    return {pk: gold[pk] for pk in items}


def majority_and_agreement(
    *, study: Study, options: MetricOptions, ratings: Mapping[int, Coded] | None = None
) -> list[dict[str, Any]]:
    """Per condition: the majority vote's S1, agreement and alpha (``ratings``: the study's ``study_ratings``,
    when the caller has read them)."""
    classification = study.task.is_classification
    conditions = list(study.conditions.order_by("shots"))
    if ratings is None:
        ratings = ratings_by_condition(conditions, classification)  # alpha's units, every condition in one pass
    result = []
    for condition in conditions:
        answers, gold, scores = _test_answers(condition, options)
        annotators = _completed_ids(condition)
        per_annotator = [{eid: by_p[pid] for eid, by_p in answers.items() if pid in by_p} for pid in annotators]
        individual = [mean(scores[pid].values()) for pid in annotators if scores.get(pid)]
        votes = []
        for eid, by_p in answers.items():
            sets = [as_answer(a) for a in by_p.values()]
            chosen = majority_label(sets) if classification else majority_spans(sets)
            votes.append(s1(chosen, gold[eid]))
        row = {
            "shots": condition.shots,
            "annotators": len(annotators),
            "items": len(answers),
            "annotator_mean": _spread(individual, options.ddof),
            "majority_vote_s1": _pct(mean(votes)),
        }
        if classification:
            full = [
                [next(iter(a)) for a in map(as_answer, by_p.values())]
                for by_p in answers.values()
                if len(by_p) == len(annotators) and all(len(as_answer(a)) == 1 for a in by_p.values())
            ]
            kappa = fleiss_kappa(full) if len(annotators) >= 2 else math.nan
            row["agreement"] = {
                "measure": "fleiss_kappa",
                "value": None if math.isnan(kappa) else round(kappa, 4),
                "items": len(full),
            }
        else:
            value = pairwise_s1(per_annotator)
            row["agreement"] = {"measure": "pairwise_s1", "value": _pct(value), "items": len(answers)}
        row["alpha"] = alpha_of(ratings.get(condition.pk), classification=classification)
        result.append(row)
    return result


def _completed_test(study: Study) -> QuerySet[Response]:
    return Response.objects.filter(
        participation__study=study, participation__state=COMPLETED, phase=Phase.TEST
    ).exclude(status=Status.PENDING)


def item_difficulty(*, study: Study, options: MetricOptions | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """The test items with the lowest mean S1 (skips per the options) over the study's completed annotators."""
    options = options or MetricOptions()
    rows = list(
        _completed_test(study)
        .values("example_id", "example__source_id")
        .annotate(
            mean_s1=Avg(policy_score(options)),
            annotators=Count("id"),
            wrong=Count("id", filter=Q(score=0)),
            skips=Count("id", filter=Q(status=Status.SKIPPED)),
        )
        .order_by("mean_s1", "-wrong", "example_id")[:limit]
    )
    examples = {
        e.pk: e
        for e in Example.objects.filter(pk__in=[r["example_id"] for r in rows]).only(
            "id", "context", "question", "gold_answers"
        )
    }
    return [
        {
            "item": r["example__source_id"],
            "example_id": r["example_id"],
            "mean_s1": _pct(r["mean_s1"]),
            "annotators": r["annotators"],
            "wrong": r["wrong"],
            "skips": r["skips"],
            "context": _snippet(examples[r["example_id"]].context),
            "question": examples[r["example_id"]].question,
            "gold": examples[r["example_id"]].gold_answers,
        }
        for r in rows
    ]


def _snippet(context: str | list[str], length: int = 120) -> str:
    """The start of a context (a sentence pair joined with " / "), for listing an item."""
    text = " / ".join(context) if isinstance(context, list) else str(context)
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"


def confidence_vs_correctness(
    *, study: Study, options: MetricOptions | None = None, intervals: IntervalOptions | None = None
) -> dict[str, Any]:
    base = (
        _completed_test(study)
        .filter(confidence__isnull=False)
        .annotate(s=policy_score(options or MetricOptions()))
        .filter(s__isnull=False)
    )
    pairs = list(base.values_list("confidence", "s", "participation_id", "example_id"))
    rank = spearman_with_interval(
        [float(c or 0) for c, *_ in pairs],
        [float(s or 0) for _, s, *_ in pairs],
        intervals,
        annotators=[p for *_, p, _ in pairs],
        items=[e for *_, e in pairs],
    )
    levels = (
        base.values("confidence")
        .annotate(n=Count("id"), mean_s1=Avg("s"), exact=Count("id", filter=Q(s=1)))
        .order_by("confidence")
    )
    totals = base.aggregate(
        n=Count("id"),
        sx=Sum(Cast("confidence", FloatField())),
        sy=Sum("s"),
        sxx=Sum(Cast(F("confidence") * F("confidence"), FloatField())),
        syy=Sum(F("s") * F("s")),
        sxy=Sum(Cast("confidence", FloatField()) * F("s")),
    )
    n = totals["n"] or 0
    correlation = None
    if n >= 2:
        cov = totals["sxy"] - totals["sx"] * totals["sy"] / n
        vx = totals["sxx"] - totals["sx"] ** 2 / n
        vy = totals["syy"] - totals["sy"] ** 2 / n
        if vx > 0 and vy > 0:
            correlation = round(cov / math.sqrt(vx * vy), 4)
    return {
        "levels": [
            {
                "confidence": r["confidence"],
                "n": r["n"],
                "mean_s1": _pct(r["mean_s1"]),
                "exact_share": round(r["exact"] / r["n"], 4),
            }
            for r in levels
        ],
        "pearson_confidence_s1": correlation,
        "spearman": {
            "rho": None if math.isnan(rank.rho) else round(rank.rho, 4),
            "ci_low": round(rank.interval.low, 4) if rank.interval else None,
            "ci_high": round(rank.interval.high, 4) if rank.interval else None,
            "n": rank.n,
            "method": CORRELATION_METHOD,
            **{
                k: v
                for k, v in (intervals or IntervalOptions()).as_dict().items()
                if k in ("seed", "resamples", "level")
            },
        },
    }


def time_per_item(*, study: Study) -> list[dict[str, Any]]:
    rows = (
        Response.objects.filter(participation__study=study, participation__state=COMPLETED)
        .exclude(status=Status.PENDING)
        .values("participation__condition__shots", "phase")
        .annotate(items=Count("id"), mean_ms=Avg("active_ms"), total_ms=Sum("active_ms"))
        .order_by("participation__condition__shots", "phase")
    )
    return [
        {
            "shots": r["participation__condition__shots"],
            "phase": r["phase"],
            "items": r["items"],
            "mean_seconds": round((r["mean_ms"] or 0) / 1000, 2),
            "total_minutes": round((r["total_ms"] or 0) / 60000, 2),
        }
        for r in rows
    ]


def pay_fairness(*, study: Study) -> list[dict[str, Any]]:
    """Per condition: workers paid, median effective hourly pay, whether it is below the rate, totals."""
    return [
        {
            "shots": c.shots,
            "workers": c.n_workers,
            "hourly_rate": str(study.hourly_rate),
            "currency": study.currency,
            "median_effective_hourly": None if c.median_effective_hourly is None else str(c.median_effective_hourly),
            "below_rate": c.below_rate,
            "total_amount": str(c.total_amount),
            "total_bonus": None if c.total_bonus is None else str(c.total_bonus),
        }
        for c in condition_pay(study=study)
    ]


def study_analyses(*, study: Study, options: MetricOptions) -> dict[str, Any]:
    return {
        "study": study.slug,
        "task": study.task.slug,
        "training_overlaps": training_overlaps(study=study, options=options),
        "conditions": majority_and_agreement(study=study, options=options),
        "task_agreement": task_alpha(study),
        "hardest_items": item_difficulty(study=study, options=options),
        "confidence": confidence_vs_correctness(study=study, options=options),
        "time_per_item": time_per_item(study=study),
        "pay_fairness": pay_fairness(study=study),
    }
