"""The per-item score matrix behind each cell: {(task id, shots): {participation id: {example id: S1}}}.

Only completed participations' locked test items, pooled over the studies the
way the table pools them. The skip policy is the reports' own (``scores.policy_score``),
so the intervals follow whatever policy makes the cells.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from annotation.models import Participation, Response, Study
from annotation.reporting.options import MetricOptions
from annotation.reporting.scores import policy_score

CellKey = tuple[int, int]  # (task id, shots)
CellScores = dict[int, dict[int, float]]  # {participation id: {example id: S1 0..1}}


def cell_item_scores(*, studies: Sequence[Study], options: MetricOptions) -> dict[CellKey, CellScores]:
    result: dict[CellKey, CellScores] = defaultdict(lambda: defaultdict(dict))
    rows = (
        Response.objects.filter(
            participation__study__in=studies,
            participation__state=Participation.State.COMPLETED,
            phase=Response.Phase.TEST,
        )
        .exclude(status=Response.Status.PENDING)
        .annotate(policy_score=policy_score(options))
        .values_list(
            "participation__study__task_id",
            "participation__condition__shots",
            "participation_id",
            "example_id",
            "policy_score",
        )
    )
    for task_id, shots, pid, example_id, value in rows.iterator(chunk_size=5000):
        if value is not None:  # left out under the policy (a skip with "exclude")
            result[(task_id, shots)][pid][example_id] = value
    return {key: dict(by_p) for key, by_p in result.items()}
