"""The check of a study's survey definition (``Study.survey``): the model's clean, hence the admin and the API.

A survey is a list of questions ``{"key", "type": single|multiple|number|text, "label", "options",
"required", "min", "max", "demographic"}``; the worker's answers to one: ``annotation.services.admission.survey``.
``demographic: true`` marks a question the human-evaluation statement summarises as counts, never per
person (annotation.reporting.demographics).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError

TYPES = ("single", "multiple", "number", "text")
MAX_QUESTIONS = 20
MAX_OPTIONS = 30
MAX_LABEL = 300
KEY_MAX = 40
QUESTION_FIELDS = {"key", "type", "label", "options", "required", "min", "max", "demographic"}


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def key_errors(where: str, key: Any, seen: set[str]) -> list[str]:
    """A question's key: a short identifier, unique in its list (``seen`` collects the keys so far)."""
    if not isinstance(key, str) or not key.isidentifier() or len(key) > KEY_MAX:
        return [f"{where}: key must be a short identifier (letters, digits, _), got {key!r}."]
    if key in seen:
        return [f"{where}: the key {key!r} is used twice."]
    seen.add(key)
    return []


def _question_errors(i: int, q: Any, seen: set[str]) -> list[str]:
    where = f"Question {i + 1}"
    if not isinstance(q, Mapping):
        return [f"{where}: give an object with key, type and label."]
    errors = []
    extra = sorted(set(q) - QUESTION_FIELDS)
    if extra:
        errors.append(f"{where}: unknown field(s) {', '.join(extra)}.")
    errors += key_errors(where, q.get("key"), seen)
    kind = q.get("type")
    if kind not in TYPES:
        errors.append(f"{where}: type must be one of {', '.join(TYPES)}, got {kind!r}.")
    label = q.get("label")
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
        errors.append(f"{where}: label is the question's text (1 to {MAX_LABEL} characters).")
    for flag in ("required", "demographic"):
        if flag in q and not isinstance(q[flag], bool):
            errors.append(f"{where}: {flag} is true or false.")
    options = q.get("options")
    if kind in ("single", "multiple"):
        if (
            not isinstance(options, list)
            or not 2 <= len(options) <= MAX_OPTIONS
            or not all(isinstance(o, str) and o.strip() for o in options)
        ):
            errors.append(f"{where}: a {kind} choice needs 2 to {MAX_OPTIONS} options, each a non-empty text.")
        elif len(set(options)) != len(options):
            errors.append(f"{where}: the options must differ.")
    elif options is not None:
        errors.append(f"{where}: only single and multiple choices have options.")
    for bound in ("min", "max"):
        if bound in q and (kind != "number" or not is_number(q[bound])):
            errors.append(f"{where}: {bound} is a number, for number questions only.")
    if kind == "number" and is_number(q.get("min")) and is_number(q.get("max")) and q["min"] > q["max"]:
        errors.append(f"{where}: min is above max.")
    return errors


def validate_definition(definition: Any) -> None:
    """ValidationError listing everything wrong with a survey definition (empty or None: no survey)."""
    if definition in (None, ""):
        return
    if not isinstance(definition, list):
        raise ValidationError("A survey is a JSON list of questions.")
    if len(definition) > MAX_QUESTIONS:
        raise ValidationError(f"A survey has at most {MAX_QUESTIONS} questions.")
    seen: set[str] = set()
    errors = [e for i, q in enumerate(definition) for e in _question_errors(i, q, seen)]
    if errors:
        raise ValidationError(errors)
