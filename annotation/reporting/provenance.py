"""The reproducibility header every export carries.

It records the studies' configuration, a SHA-256 of each task's test data and
of each condition's training set (over the ordered examples' ids, contexts,
questions and gold answers, so any change to an example or to the order
changes it), the app version, the metric options, and the versions of the
training filter's rules: the current one, and per study those its recorded
verdicts were made under (verdicts stay as decided; docs/studies.md, "Rule
changes and collected results"); per study, its pre-registration and whether
the analysis matches the plan frozen at its launch (``analysis_plan``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.utils import timezone

from annotation.models import FilterDecision, Study
from annotation.reporting import analysis_plan
from annotation.reporting.hashing import example_set_sha256
from annotation.reporting.options import MetricOptions
from annotation.services.money.pay import PAY_RULE_VERSION
from tasks_app.models import ExampleSet


def study_configuration(study: Study, options: MetricOptions | None = None) -> dict[str, Any]:
    test_set = ExampleSet.objects.filter(task=study.task, role=ExampleSet.Role.TEST).first()
    return {
        "slug": study.slug,
        "name": study.name,
        "task": study.task.slug,
        "split": study.split_number,
        "status": study.status,
        "workers_per_condition": study.workers_per_condition,
        "hourly_rate": str(study.hourly_rate),
        "base_reward": None if study.base_reward is None else str(study.base_reward),
        "currency": study.currency,
        "test_order": study.test_order,
        "protocol": study.protocol,
        "test_sample_size": study.test_sample_size,
        "filter_rule": study.filter_rule,
        "filter_decision_rule_versions": sorted(
            set(
                FilterDecision.objects.filter(participation__study=study, is_override=False)
                .values_list("rule_version", flat=True)
                .distinct()
            )
        ),
        "filter_threshold": study.filter_threshold,
        "task_data_sha256": example_set_sha256(test_set),
        "conditions": [
            {
                "shots": c.shots,
                "training_set": str(c.training_set) if c.training_set else None,
                "training_set_sha256": example_set_sha256(c.training_set),
                # A sampled condition's items, as drawn once (annotation.services.session.samples.draw re-draws them).
                "sample_seed": c.sample_seed,
                "training_sample": c.training_sample or None,
                "test_sample": c.test_sample or None,
            }
            for c in study.conditions.select_related("training_set__split", "training_set__task").order_by("shots")
        ],
        "preregistration": study.preregistration or None,
        # The plan frozen at the full launch, and whether this analysis (its metric options, the rules now)
        # matches it; the intervals are the table's business, not compared here.
        "analysis_plan": analysis_plan.plan_check(study, options or MetricOptions(), None).as_dict(),
    }


def reproducibility_header(*, studies: Iterable[Study], options: MetricOptions, export: str) -> dict[str, Any]:
    return {
        "export": export,
        "generated_at": timezone.now().isoformat(timespec="seconds"),
        "app_version": settings.APP_VERSION,
        "metric": "S1 (tasks_app.scoring.s1, exact string match)",
        "metric_options": options.as_dict(),
        "metric_note": options.describe(),
        "filter_rule_version": FilterDecision.RULE_VERSION,
        "pay_rule_version": PAY_RULE_VERSION,  # annotation.services.money.pay; docs/reports.md lists what each moved
        "studies": [study_configuration(s, options) for s in studies],
    }


def header_lines(header: dict[str, Any], prefix: str = "# ") -> list[str]:
    """The header as comment lines, one key per line, values as compact JSON."""
    return [
        f"{prefix}{key}: {json.dumps(value, ensure_ascii=False, separators=(',', ':'))}"
        for key, value in header.items()
    ]
