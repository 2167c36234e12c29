"""A condition's items: its sets whole (CLUES), or a seeded sample drawn from them once (FewCLUE).

A sample is drawn when the condition is made, from the set's items in the set's order, with a seed
that is recorded on the condition beside the drawn example ids. So every worker of the condition (a
replacement included) gets the same items, a report can name them, and anyone can draw them again from
the seed (``draw``). The training and the test sample come from two streams of the one seed, so that
changing N leaves the test sample as it was.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from annotation.models import Condition
from tasks_app.models import ExampleSet, ExampleSetItem


def new_seed() -> int:
    return secrets.randbits(31)


def draw(ids: Sequence[int], k: int, *, seed: int, stream: str) -> list[int]:
    """``k`` of ``ids`` chosen by ``seed`` (and the stream's name), in their order in ``ids``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValidationError({stream: f"A sample has at least one item; got {k!r}."})
    if k > len(ids):
        raise ValidationError({stream: f"Cannot draw {k} items from a set of {len(ids)}."})
    chosen = random.Random(f"{seed}:{stream}").sample(range(len(ids)), k)
    return [ids[i] for i in sorted(chosen)]


def set_ids(example_set_id: int) -> list[int]:
    """The set's example ids in its order."""
    return list(
        ExampleSetItem.objects.filter(example_set_id=example_set_id)
        .order_by("position")
        .values_list("example_id", flat=True)
    )


def _test_sets(task_id: int) -> QuerySet[ExampleSet]:
    return ExampleSet.objects.filter(task_id=task_id, role=ExampleSet.Role.TEST)


def test_set(task_id: int) -> ExampleSet | None:
    return _test_sets(task_id).first()


def test_set_id(task_id: int) -> int | None:
    return _test_sets(task_id).values_list("pk", flat=True).first()


def test_ids(condition: Condition, *, task_id: int, set_id: int | None = None) -> list[int]:
    """The condition's test items in the test set's order: its sample, or the whole test set (``set_id``,
    the test set's id, when the caller has read it)."""
    if condition.test_sample:
        return list(condition.test_sample)
    found = set_id if set_id is not None else test_set_id(task_id)
    return set_ids(found) if found is not None else []


def training_ids(condition: Condition) -> list[int]:
    """The condition's training items in the training set's order: its sample, or the whole set."""
    if condition.training_sample:
        return list(condition.training_sample)
    return set_ids(condition.training_set_id) if condition.training_set_id else []


def describe(condition: Condition, *, test_size: int) -> str:
    """One sentence for reports: which test items the condition's workers answered."""
    if not condition.test_sample:
        return f"each worker answered the whole test set ({test_size} items)"
    return (
        f"each worker answered the condition's sample of {len(condition.test_sample)} of {test_size} test items, "
        f"drawn with seed {condition.sample_seed}"
    )
