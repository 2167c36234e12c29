"""Builders for the worker-flow tests: tasks with training sets, participations, logged-in clients."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Participation
from annotation.web import worker_cookie
from tasks_app.models import ExampleSet, Task
from tests.factories import (
    ConditionFactory,
    ExampleFactory,
    ExampleSetFactory,
    ParticipationFactory,
    StudyFactory,
    TaskFactory,
    TrainingSplitFactory,
    add_examples_to_set,
    make_classification_task,
)

State = Participation.State


def located(context: str, answers: list[str]) -> list[dict]:
    spans = []
    for answer in answers:
        start = context.find(answer)
        while start != -1:
            spans.append({"text": answer, "start": start, "end": start + len(answer)})
            start = context.find(answer, start + 1)
    return spans


def make_task_with_items(
    *,
    slug: str,
    kind: str = Task.Kind.SPAN,
    multiple_spans: bool = True,
    test: list,
    train: list = (),
    question: str = "Which people are named?",
    labels: tuple = (),
) -> Task:
    """A task whose test (and optional 10-shot training) items are (context, gold answers) pairs."""
    task = TaskFactory(
        slug=slug,
        name=slug.upper(),
        kind=kind,
        multiple_spans=multiple_spans,
        group=Task.Group.NER if multiple_spans else Task.Group.MRC,
        description="Find the answer in the text.",
        instructions="Select the words with the mouse.",
    )
    for i, name in enumerate(labels):
        task.labels.create(name=name, definition=f"The {name} label.", example=f"A {name} example.", position=i)

    def build(items):
        return [
            ExampleFactory(
                task=task,
                context=context,
                question=question,
                gold_answers=list(gold),
                gold_spans=located(context, gold) if isinstance(context, str) and kind == Task.Kind.SPAN else [],
            )
            for context, gold in items
        ]

    add_examples_to_set(ExampleSetFactory(task=task, role=ExampleSet.Role.TEST), build(test))
    if train:
        split = TrainingSplitFactory(task=task, number=1)
        add_examples_to_set(
            ExampleSetFactory(task=task, role=ExampleSet.Role.TRAIN, split=split, shots=10), build(train)
        )
    return task


def make_participation(task: Task, *, shots: int = 0, state: str = State.CLAIMED, **study_kwargs) -> Participation:
    study = StudyFactory(task=task, **study_kwargs)
    training_set = None
    if shots:
        training_set = ExampleSet.objects.get(task=task, role=ExampleSet.Role.TRAIN, split__number=1, shots=shots)
    condition = ConditionFactory(study=study, shots=shots, training_set=training_set)
    return ParticipationFactory(condition=condition, state=state)


def login(client: Client, participation: Participation) -> Client:
    """The browser of the participation's worker: the cookie the entry link sets."""
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    return client


NER_TEST = [
    ("Ada Lovelace met Charles Babbage in London .", ["Ada Lovelace", "Charles Babbage"]),
    ("Nobody was named here .", []),
    ("New York City mayor Eric Adams spoke .", ["Eric Adams"]),
]
NER_TRAIN = [
    ("Grace Hopper wrote code .", ["Grace Hopper"]),
    ("Alan Turing met Alonzo Church .", ["Alan Turing", "Alonzo Church"]),
]


@pytest.fixture
def ner_task(db) -> Task:
    return make_task_with_items(slug="ner", test=NER_TEST, train=NER_TRAIN)


@pytest.fixture
def sst_task(db) -> Task:
    return make_classification_task(slug="sst", n_test=4, n_train=30)


@pytest.fixture
def worker(client):
    """A function that logs the test client in as a participation and returns the client."""
    return lambda participation: login(client, participation)
