"""What the session API answers: the task, the item, the completion code, the consent and survey due.

Payloads only: they read and write nothing. Gold leaves the server only through
annotation.services.session.reveal, which the locked body of a training item carries; nothing
here gives a test item's gold, score or hint. The session API (annotation.api.session)
and the worker pages (annotation.views.worker) build their answers with them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils.translation import get_language

from annotation.models import Participation, Response
from annotation.services.admission import closing, comprehension, consent, survey
from annotation.services.admission.entry import completion_target
from annotation.services.session import answers, presentation, reveal
from annotation.services.session.steps import Progress
from annotation.services.state import outcomes
from annotation.services.texts import study_texts
from tasks_app.texts import LabelLike, question_type_names, texts_for


def task_payload(participation: Participation, known_labels: Iterable[LabelLike] | None = None) -> dict:
    """The task as workers see it: a neutral title, never the dataset's name or slug (services.session.presentation),
    its texts in the request's language (tasks_app.texts). ``known_labels``: the task's labels if the request
    has read them (``WorkerState.labels``), else they are read here."""
    task = participation.task
    shown = presentation.worker_task(participation.study, task, language=get_language())
    texts = texts_for(task, get_language(), labels=task.labels.all() if known_labels is None else known_labels)
    labels = [
        {"name": name, "text": help.text, "definition": help.definition, "example": help.example, "key": str(i + 1)}
        for i, (name, help) in enumerate(texts.labels.items())
    ]
    return {
        "name": shown.name,
        "kind": task.kind,
        "description": shown.description,
        "instructions": shown.instructions,
        "multiple_spans": task.multiple_spans,
        "labels": labels,
    }


def item_payload(participation: Participation, response: Response) -> dict:
    example = response.example
    task = participation.task
    question_types = question_type_names(task, get_language())
    context, question = presentation.check_texts(task, example, get_language()) or (
        example.context,
        presentation.question_for(task, example, get_language()),
    )
    payload = {
        "item": response.pk,
        "phase": response.phase,
        "position": response.position,
        "question": question,
        "question_type": example.question_type,
        "question_type_name": question_types.get(example.question_type, ""),
        "context": context,
        "context_kind": "pair" if example.is_sentence_pair else "text",
        # Shown as the data has them (services.session.presentation): never gold, never Example.extra.
        "segment_titles": presentation.segment_titles(task, example, get_language()),
        "marks": presentation.item_marks(example),
        "options": presentation.item_options(example),
        "answer_kind": "label" if task.is_classification else "spans",
        "multiple_spans": task.multiple_spans,
        # The page refuses what the server would: overlapping selections, more spans than the cap.
        "overlapping_spans": task.overlapping_spans,
        "empty_answer_allowed": not task.is_classification and task.empty_answer_allowed,
        "max_spans": answers.span_limit(example.context_text, overlapping=task.overlapping_spans),
        "skip_allowed": response.phase == Response.Phase.TEST,
        "locked": response.is_locked,
    }
    if response.is_locked:
        payload["your_answer"] = answers.stored_answer(response)
    return payload


FINISHED_WITH_CODE = (Participation.State.COMPLETED, Participation.State.EXCLUDED, Participation.State.DECLINED)


def completion_payload(participation: Participation) -> dict | None:
    """The completion code and where to send it: for finished workers, excluded ones (paid too) and those
    who declined the consent text (the platform's "no consent" code); the outcome names which."""
    if participation.state not in FINISHED_WITH_CODE:
        return None
    target = completion_target(participation)
    outcome = outcomes.outcome_for(participation)
    return {
        "code": target.code,
        "kind": target.kind,
        "url": target.url,
        "fields": dict(target.fields),
        "outcome": outcome.value if outcome is not None else outcomes.Outcome.COMPLETED.value,
    }


def consent_payload(participation: Participation) -> dict | None:
    """The consent text while the worker still has to answer it, else None."""
    if not consent.required(participation):
        return None
    text = study_texts.consent_text(participation.study, get_language())
    return {"text": text, "text_hash": consent.text_hash(text)}


def survey_payload(participation: Participation) -> dict | None:
    """The survey while the worker owes it (before training, or after the test), else None."""
    placement = survey.due(participation)
    if placement is None:
        return None
    # Labels in the page's language; the options stay the study's own (they are the answers' values).
    shown = study_texts.texts_for(participation.study, get_language()).survey
    questions = [{k: v for k, v in q.items() if k != "choices"} for q in shown]
    return {"placement": placement, "questions": questions}


def comprehension_payload(participation: Participation) -> dict | None:
    """The comprehension check while the worker owes it: the questions (never the right options), and after
    a failed first attempt which questions were wrong; else None."""
    if not comprehension.due(participation):
        return None
    questions = [
        {"key": q["key"], "label": q["label"], "options": q["options"], "multiple": bool(q.get("multiple"))}
        for q in participation.study.comprehension
    ]
    failed = comprehension.last_failed(participation)
    return {
        "questions": questions,
        "attempt": 1 if failed is None else failed.number + 1,
        "wrong": list(failed.wrong) if failed is not None else [],
    }


def pending_payload(participation: Participation) -> dict[str, Any]:
    """What the worker must do before anything else: consent first, then the comprehension check, then a
    survey that is due."""
    consent_body = consent_payload(participation)
    check_body = None if consent_body is not None else comprehension_payload(participation)
    survey_body = None if consent_body is not None or check_body is not None else survey_payload(participation)
    bodies = {"consent": consent_body, "comprehension": check_body, "survey": survey_body}
    pending = next((name for name, body in bodies.items() if body is not None), None)
    return {"pending": pending, **bodies}


def session_body(
    participation: Participation,
    *,
    progress: Progress | None,
    item: Response | None,
    labels: Iterable[LabelLike] | None = None,
) -> dict:
    """The session's JSON: state, task, progress, the item (the current one, or the one asked for), the
    completion code, the deadline and what is pending. It reads only: the API's GET writes first.
    ``labels`` as for ``task_payload``."""
    return {
        "state": participation.state,
        "shots": participation.condition.shots,
        "task": task_payload(participation, labels),
        "progress": progress.as_dict() if progress else None,
        "item": item_payload(participation, item) if item is not None else None,
        "completion": completion_payload(participation),
        "closes_at": closes_at(participation),
        **pending_payload(participation),
    }


def closes_at(participation: Participation) -> str | None:
    """When the study stops taking this worker's answers (ISO 8601), once it has been closed; else None."""
    deadline = closing.grace_deadline(participation.study)
    return deadline.isoformat() if deadline is not None else None


def locked_body(participation: Participation, result: answers.SubmitResult) -> dict[str, Any]:
    body: dict[str, Any] = {
        "answer": answers.stored_answer(result.response, result.spans),
        "step_finished": result.step_finished,
        "state": result.state,
    }
    if result.response.phase == Response.Phase.TRAINING:
        body["reveal"] = reveal.reveal_payload(result.response, result.spans)
    elif result.next is not None:
        body["next"] = {
            "progress": result.next.progress.as_dict(),
            "item": item_payload(participation, result.next.response),
        }
    return body
