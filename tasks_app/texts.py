"""A task's worker-facing texts in one language: the one place that picks them, with their validation.

A task's own fields (``description``, ``instructions``, the question types'
names, each label's ``definition`` and ``example``) are its default texts.
``Task.translations`` gives them per language, any of them, e.g.::

    {"de": {"description": "...", "instructions": "...", "worker_question": "...",
            "question_types": {"PER": "Person"}, "questions": {"PER": "Markieren Sie ..."},
            "labels": {"positive": {"name": "positiv", "definition": "...", "example": "..."}},
            "segment_titles": ["Überschrift", "Schlagwörter"]}}

``texts_for(task, language)`` returns the texts a worker sees, each one
translated where the translation has it and the default otherwise.
``validate_translations`` refuses unknown languages, fields, labels and
question types and anything that is not a string, with a message that names
the place.

Adding a text: a new worker-facing Task field (like ``worker_title``, the
neutral title) is one more name in ``TEXT_FIELDS`` and ``TaskTexts``, and
``texts_for`` reads it like ``instructions``; the admin's TaskForm picks it up
from ``TEXT_FIELDS``. A study's texts (its title, consent text, survey) are
translated the same way in ``Study.translations``
(annotation.services.texts.study_texts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from django.conf import settings
from django.core.exceptions import ValidationError

if TYPE_CHECKING:
    from tasks_app.models import Label, Task

# Task fields whose text a translation may replace (each is also the key in a language's object).
TEXT_FIELDS = ("worker_title", "worker_question", "description", "instructions")
# A label's "name" is the word on its badge; the label's own name stays the answer stored (the data contract).
LABEL_FIELDS = ("name", "definition", "example")
MAX_TEXT_LENGTH = 20_000


@dataclass(frozen=True)
class LabelHelp:
    definition: str
    example: str
    text: str = ""  # the word on the label's badge in this language ("" : the label's own name)


@dataclass(frozen=True)
class TaskTexts:
    """What a worker reads about a task, in one language."""

    language: str
    description: str
    instructions: str
    worker_title: str = ""  # the neutral title (Task.worker_title); "" when the task has none
    worker_question: str = ""  # the question shown instead of the examples' own; "" when the task has none
    question_types: dict[str, str] = field(default_factory=dict)  # code -> name
    segment_titles: list[str] = field(default_factory=list)  # the title of each part of a list context
    questions: dict[str, str] = field(default_factory=dict)  # code -> the question type's question, translated
    labels: dict[str, LabelHelp] = field(default_factory=dict)  # label word -> help pop-up


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _translation(task: Task, language: str | None) -> Mapping[str, Any]:
    if not language or not isinstance(task.translations, dict):
        return {}
    return task.translations.get(language) or {}


def question_type_names(task: Task, language: str | None) -> dict[str, str]:
    """The names of the task's question types (code -> name) in ``language``; no query."""
    own = _translation(task, language).get("question_types") or {}
    return {
        qt.get("code", ""): _text(own.get(qt.get("code"))) or qt.get("name", "") for qt in task.question_types or []
    }


def segment_titles(task: Task, language: str | None) -> list[str]:
    """The task's titles of a list context's parts in ``language``, each falling back to the task's own; no
    query."""
    own = [t if isinstance(t, str) else "" for t in task.segment_titles or []]
    given = _translation(task, language).get("segment_titles")
    given = given if isinstance(given, list) else []
    size = max(len(own), len(given))
    return [_text(given[i] if i < len(given) else None) or (own[i] if i < len(own) else "") for i in range(size)]


class LabelLike(Protocol):
    """What the texts read of a label: a Label, or the worker's read of one (``worker_sql.LabelText``)."""

    @property
    def name(self) -> str: ...
    @property
    def definition(self) -> str: ...
    @property
    def example(self) -> str: ...


def texts_for(task: Task, language: str | None, labels: Iterable[LabelLike] | None = None) -> TaskTexts:
    """The task's texts in ``language``, each falling back to the default text. ``labels``: the task's labels
    if the caller has them, ``()`` when the label help is not needed (no query); else ``task.labels.all()``."""
    translation = _translation(task, language)
    own_labels = translation.get("labels") or {}
    help_texts = {}
    for label in task.labels.all() if labels is None else labels:
        own = own_labels.get(label.name) or {}
        help_texts[label.name] = LabelHelp(
            definition=_text(own.get("definition")) or label.definition,
            example=_text(own.get("example")) or label.example,
            text=_text(own.get("name")) or label.name,
        )
    return TaskTexts(
        language=language or "",
        description=_text(translation.get("description")) or task.description,
        instructions=_text(translation.get("instructions")) or task.instructions,
        worker_title=_text(translation.get("worker_title")) or task.worker_title,
        worker_question=_text(translation.get("worker_question")) or task.worker_question,
        question_types=question_type_names(task, language),
        segment_titles=segment_titles(task, language),
        questions=question_texts(task, language),
        labels=help_texts,
    )


