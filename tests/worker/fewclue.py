"""FewCLUE participations for the worker tests: the fixture imported, a study on one task, training on a
named set (``dev_0``) as the condition's training set."""

from __future__ import annotations

import io
from pathlib import Path

from django.core.management import call_command

from annotation.models import Condition, Participation
from tasks_app.models import ExampleSet, Task
from tests.factories import ConditionFactory, ParticipationFactory, StudyFactory

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fewclue"


def import_fixture(folder: Path = FIXTURE, tasks: tuple[str, ...] = ()) -> None:
    """The fixture (or ``folder``, e.g. the real datasets/, with only ``tasks``), once per test."""
    if not Task.objects.filter(slug__startswith="fewclue-").exists():
        only = [arg for task in tasks for arg in ("--task", task)]
        call_command("import_fewclue", str(folder), *only, stdout=io.StringIO())


def fewclue_participation(
    folder: str, *, training: str = "dev_0", state: str = "training", condition: Condition | None = None
) -> Participation:
    """A worker of a study on ``fewclue-<folder>``: training on the named set ``training`` ("" for none),
    then the task's test set; ``condition``: another worker of that condition."""
    if condition is not None:
        slot = condition.participations.count()
        return ParticipationFactory(condition=condition, slot_index=slot, state=state if condition.shots else "test")
    import_fixture()
    task = Task.objects.get(slug=f"fewclue-{folder}")
    study = StudyFactory(task=task)
    training_set = ExampleSet.objects.get(task=task, name=training) if training else None
    shots = training_set.items.count() if training_set else 0
    condition = ConditionFactory(study=study, shots=shots, training_set=training_set)
    return ParticipationFactory(condition=condition, state=state if training else "test")
