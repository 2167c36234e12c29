"""Check the app's tables against what the simulation did.

For every participation the app reports (annotation.reporting.scores), the
harness knows the worker's answers and the gold it read from the release:
the annotator's test S1 must equal the mean S1 the harness computes itself,
the states must be what the server told the simulated browser (completed,
excluded) or what the release task made of an abandoner, and each condition
must end with exactly N completed workers.
"""

from __future__ import annotations

from collections import Counter

from bench.stats import expected_s1

TOLERANCE = 1e-9


def check(*, outcomes: list, study_slugs: list[str]) -> dict:
    from annotation.models import Study
    from annotation.reporting.scores import annotator_rows

    studies = list(Study.objects.filter(slug__in=study_slugs).select_related("task"))
    rows = {row.worker_id: row for row in annotator_rows(studies=studies)}
    simulated = {o.worker_id: o for o in outcomes if o.state != "refused"}
    mismatches: list[str] = []
    compared = 0
    for worker_id, outcome in simulated.items():
        row = rows.get(worker_id)
        if row is None:
            mismatches.append(f"{worker_id}: no participation in the app's table")
            continue
        if row.state != outcome.state:
            mismatches.append(f"{worker_id}: state {row.state} in the app, {outcome.state} in the simulation")
        if outcome.state == "completed":
            if row.test_items != len(outcome.test) or row.test_total != len(outcome.test):
                mismatches.append(
                    f"{worker_id}: {row.test_items}/{row.test_total} test items in the app, "
                    f"{len(outcome.test)} answered"
                )
            expected = expected_s1(outcome.test.values())
            compared += 1
            if row.test_s1 is None or abs(row.test_s1 - expected) > TOLERANCE:
                mismatches.append(f"{worker_id}: test S1 {row.test_s1} in the app, {expected} expected")
        if outcome.training:
            expected = expected_s1(outcome.training.values())
            if row.training_s1 is None or abs(row.training_s1 - expected) > TOLERANCE:
                mismatches.append(f"{worker_id}: training S1 {row.training_s1} in the app, {expected} expected")
    for worker_id in rows.keys() - simulated.keys():
        mismatches.append(f"{worker_id}: in the app's table but never admitted by the simulation")
    completed = Counter((row.study_slug, row.shots) for row in rows.values() if row.state == "completed")
    for study in studies:
        for condition in study.conditions.all():
            n = completed.get((study.slug, condition.shots), 0)
            if n != study.workers_per_condition:
                mismatches.append(
                    f"{study.slug} {condition.shots}-shot: {n} completed workers, "
                    f"expected {study.workers_per_condition}"
                )
    states = Counter(row.state for row in rows.values())
    return {
        "match": not mismatches,
        "annotators_compared": compared,
        "participations": dict(sorted(states.items())),
        "mismatches": mismatches[:20],
        "mismatch_count": len(mismatches),
    }
