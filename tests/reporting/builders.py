"""Small fixed studies for the reporting tests, built with tests/factories.py.

Responses are written the way the worker flow writes them: locked with a
status, the answer strings, and score = S1(answer, gold), or stored_skip_score(gold) (the empty answer's)
for a skip.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from annotation.models import AnswerSpan, Condition, Participation, ParticipationEvent, Response, Study
from tasks_app.models import ExampleSet, Task
from tasks_app.scoring import s1, stored_skip_score
from tests.factories import ConditionFactory, ParticipationFactory, ResponseFactory, StudyFactory, WorkerFactory

T0 = timezone.now().replace(microsecond=0) - timedelta(days=1)


def items_of(task: Task):
    return list(ExampleSet.objects.get(task=task, role="test").ordered_examples())


def training_examples(condition: Condition):
    return list(condition.training_set.ordered_examples())


def make_study(task: Task, *, shots=(0, 10, 20, 30), slug=None, **fields) -> Study:
    study = StudyFactory(task=task, **({"slug": slug} if slug else {}), **fields)
    for n in shots:
        training = None
        if n:
            training = ExampleSet.objects.get(task=task, role="train", split__number=study.split_number, shots=n)
        ConditionFactory(study=study, shots=n, training_set=training)
    return study


def add_annotator(
    study: Study,
    shots: int,
    *,
    answers,
    state=Participation.State.COMPLETED,
    training_answers=(),
    minutes: float = 30,
    worker_id=None,
    platform="prolific",
    confidence=4,
    active_ms=1000,
) -> Participation:
    """A participation whose test answers are ``answers`` (one per test example, in order).

    Each answer is a list of strings, ``None`` for a skip, or a list of
    (start, end) tuples for spans resolved against the context.
    """
    condition = study.conditions.get(shots=shots)
    holding = state in Participation.HOLDING_STATES
    used = set(
        condition.participations.filter(state__in=Participation.HOLDING_STATES).values_list("slot_index", flat=True)
    )
    slot = next(i for i in range(100) if i not in used) if holding else 50 + condition.participations.count()
    worker = WorkerFactory(platform=platform, **({"external_id": worker_id} if worker_id else {}))
    end = T0 + timedelta(minutes=minutes)
    p = ParticipationFactory(condition=condition, worker=worker, slot_index=slot, state=state)
    Participation.objects.filter(pk=p.pk).update(created_at=T0, last_activity_at=end)
    p.refresh_from_db()
    ParticipationEvent.objects.create(participation=p, from_state="", to_state="claimed", at=T0)
    if state in (Participation.State.COMPLETED, Participation.State.EXCLUDED):
        ParticipationEvent.objects.create(participation=p, from_state="test", to_state=state, at=end)
    # Not strict: fewer answers than items leave the rest unanswered (a worker still at work).
    training = training_examples(condition) if shots else []
    for i, (example, answer) in enumerate(zip(training, training_answers, strict=False)):
        respond(p, example, answer, phase="training", position=i, confidence=confidence, active_ms=active_ms)
    for i, (example, answer) in enumerate(zip(items_of(study.task), answers, strict=False)):
        respond(p, example, answer, phase="test", position=i, confidence=confidence, active_ms=active_ms)
    return p


def respond(p, example, answer, *, phase, position, confidence=4, active_ms=1000) -> Response:
    spans = []
    if answer is None:
        status, strings = Response.Status.SKIPPED, []
    else:
        if answer and isinstance(answer[0], tuple):
            spans = [(a, b, example.context_text[a:b]) for a, b in answer]
            strings = [t for _, _, t in spans]
        else:
            strings = list(answer)
        status = Response.Status.ANSWERED if strings else Response.Status.NO_ANSWER
    response = ResponseFactory(
        participation=p,
        example=example,
        phase=phase,
        position=position,
        status=status,
        answer=strings,
        label=strings[0] if strings and example.task.is_classification else "",
        score=stored_skip_score(example.gold_answers) if answer is None else s1(strings, example.gold_answers),
        confidence=None if answer is None else confidence,
        shown_at=T0,
        submitted_at=T0 + timedelta(seconds=5),
        active_ms=active_ms,
    )
    for a, b, text in spans:
        AnswerSpan.objects.create(response=response, start=a, end=b, text=text)
    return response


def gold_answers(task: Task) -> list[list[str]]:
    return [e.gold_answers for e in items_of(task)]


def wrong(gold: list[str], task: Task) -> list[str]:
    """A wrong label for a classification item."""
    labels = list(task.labels.values_list("name", flat=True))
    return [next(label for label in labels if [label] != gold)]
