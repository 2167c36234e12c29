"""The check of a study's translations (``Study.translations``): the model's clean, hence the admin and the API.

It refuses unknown languages, fields and question keys, options that do not match the question's,
and anything that is not text, with a message that names the place. Picking a worker's texts from
them: ``annotation.services.texts.study_texts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

TEXT_FIELDS = ("worker_title", "worker_description", "consent_text", "ai_instruction")
QUESTION_FIELDS = ("label", "options")
MAX_TEXT_LENGTH = 20_000


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
