"""A study's analysis plan: frozen, hashed, when the study opens for its full launch; compared with the
analysis a report runs.

The plan is what the reported numbers depend on and the researcher fixes before the data comes in: the
planned sample (workers per condition, each condition's training and test items, by their SHA-256), the
exclusion rules with their versions (training filter, attention checks, integrity rule, comprehension check,
abandonment), the metric and its options, the intervals and the aggregation. It is written as canonical
JSON (``hashing.canonical_json``) and its SHA-256 is stored with it (``AnalysisPlan``, which the database
never lets change).

It is frozen by ``on_status_change``, a listener of the one status-change path
(``services.studies.studies.change_status``, registered in ``AnnotationConfig.ready``): the first time the
study becomes open. ``plan_check`` rebuilds the plan from the study as it is now and the options of the
report at hand and names every part that differs from the frozen one: a rule edited after the launch, a
metric option other than the planned one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import AnalysisPlan, FilterDecision, Study
from annotation.reporting.hashing import canonical_json, example_set_sha256, text_sha256
from annotation.reporting.options import MetricOptions
from annotation.services.session import samples
from tasks_app.models import ExampleSet

if TYPE_CHECKING:  # bootstrap loads numpy; this module is loaded at every start (apps.ready's listener)
    from annotation.reporting.bootstrap import IntervalOptions

FORMAT = "clues-analysis-plan/1"
METRIC = "S1 (tasks_app.scoring.s1, exact string match)"
# How the cells are made from the annotators' scores: fixed by the code (reporting.scores, aggregates,
# majority), recorded so that a plan says what it promised.
AGGREGATION = {
    "cell": "mean over the condition's completed workers of each worker's mean item S1; excluded and abandoned "
    "workers are not averaged in",
    "best_individual": "the completed worker with the highest S1 per condition",
    "majority": "per item over the condition's completed workers: strict (more than half of the votes; no "
    "majority counts as wrong) and plurality with a tie-break seeded by the condition's sample seed and the item",
}


def build_plan(study: Study, options: MetricOptions, intervals: IntervalOptions | None) -> dict[str, Any]:
    """The plan of ``study`` as it stands, analysed with ``options`` and ``intervals`` (None: no intervals)."""
    test_set = ExampleSet.objects.filter(task=study.task, role=ExampleSet.Role.TEST).first()
    conditions = []
    for c in study.conditions.select_related("training_set", "test_set").order_by("shots"):
        source = samples.test_source(c) if c.test_sample else None
        conditions.append(
            {
                "shots": c.shots,
                "training_set_sha256": example_set_sha256(c.training_set),
                "test_set_sha256": example_set_sha256(source) if source is not None else None,
                "sample_seed": c.sample_seed,
                "training_sample": list(c.training_sample or []),
                "test_sample": list(c.test_sample or []),
            }
        )
    checks = [
        {"position": a.position, "expected_label": a.expected_label, "expected_spans": a.expected_spans}
        for a in study.attention_checks.order_by("position", "pk")
    ]
    return {
        "format": FORMAT,
        "study": study.slug,
        "task": study.task.slug,
        "protocol": study.protocol,
        "planned_sample": {
            "workers_per_condition": study.workers_per_condition,
            "split": study.split_number,
            "test_order": study.test_order,
            "test_sample_size": study.test_sample_size,
            "task_test_set_sha256": example_set_sha256(test_set),
            "conditions": conditions,
        },
        "exclusion_rules": {
            "training_filter": {
                "rule": study.filter_rule,
                "threshold": study.filter_threshold,
                "reference": study.filter_reference,
                "group_timeout_minutes": study.filter_group_timeout_minutes,
                "rule_version": FilterDecision.RULE_VERSION,
            },
            "attention": {"fail_limit": study.attention_fail_limit, "action": study.attention_action, "checks": checks},
            "integrity": {
                "max_copies": study.integrity_max_copies,
                "max_fast_share": study.integrity_max_fast_share,
                "max_hidden_share": study.integrity_max_hidden_share,
                "hidden_seconds": study.integrity_hidden_seconds,
                "action": study.integrity_action,
            },
            "comprehension": list(study.comprehension or []),
            "abandon_after_minutes": study.abandon_after_minutes,
        },
        "metric": {
            "name": METRIC,
            "options": options.as_dict(),
            "intervals": None
            if intervals is None
            else {"resamples": intervals.resamples, "seed": intervals.seed, "level": intervals.level},
        },
        "aggregation": AGGREGATION,
    }


def default_plan(study: Study) -> dict[str, Any]:
    """What a study launches under: the default metric options and intervals, the study's rules now."""
    from annotation.reporting.bootstrap import IntervalOptions

    return build_plan(study, MetricOptions(), IntervalOptions())


