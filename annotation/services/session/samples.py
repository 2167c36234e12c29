"""A condition's items: its sets whole (CLUES), or a seeded sample drawn from them once (FewCLUE).

A sample is drawn when the condition is made, from the set's items in the set's order, with a seed
that is recorded on the condition beside the drawn example ids. So every worker of the condition (a
replacement included) gets the same items, a report can name them, and anyone can draw them again from
the seed (``draw``). The training and the test sample come from two streams of the one seed, so that
changing N leaves the test sample as it was.

Before drawing, each set is screened (``screen``): an item a worker would see twice (the same text, question,
marks and options under another id) is drawn at most once, items shown alike with different gold are not
drawn at all, and the test sample takes no item that is also in the set the training items come from. So a
worker never meets one item twice, nor a test item they were trained on; ``screening_facts`` says what was
left out, for the reports.
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from annotation.models import Condition
from tasks_app.models import Example, ExampleSet, ExampleSetItem


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


@dataclass(frozen=True)
class Shown:
    """One item of a set as a worker sees it (``key``), with its gold and its line in the set's file (its
    place in the set: the importer keeps the file's order)."""

    pk: int
    key: str
    gold: tuple[str, ...]
    line: str


@dataclass
class Screened:
    """A set's items after ``screen``: those that may be drawn, in the set's order, and those left out."""

    kept: list[int] = field(default_factory=list)
    repeated: list[tuple[str, str]] = field(default_factory=list)  # (line left out, line kept)
    contradictory: list[tuple[str, ...]] = field(default_factory=list)  # lines shown alike, gold differing
    in_training: list[str] = field(default_factory=list)  # lines also in the training items' set

    @property
    def left_out(self) -> int:
        return len(self.repeated) + sum(len(group) for group in self.contradictory) + len(self.in_training)


def shown_key(example: Example) -> str:
    """What a worker sees of an item: its context, question, marked spans and own options (not its id or gold)."""
    marks = sorted((m.get("start"), m.get("end"), str(m.get("role", ""))) for m in example.marks or [])
    return json.dumps([example.context, example.question, marks, example.choices or []], ensure_ascii=False)


def shown_items(ids: Sequence[int]) -> list[Shown]:
    """The items of ``ids`` (a set's, in its order), as ``Shown``."""
    found = {
        ex.pk: ex
        for ex in Example.objects.filter(pk__in=list(ids)).only(
            "context", "question", "marks", "choices", "gold_answers"
        )
    }
    return [
        Shown(pk, shown_key(found[pk]), tuple(sorted(str(g) for g in found[pk].gold_answers or [])), str(line))
        for line, pk in enumerate(ids, start=1)
        if pk in found
    ]


def screen(items: Sequence[Shown], *, exclude: Iterable[str] = ()) -> Screened:
    """Which of ``items`` may be drawn: the first of items shown alike with the same gold, none of items shown
    alike with different gold, and none whose key is in ``exclude`` (the training items' set, for a test set)."""
    groups: dict[str, list[Shown]] = {}
    for item in items:
        groups.setdefault(item.key, []).append(item)
    excluded = set(exclude)
    result = Screened()
    for item in items:
        group = groups[item.key]
        if len({g.gold for g in group}) > 1:
            if item is group[0]:
                result.contradictory.append(tuple(g.line for g in group))
        elif item is not group[0]:
            result.repeated.append((item.line, group[0].line))
        elif item.key in excluded:
            result.in_training.append(item.line)
        else:
            result.kept.append(item.pk)
    return result


def screened(set_id: int, *, training_set_id: int | None = None) -> Screened:
    """``screen`` of a set's items (in its order); for a test set, ``training_set_id`` names the set the
    condition's training items come from, whose items the test sample must not hold."""
    exclude = {item.key for item in shown_items(set_ids(training_set_id))} if training_set_id else set()
    return screen(shown_items(set_ids(set_id)), exclude=exclude)


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


def test_source(condition: Condition) -> ExampleSet | None:
    """The set a condition's test items come from: the one its sample was drawn from (the README protocol's
    validation set), else the task's test set."""
    return condition.test_set or test_set(condition.study.task_id)


def describe(condition: Condition) -> str:
    """One sentence for reports: which test items the condition's workers answered, and what the screen left
    out before the draw."""
    source = test_source(condition)
    size = len(set_ids(source.pk)) if source else 0
    if not condition.test_sample:
        return f"each worker answered the whole test set ({size} items)"
    name = source.name if source is not None and source.name else "the test set"
    text = (
        f"each worker answered the condition's sample of {len(condition.test_sample)} of the {size} items of "
        f"{name}, drawn with seed {condition.sample_seed}"
    )
    left_out = screening_facts(condition)
    return f"{text} ({left_out})" if left_out else text


def _ids(values: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _left_out(name: str, found: Screened, training: str) -> str:
    parts = []
    if found.repeated:
        pairs = [f"{left} = {kept}" for left, kept in found.repeated]
        parts.append(f"{len(found.repeated)} repeating an earlier item (line {_ids(pairs)})")
    if found.contradictory:
        count = sum(len(group) for group in found.contradictory)
        groups = ["/".join(group) for group in found.contradictory]
        parts.append(f"{count} shown alike with different gold (lines {_ids(groups)})")
    if found.in_training:
        parts.append(f"{len(found.in_training)} also in {training} (line {_ids(found.in_training)})")
    return f"left out of {name} before the draw, by line of its file: " + ", ".join(parts) if parts else ""


def screening_facts(condition: Condition) -> str:
    """What the screen (``screen``) left out of the sets the condition's samples were drawn from ('' if none)."""
    parts = []
    training = condition.training_set
    training_name = training.name if training is not None and training.name else "the training set"
    if condition.training_sample and training is not None:
        parts.append(_left_out(training_name, screened(training.pk), training_name))
    source = test_source(condition) if condition.test_sample else None
    if source is not None:
        found = screened(source.pk, training_set_id=training.pk if training is not None else None)
        parts.append(_left_out(source.name or "the test set", found, training_name))
    return "; ".join(p for p in parts if p)
