"""The check of a study's comprehension check (``Study.comprehension``), and how an attempt is marked.

A comprehension check is a list of questions on the instructions, each with its options and the right
option(s)::

    [{"key": "what", "label": "What do you mark in each sentence?",
      "options": ["People's names", "Places", "Dates"], "correct": ["People's names"]},
     {"key": "which", "label": "Which may you skip?", "multiple": true,
      "options": ["None", "Unclear items", "Long items"], "correct": ["Unclear items"]}]

A question with ``"multiple": true`` is answered with any set of options and is right when that set is
exactly ``correct``; otherwise one option is chosen and exactly one is correct. Prolific's rule
(docs/prolific.md, "Comprehension check"): a worker who fails gets a second attempt before being
screened out, hence ``MAX_ATTEMPTS``. The attempts themselves: ``annotation.services.admission.comprehension``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError

from annotation.protocol.survey import key_errors

MAX_ATTEMPTS = 2
MAX_QUESTIONS = 10
MAX_OPTIONS = 10
MAX_LABEL = 300
QUESTION_FIELDS = {"key", "label", "options", "correct", "multiple"}


def _question_errors(i: int, q: Any, seen: set[str]) -> list[str]:
    where = f"Question {i + 1}"
    if not isinstance(q, Mapping):
        return [f"{where}: give an object with key, label, options and correct."]
    errors = []
    extra = sorted(set(q) - QUESTION_FIELDS)
    if extra:
        errors.append(f"{where}: unknown field(s) {', '.join(extra)}.")
    errors += key_errors(where, q.get("key"), seen)
    label = q.get("label")
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
        errors.append(f"{where}: label is the question's text (1 to {MAX_LABEL} characters).")
    multiple = q.get("multiple", False)
    if not isinstance(multiple, bool):
        errors.append(f"{where}: multiple is true or false.")
    options = q.get("options")
    if (
        not isinstance(options, list)
        or not 2 <= len(options) <= MAX_OPTIONS
        or not all(isinstance(o, str) and o.strip() for o in options)
    ):
        errors.append(f"{where}: give 2 to {MAX_OPTIONS} options, each a non-empty text.")
        return errors
    if len(set(options)) != len(options):
        errors.append(f"{where}: the options must differ.")
    correct = q.get("correct")
    if not isinstance(correct, list) or not correct or not all(isinstance(c, str) for c in correct):
        errors.append(f"{where}: correct is the list of the right option(s), at least one.")
    elif unknown := [c for c in correct if c not in options]:
        errors.append(f"{where}: correct names options that are not offered: {', '.join(map(repr, unknown))}.")
    elif len(set(correct)) != len(correct):
        errors.append(f"{where}: correct names an option twice.")
    elif multiple is False and len(correct) != 1:
        errors.append(f'{where}: a one-choice question has exactly one correct option (or set "multiple": true).')
    elif multiple is True and len(correct) == len(options):
        errors.append(f"{where}: every option is correct, so the question checks nothing.")
    return errors


def validate_definition(definition: Any) -> None:
    """ValidationError listing everything wrong with a comprehension check (empty or None: no check)."""
    if definition in (None, ""):
        return
    if not isinstance(definition, list):
        raise ValidationError("A comprehension check is a JSON list of questions.")
    if len(definition) > MAX_QUESTIONS:
        raise ValidationError(f"A comprehension check has at most {MAX_QUESTIONS} questions.")
    seen: set[str] = set()
    errors = [e for i, q in enumerate(definition) for e in _question_errors(i, q, seen)]
    if errors:
        raise ValidationError(errors)


def is_right(question: Mapping[str, Any], answer: list[str]) -> bool:
    """Whether ``answer`` (the chosen options) is exactly the question's right option(s)."""
    return set(answer) == set(question["correct"])


def wrong_keys(definition: list[dict[str, Any]], answers: Mapping[str, list[str]]) -> list[str]:
    """The keys of the questions answered wrongly, in the check's order (an unanswered one is wrong)."""
    return [q["key"] for q in definition if not is_right(q, answers.get(q["key"], []))]
