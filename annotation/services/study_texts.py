"""A study's worker-facing texts in one language: the one place that picks them, with their validation.

A study's own fields (``worker_title``, ``worker_description``,
``consent_text``, each survey question's ``label`` and ``options``) are its
default texts. ``Study.translations`` gives them per shipped language, any of
them::

    {"de": {"worker_title": "...", "worker_description": "...", "consent_text": "...",
            "survey": {"age": {"label": "Wie alt sind Sie?"},
                       "native": {"label": "...", "options": ["Ja", "Nein"]}}}}

``texts_for(study, language)`` returns what a worker sees, each text
translated where the translation has it and the default otherwise. A survey
option's translation is only its text: the answer stored is still the
study's own option (the value), so answers compare across languages.
``validate_translations`` refuses unknown languages, fields and question keys,
options that do not match the question's, and anything that is not text, with
a message that names the place. (The task's texts: tasks_app.texts.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError

if TYPE_CHECKING:
    from annotation.models import Study

TEXT_FIELDS = ("worker_title", "worker_description", "consent_text")
QUESTION_FIELDS = ("label", "options")
MAX_TEXT_LENGTH = 20_000


@dataclass(frozen=True)
class StudyTexts:
    """What a worker reads of a study, in one language ("" texts: the study has none)."""

    language: str
    worker_title: str
    worker_description: str
    consent_text: str
    # The survey's questions as defined, each with its label translated and ``choices``: (value, text) pairs.
    survey: list[dict[str, Any]] = field(default_factory=list)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _translation(study: Study, language: str | None) -> Mapping[str, Any]:
    if not language or not isinstance(study.translations, dict):
        return {}
    return study.translations.get(language) or {}


def _survey(study: Study, own: Mapping[str, Any]) -> list[dict[str, Any]]:
    questions = []
    for q in study.survey or []:
        mine = own.get(q.get("key")) or {}
        options = list(q.get("options") or [])
        texts = mine.get("options")
        if not (isinstance(texts, list) and len(texts) == len(options)):
            texts = options
        questions.append(
            {
                **q,
                "label": _text(mine.get("label")) or q.get("label", ""),
                "choices": list(zip(options, texts, strict=True)),
            }
        )
    return questions


def texts_for(study: Study, language: str | None) -> StudyTexts:
    """The study's texts in ``language``, each falling back to the study's own text."""
    translation = _translation(study, language)
    return StudyTexts(
        language=language or "",
        worker_title=_text(translation.get("worker_title")) or study.worker_title,
        worker_description=_text(translation.get("worker_description")) or study.worker_description,
        consent_text=_text(translation.get("consent_text")) or study.consent_text,
        survey=_survey(study, translation.get("survey") or {}),
    )


def consent_text(study: Study, language: str | None) -> str:
    """The consent text a worker of ``study`` reads in ``language`` (what the consent hash is of)."""
    return _text(_translation(study, language).get("consent_text")) or study.consent_text


def _check_text(value: object, where: str, errors: list[str]) -> None:
    if not isinstance(value, str):
        errors.append(f"{where} must be text; got {type(value).__name__}.")
    elif len(value) > MAX_TEXT_LENGTH:
        errors.append(f"{where} is longer than {MAX_TEXT_LENGTH} characters.")


def _check_keys(value: object, where: str, known: list[str], what: str, errors: list[str]) -> dict | None:
    if not isinstance(value, dict):
        errors.append(f"{where} must be an object; got {type(value).__name__}.")
        return None
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        listed = ", ".join(known) if known else "none"
        errors.append(f"{where}: unknown {what} {', '.join(unknown)} (known: {listed}).")
    return value


def _check_question(value: object, where: str, question: Mapping[str, Any], errors: list[str]) -> None:
    own = _check_keys(value, where, list(QUESTION_FIELDS), "field", errors)
    if own is None:
        return
    if "label" in own:
        _check_text(own["label"], f"{where}.label", errors)
    if "options" in own:
        options = question.get("options") or []
        texts = own["options"]
        if not options:
            errors.append(f"{where}.options: the question has no options.")
        elif not isinstance(texts, list) or len(texts) != len(options):
            errors.append(f"{where}.options must list {len(options)} texts, one per option, in the question's order.")
        elif not all(isinstance(t, str) and t.strip() for t in texts):
            errors.append(f"{where}.options must each be a non-empty text.")
        elif len(set(texts)) != len(texts):
            errors.append(f"{where}.options must differ.")


def validate_translations(value: object, *, survey: object = ()) -> None:
    """Raise ValidationError listing every problem of a ``Study.translations`` value (``survey``: the
    study's survey definition, whose question keys and options the translations must match)."""
    if value in (None, {}):
        return
    languages = [code for code, _ in settings.LANGUAGES]
    listed = survey if isinstance(survey, list) else []
    questions = {q["key"]: q for q in listed if isinstance(q, dict) and isinstance(q.get("key"), str)}
    errors: list[str] = []
    top = _check_keys(value, "Translations", languages, "language", errors)
    for code, texts in (top or {}).items():
        if code not in languages:
            continue
        entry = _check_keys(texts, code, [*TEXT_FIELDS, "survey"], "field", errors)
        for name, text in (entry or {}).items():
            if name in TEXT_FIELDS:
                _check_text(text, f"{code}.{name}", errors)
        if entry and "survey" in entry:
            own = _check_keys(entry["survey"], f"{code}.survey", list(questions), "question", errors)
            for key, question in (own or {}).items():
                if key in questions:
                    _check_question(question, f"{code}.survey.{key}", questions[key], errors)
    if errors:
        raise ValidationError({"translations": errors})
