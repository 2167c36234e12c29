"""The per-item score matrix behind each cell: {(task id, shots): {participation id: {example id: S1}}}.

Only completed participations' locked test items, pooled over the studies the
way the table pools them. The skip policy is applied here, in one place
(``policy_score``), so the intervals follow whatever policy makes the cells.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from annotation.models import Participation, Response, Study
from annotation.reporting.options import MetricOptions

CellKey = tuple[int, int]  # (task id, shots)
CellScores = dict[int, dict[int, float]]  # {participation id: {example id: S1 0..1}}


def skip_policy(options: MetricOptions) -> str:
    """ "empty" (a skip scores as the empty answer, the stored score), "exclude" or "zero".

    Reads ``options.skip_policy`` where the options have one (the three-valued
    policy), else the two-valued ``exclude_skips``.
    """
    policy = getattr(options, "skip_policy", None)
    if isinstance(policy, str):
        return policy
    return "exclude" if options.exclude_skips else "empty"


def policy_score(status: str, stored: float | None, policy: str) -> float | None:
    """An item's score under the policy; None leaves the item out of the annotator's mean."""
    if stored is None:
        return None
    if status != Response.Status.SKIPPED or policy == "empty":
        return stored
    return 0.0 if policy == "zero" else None


def cell_item_scores(*, studies: Sequence[Study], options: MetricOptions) -> dict[CellKey, CellScores]:
    policy = skip_policy(options)
    result: dict[CellKey, CellScores] = defaultdict(lambda: defaultdict(dict))
    rows = (
        Response.objects.filter(
            participation__study__in=studies,
            participation__state=Participation.State.COMPLETED,
            phase=Response.Phase.TEST,
        )
        .exclude(status=Response.Status.PENDING)
        .values_list(
            "participation__study__task_id",
            "participation__condition__shots",
            "participation_id",
            "example_id",
            "status",
            "score",
        )
    )
    for task_id, shots, pid, example_id, status, stored in rows.iterator(chunk_size=5000):
        value = policy_score(status, stored, policy)
        if value is not None:
            result[(task_id, shots)][pid][example_id] = value
    return {key: dict(by_p) for key, by_p in result.items()}