def label_text(task: Task, language: str | None, name: str) -> str:
    """The word on label ``name``'s button in ``language`` (the label's own name where none is given); no query."""
    own = (_translation(task, language).get("labels") or {}).get(name) or {}
    return _text(own.get("name") if isinstance(own, dict) else None) or name


def question_texts(task: Task, language: str | None) -> dict[str, str]:
    """The question types' questions translated into ``language`` (code -> question); only those it has."""
    own = _translation(task, language).get("questions") or {}
    return {code: text for code, text in own.items() if _text(text)}


def missing_texts(task: Task, language: str, labels: Iterable[Label] | None = None) -> list[str]:
    """The places (``de.labels.neutral.definition``) of the task's worker-facing texts that ``language`` lacks.

    A text the task does not have (an empty definition, no worker question) is not missing. A task whose
    own texts are already in ``language`` (the default language) lacks nothing."""
    if not language or language == settings.LANGUAGE_CODE.split("-")[0]:
        return []
    own = _translation(task, language)
    # A classification's examples ask one template question ("positive or negative?"): it needs one too.
    needed = [
        name for name in TEXT_FIELDS if getattr(task, name) or (name == "worker_question" and task.is_classification)
    ]
    missing = [f"{language}.{name}" for name in needed if not _text(own.get(name))]
    given_types, given_questions = own.get("question_types") or {}, own.get("questions") or {}
    for qt in task.question_types or []:
        code = qt.get("code", "")
        if qt.get("name") and not _text(given_types.get(code)):
            missing.append(f"{language}.question_types.{code}")
        if qt.get("question") and not _text(given_questions.get(code)):
            missing.append(f"{language}.questions.{code}")
    given_labels = own.get("labels") or {}
    for label in task.labels.all() if labels is None else labels:
        mine = given_labels.get(label.name) or {}
        for part in LABEL_FIELDS:
            if (part == "name" or getattr(label, part)) and not _text(mine.get(part)):
                missing.append(f"{language}.labels.{label.name}.{part}")
    return missing


def _check_text(value: object, where: str, errors: list[str]) -> None:
    if not isinstance(value, str):
        errors.append(f"{where} must be text; got {type(value).__name__}.")
    elif len(value) > MAX_TEXT_LENGTH:
        errors.append(f"{where} is longer than {MAX_TEXT_LENGTH} characters.")


def _check_keys(value: object, where: str, known: Iterable[str], what: str, errors: list[str]) -> dict | None:
    if not isinstance(value, dict):
        errors.append(f"{where} must be an object; got {type(value).__name__}.")
        return None
    known = list(known)
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        listed = ", ".join(known) if known else "none"
        errors.append(f"{where}: unknown {what} {', '.join(unknown)} (known: {listed}).")
    return value


def validate_translations(
    value: object, *, label_names: Iterable[str] | None = None, question_type_codes: Iterable[str] = ()
) -> None:
    """Raise ValidationError listing every problem of a ``Task.translations`` value.

    ``label_names`` None skips the label-name check (a task not saved yet has no labels to check against).
    """
    languages = [code for code, _ in settings.LANGUAGES]
    errors: list[str] = []
    top = _check_keys(value, "Translations", languages, "language", errors)
    for code, texts in (top or {}).items():
        if code not in languages:
            continue
        known = (*TEXT_FIELDS, "question_types", "questions", "labels", "segment_titles")
        entry = _check_keys(texts, f"{code}", known, "field", errors)
        for name, text in (entry or {}).items():
            if name in TEXT_FIELDS:
                _check_text(text, f"{code}.{name}", errors)
        if entry and "question_types" in entry:
            types = _check_keys(entry["question_types"], f"{code}.question_types", question_type_codes, "code", errors)
            for qt, name in (types or {}).items():
                _check_text(name, f"{code}.question_types.{qt}", errors)
        if entry and "segment_titles" in entry:
            titles = entry["segment_titles"]
            if not isinstance(titles, list):
                errors.append(f"{code}.segment_titles must be a list of titles; got {type(titles).__name__}.")
            else:
                for i, title in enumerate(titles):
                    _check_text(title, f"{code}.segment_titles[{i}]", errors)
        if entry and "questions" in entry:
            questions = _check_keys(entry["questions"], f"{code}.questions", question_type_codes, "code", errors)
            for qt, text in (questions or {}).items():
                _check_text(text, f"{code}.questions.{qt}", errors)
        if entry and "labels" in entry:
            labels = entry["labels"]
            if label_names is not None:
                labels = _check_keys(labels, f"{code}.labels", label_names, "label", errors)
            elif not isinstance(labels, dict):
                errors.append(f"{code}.labels must be an object; got {type(labels).__name__}.")
                labels = None
            for label, help_text in (labels or {}).items():
                own = _check_keys(help_text, f"{code}.labels.{label}", LABEL_FIELDS, "field", errors)
                for name, text in (own or {}).items():
                    if name in LABEL_FIELDS:
                        _check_text(text, f"{code}.labels.{label}.{name}", errors)
    if errors:
        raise ValidationError({"translations": errors})
