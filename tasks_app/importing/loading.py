"""Write a checked plan to the database: bulk inserts, no duplicates on re-import.

Examples are matched by (task, fingerprint): new ones are inserted, existing
ones get their derived fields refreshed, none is ever deleted (answers may
point at them). Each set's membership is replaced when its content hash
changed, unless workers' answers already point at the set's examples: then
``SetInUse`` is raised and, the run being one transaction, nothing is written.
Call inside ``transaction.atomic()``; the service does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from tasks_app import reading_time
from tasks_app.importing.planning import SetPlan, TaskPlan
from tasks_app.importing.reading import sha256
from tasks_app.models import Example, ExampleSet, ExampleSetItem, Task, TrainingSplit

_DERIVED_FIELDS = (
    "source_id",
    "question_type",
    "gold_answers",
    "gold_spans",
    "alternative_answers",
    "extra",
    "choices",
    "marks",
)
_CHUNK = 500


class SetInUse(Exception):
    """A set that would change already has answers recorded against its examples; the message is one line."""


@dataclass
class LoadStats:
    examples_created: int = 0
    examples_updated: int = 0
    sets_written: int = 0
    sets_unchanged: int = 0


def write_plan(*, task: Task, plan: TaskPlan) -> LoadStats:
    stats = LoadStats()
    ids = _write_examples(task=task, plan=plan, stats=stats)
    splits: dict[int | None, TrainingSplit] = {}  # the test set's plan has split None
    for split_plan in plan.splits:
        split, _ = TrainingSplit.objects.update_or_create(
            task=task,
            number=split_plan.number,
            defaults={"is_nested": split_plan.is_nested, "nested_built": split_plan.nested_built},
        )
        splits[split_plan.number] = split
    for set_plan in plan.sets:
        _write_set(task=task, set_plan=set_plan, split=splits.get(set_plan.split), ids=ids, stats=stats)
    return stats


def _new_example(task: Task, values: dict[str, Any]) -> Example:
    """An unsaved example with its reading-time estimate (bulk_create does not call save())."""
    estimate = reading_time.example_reading_ms(values["question"], values["context"])
    return Example(task=task, **values, reading_ms=estimate)


def _write_examples(*, task: Task, plan: TaskPlan, stats: LoadStats) -> dict[str, int]:
    wanted = list(plan.examples)
    existing: dict[str, Example] = {}
    for i in range(0, len(wanted), _CHUNK):
        chunk = wanted[i : i + _CHUNK]
        existing.update({e.fingerprint: e for e in Example.objects.filter(task=task, fingerprint__in=chunk)})
    new = [_new_example(task, plan.examples[f]) for f in wanted if f not in existing]
    created = Example.objects.bulk_create(new, batch_size=_CHUNK)
    stats.examples_created = len(created)
    changed = []
    for fingerprint, example in existing.items():
        values = plan.examples[fingerprint]
        if any(getattr(example, name) != values[name] for name in _DERIVED_FIELDS):
            for name in _DERIVED_FIELDS:
                setattr(example, name, values[name])
            changed.append(example)
    if changed:
        Example.objects.bulk_update(changed, _DERIVED_FIELDS, batch_size=_CHUNK)
        # Gold answers rewritten in place: the task is marked updated, which the dashboard's figure keys
        # read (annotation.reporting.figure_keys), so figures computed against the old gold are not served.
        Task.objects.filter(pk=task.pk).update(updated_at=timezone.now())
    stats.examples_updated = len(changed)
    ids = {f: e.pk for f, e in existing.items()}
    ids.update({e.fingerprint: e.pk for e in created})
    return ids


def _write_set(
    *, task: Task, set_plan: SetPlan, split: TrainingSplit | None, ids: dict[str, int], stats: LoadStats
) -> None:
    content_hash = sha256("\n".join(set_plan.fingerprints))
    if set_plan.role == ExampleSet.Role.TEST:
        example_set, _ = ExampleSet.objects.get_or_create(task=task, role=ExampleSet.Role.TEST)
    elif set_plan.role == ExampleSet.Role.NAMED:
        example_set, _ = ExampleSet.objects.get_or_create(task=task, role=ExampleSet.Role.NAMED, name=set_plan.name)
    else:
        example_set, _ = ExampleSet.objects.get_or_create(
            task=task, role=ExampleSet.Role.TRAIN, split=split, shots=set_plan.shots
        )
    same_name = example_set.name == set_plan.name
    if example_set.content_hash == content_hash and example_set.source_file == set_plan.source_file and same_name:
        stats.sets_unchanged += 1
        return
    if example_set.content_hash != content_hash and _has_answers(example_set):
        raise SetInUse(
            f"the {example_set} set already has answers recorded against its examples and {set_plan.source_file} "
            "would change it; nothing was imported (use a fresh database, or import into a new task)"
        )
    ExampleSetItem.objects.filter(example_set=example_set).delete()
    ExampleSetItem.objects.bulk_create(
        [
            ExampleSetItem(example_set=example_set, example_id=ids[f], position=i)
            for i, f in enumerate(set_plan.fingerprints)
        ],
        batch_size=_CHUNK,
    )
    example_set.content_hash = content_hash
    example_set.source_file = set_plan.source_file
    example_set.name = set_plan.name
    example_set.save(update_fields=["content_hash", "source_file", "name"])
    stats.sets_written += 1


def _has_answers(example_set: ExampleSet) -> bool:
    """Do rows of another app (e.g. workers' responses) point at any example of this set?

    Asked through Django's relation metadata, so the catalog never imports the apps built on it.
    """
    example_ids = ExampleSetItem.objects.filter(example_set=example_set).values("example_id")
    for relation in Example._meta.related_objects:
        model = relation.related_model
        assert not isinstance(model, str)  # "self" is resolved to the class once the apps are loaded
        if model._meta.app_label == Example._meta.app_label:
            continue
        if model._default_manager.filter(**{f"{relation.field.name}__in": example_ids}).exists():
            return True
    return False
