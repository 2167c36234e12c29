"""A study's worker-facing texts in one language: the one place that picks them.

A study's own fields (``worker_title``, ``worker_description``,
``consent_text``, ``ai_instruction``, each survey question's ``label`` and ``options``) are its
default texts. ``Study.translations`` gives them per shipped language, any of
them::

    {"de": {"worker_title": "...", "worker_description": "...", "consent_text": "...",
            "survey": {"age": {"label": "Wie alt sind Sie?"},
                       "native": {"label": "...", "options": ["Ja", "Nein"]}}}}

``texts_for(study, language)`` returns what a worker sees, each text
translated where the translation has it and the default otherwise. A survey
option's translation is only its text: the answer stored is still the
study's own option (the value), so answers compare across languages.
Their check: ``annotation.protocol.translations``. (The task's texts: tasks_app.texts.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from annotation.models import Study


@dataclass(frozen=True)
class StudyTexts:
    """What a worker reads of a study, in one language ("" texts: the study has none)."""

    language: str
    worker_title: str
    worker_description: str
    consent_text: str
    ai_instruction: str  # what workers are told about AI tools, with the task's instructions
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
        ai_instruction=_text(translation.get("ai_instruction")) or study.ai_instruction,
        survey=_survey(study, translation.get("survey") or {}),
    )


def consent_text(study: Study, language: str | None) -> str:
    """The consent text a worker of ``study`` reads in ``language`` (what the consent hash is of)."""
    return _text(_translation(study, language).get("consent_text")) or study.consent_text


def ai_instruction_languages(study: Study) -> list[str]:
    """The languages the study's AI-tool instruction has its own text in: the study's language (or the
    default one) for the study's own text, and each translation that gives it."""
    if not (study.ai_instruction or "").strip():
        return []
    own = study.language or settings.LANGUAGE_CODE
    translated = [code for code in (study.translations or {}) if _text(_translation(study, code).get("ai_instruction"))]
    return list(dict.fromkeys([own, *translated]))
