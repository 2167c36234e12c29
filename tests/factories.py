"""factory_boy factories for the catalog and the study machinery.

Helpers at the bottom build whole small fixtures (a classification task with
its labels, test set and nested training split) in one call.
"""

import hashlib
import json

import factory
from django.utils import timezone

from annotation.models import Condition, Participation, Response, Study, Worker
from annotation.services.studies import studies
from tasks_app.models import Example, ExampleSet, ExampleSetItem, Label, Task, TrainingSplit


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"task{n}")
    name = factory.LazyAttribute(lambda o: o.slug.upper())
    kind = Task.Kind.CLASSIFICATION
    group = Task.Group.SENTENCE_CLASSIFICATION
    description = "Decide whether the sentence is positive or negative."
    instructions = "Pick one label."


class LabelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Label
        django_get_or_create = ("task", "name")  # the migrated CLUES tasks already have their labels

    task = factory.SubFactory(TaskFactory)
    name = factory.Sequence(lambda n: f"label{n}")
    definition = "A label."
    example = "An example."
    position = factory.Sequence(lambda n: n)


def _fingerprint(o) -> str:
    payload = json.dumps([o.source_id, o.context, o.question, o.gold_answers], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


class ExampleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Example

    task = factory.SubFactory(TaskFactory)
    source_id = factory.Sequence(lambda n: f"ex{n}")
    context = factory.Sequence(lambda n: f"Sentence number {n} is here .")
    question = "positive or negative?"
    gold_answers = factory.LazyFunction(lambda: ["positive"])
    gold_spans = factory.LazyFunction(list)
    fingerprint = factory.LazyAttribute(_fingerprint)


class TrainingSplitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TrainingSplit

    task = factory.SubFactory(TaskFactory)
    number = 1
    is_nested = True


class ExampleSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ExampleSet

    task = factory.SubFactory(TaskFactory)
    role = ExampleSet.Role.TEST


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    slug = factory.Sequence(lambda n: f"study-{n}")
    name = factory.LazyAttribute(lambda o: f"Study {o.slug}")
    task = factory.SubFactory(TaskFactory)
    status = Study.Status.OPEN
    outcome_codes = factory.LazyFunction(lambda: {"completed": {"code": "C0DE1234", "url": ""}})

    @classmethod
    def _create(cls, model_class: type[Study], *args: object, **kwargs: object) -> Study:
        # Saved as the admin, the API and the commands save a study.
        study = model_class(*args, **kwargs)
        studies.study_save(study=study)
        return study


class ConditionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Condition

    study = factory.SubFactory(StudyFactory)
    shots = 0


class WorkerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Worker

    platform = Worker.Platform.INHOUSE
    external_id = factory.Sequence(lambda n: f"worker{n}")


class ParticipationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Participation

    condition = factory.SubFactory(ConditionFactory)
    study = factory.LazyAttribute(lambda o: o.condition.study)
    task = factory.LazyAttribute(lambda o: o.condition.study.task)
    worker = factory.SubFactory(WorkerFactory)
    slot_index = 0
    state = Participation.State.TEST


class ResponseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Response

    participation = factory.SubFactory(ParticipationFactory)
    example = factory.SubFactory(ExampleFactory)
    phase = Response.Phase.TEST
    position = factory.Sequence(lambda n: n)
    status = Response.Status.ANSWERED
    submitted_at = factory.LazyFunction(timezone.now)
    confidence = 4


def add_examples_to_set(example_set: ExampleSet, examples) -> ExampleSet:
    ExampleSetItem.objects.bulk_create(
        ExampleSetItem(example_set=example_set, example=ex, position=i) for i, ex in enumerate(examples)
    )
    return example_set


def make_classification_task(slug="sst2", labels=("positive", "negative"), n_test=6, n_train=30, split=1) -> Task:
    """A classification task with labels, a test set and one nested split (10/20/30 shots)."""
    task = TaskFactory(slug=slug, name=slug.upper(), kind=Task.Kind.CLASSIFICATION)
    for i, name in enumerate(labels):
        LabelFactory(task=task, name=name, definition=f"The {name} label.", example=f"A {name} example.", position=i)
    test = [ExampleFactory(task=task, gold_answers=[labels[i % len(labels)]]) for i in range(n_test)]
    add_examples_to_set(ExampleSetFactory(task=task, role=ExampleSet.Role.TEST), test)
    train = [ExampleFactory(task=task, gold_answers=[labels[i % len(labels)]]) for i in range(n_train)]
    training_split = TrainingSplitFactory(task=task, number=split, is_nested=True)
    for shots in (10, 20, 30):
        es = ExampleSetFactory(task=task, role=ExampleSet.Role.TRAIN, split=training_split, shots=shots)
        add_examples_to_set(es, train[:shots])
    return task


def make_span_task(slug="conll", multiple_spans=True, n_test=4) -> Task:
    """A span task whose examples have located gold spans."""
    task = TaskFactory(
        slug=slug,
        name=slug.upper(),
        kind=Task.Kind.SPAN,
        group=Task.Group.NER,
        multiple_spans=multiple_spans,
        description="Highlight every person name.",
    )
    contexts = [
        ("Ada Lovelace met Charles Babbage in London .", ["Ada Lovelace", "Charles Babbage"]),
        ("Nobody was named here .", []),
        ("Grace Hopper wrote code .", ["Grace Hopper"]),
        ("Alan Turing and Alan Turing .", ["Alan Turing"]),
    ]
    examples = []
    for i in range(n_test):
        text, gold = contexts[i % len(contexts)]
        text = f"{text} ({i})"
        spans = []
        for g in gold:
            start = text.find(g)
            while start != -1:
                spans.append({"text": g, "start": start, "end": start + len(g)})
                start = text.find(g, start + 1)
        examples.append(
            ExampleFactory(
                task=task,
                context=text,
                question="List all the people names in the context",
                question_type="PER",
                gold_answers=gold,
                gold_spans=spans,
            )
        )
    add_examples_to_set(ExampleSetFactory(task=task, role=ExampleSet.Role.TEST), examples)
    return task
