"""Training S1: the one definition the training filter and the reports share.

A worker's training S1 is the mean item score over their *locked* training
responses (a pending item has no answer yet; a score that is NULL is left out,
as SQL's AVG does). A worker with no such score has **no** training S1: None,
never 0 (which would read as "everything wrong") and never NaN. Zero-shot
workers have no training step, so theirs is always None; the filter then has
nothing to judge and does not exclude on it.

It is one SQL aggregate (``aggregate``), so a report gets it for every worker
in the same GROUP BY as its other per-worker figures, and the filter gets it
for one worker (``of``) from the very same expression.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from django.db.models import Avg, Q

from annotation.models import Participation, Response


def locked_training(prefix: str = "") -> Q:
    """The responses that count: training phase, no longer pending. ``prefix`` reaches them from another
    model (``responses__`` from a participation)."""
    return Q(**{f"{prefix}phase": Response.Phase.TRAINING}) & ~Q(**{f"{prefix}status": Response.Status.PENDING})


def aggregate(prefix: str = "") -> Avg:
    """Training S1 as an aggregate over responses (NULL when there is nothing to average)."""
    return Avg(f"{prefix}score", filter=locked_training(prefix))


def of(participation: Participation) -> float | None:
    """One worker's training S1; None when they have no scored training item."""
    return Response.all_objects.filter(participation=participation).aggregate(s1=aggregate())["s1"]


def by_participation(
    participation_ids: Iterable[int], *, example_ids: Collection[int] | None = None
) -> dict[int, float | None]:
    """Training S1 per participation, optionally on a subset of the training examples only (the
    training-overlap analyses); participations without a locked training item are left out."""
    # The WHERE only narrows the rows read; the aggregate's own filter is what defines the value.
    rows = Response.objects.filter(locked_training(), participation_id__in=list(participation_ids))
    if example_ids is not None:
        rows = rows.filter(example_id__in=example_ids)
    grouped = rows.values("participation_id").annotate(s1=aggregate()).order_by()
    return {r["participation_id"]: r["s1"] for r in grouped}