def freeze(study: Study) -> AnalysisPlan:
    """Freeze ``study``'s plan, once: a plan already frozen is returned as it was (never rewritten)."""
    found = AnalysisPlan.objects.filter(study=study).first()
    if found is not None:
        return found
    text = canonical_json(default_plan(study))
    try:
        with transaction.atomic():
            return AnalysisPlan.objects.create(
                study=study, canonical=text, sha256=text_sha256(text), frozen_at=timezone.now()
            )
    except IntegrityError:  # a concurrent launch froze it first: theirs stands
        return AnalysisPlan.objects.get(study=study)


def in_pilot(study: Study) -> bool:
    """Whether ``study`` is open for a pilot only: its full launch ("open the rest", which reaches ``freeze``
    through the status listeners like any opening), and so the freeze, come later."""
    return study.in_pilot


def on_status_change(study: Study) -> None:
    """The listener of ``studies.change_status``: a study opened for its full launch freezes its plan."""
    if study.status == Study.Status.OPEN and not in_pilot(study):
        freeze(study)


@dataclass(frozen=True)
class Difference:
    part: str  # a dotted path in the plan, e.g. exclusion_rules.training_filter.threshold
    planned: Any
    run: Any

    def text(self) -> str:
        return f"{self.part} (plan {canonical_json(self.planned)}, run {canonical_json(self.run)})"

    def as_dict(self) -> dict[str, Any]:
        return {"part": self.part, "plan": self.planned, "run": self.run}


@dataclass(frozen=True)
class PlanCheck:
    preregistration: str
    sha256: str | None  # the frozen plan's, None when none was frozen
    frozen_at: str | None
    run_sha256: str  # the plan of the analysis run, hashed the same way
    differences: list[Difference] = field(default_factory=list)

    @property
    def matches(self) -> bool | None:
        """True: the analysis run is the frozen plan; False: it differs; None: no plan was frozen."""
        return None if self.sha256 is None else not self.differences

    def as_dict(self) -> dict[str, Any]:
        return {
            "preregistration": self.preregistration or None,
            "sha256": self.sha256,
            "frozen_at": self.frozen_at,
            "run_sha256": self.run_sha256,
            "matches": self.matches,
            "differences": [d.as_dict() for d in self.differences],
        }

    def text(self) -> str:
        registered = (
            f"Pre-registration: {self.preregistration}."
            if self.preregistration
            else "Pre-registration: none recorded (Study.preregistration is empty)."
        )
        if self.sha256 is None:
            return (
                f"{registered} No analysis plan was frozen: the study has not opened for its full launch (or "
                "opened before plans were frozen)."
            )
        plan = (
            f"The analysis plan was frozen when the study opened for its full launch ({self.frozen_at}), "
            f"SHA-256 {self.sha256}"
        )
        if not self.differences:
            return f"{registered} {plan}; the analysis reported here matches it (provenance match)."
        parts = "; ".join(d.text() for d in self.differences)
        return (
            f"{registered} {plan}; the analysis reported here differs from it in {len(self.differences)} "
            f"part{'' if len(self.differences) == 1 else 's'} (provenance mismatch, SHA-256 {self.run_sha256}): "
            f"{parts}."
        )


def _differences(planned: Any, run: Any, path: str = "") -> list[Difference]:
    if isinstance(planned, dict) and isinstance(run, dict):
        found = []
        for key in sorted(set(planned) | set(run)):
            found += _differences(planned.get(key), run.get(key), f"{path}.{key}" if path else key)
        return found
    if canonical_json(planned) == canonical_json(run):  # 0.5 and 0.50, (1,) and [1]: one JSON text
        return []
    return [Difference(path, planned, run)]


def plan_check(study: Study, options: MetricOptions, intervals: IntervalOptions | None) -> PlanCheck:
    """The frozen plan of ``study`` against the analysis run with ``options`` and ``intervals`` on the study as
    it is now. ``intervals`` None: the run's intervals are not this caller's to say (an export's header), so
    they are not compared."""
    frozen = AnalysisPlan.objects.filter(study=study).first()
    run = build_plan(study, options, intervals)
    if frozen is None:
        return PlanCheck(study.preregistration, None, None, text_sha256(canonical_json(run)))
    planned = _loads(frozen.canonical)
    if intervals is None:
        run["metric"]["intervals"] = (planned.get("metric") or {}).get("intervals")
    return PlanCheck(
        study.preregistration,
        frozen.sha256,
        frozen.frozen_at.isoformat(timespec="seconds"),
        text_sha256(canonical_json(run)),
        _differences(planned, run),
    )


def _loads(text: str) -> dict[str, Any]:
    value = json.loads(text)
    return value if isinstance(value, dict) else {}
