"""A study's short survey: its definition, a worker's answers, and when it is due.

A survey is a list of questions (``Study.survey``)::

    [{"key": "age_band", "type": "single", "label": "Your age", "options": ["18-29", "30-49", "50+"]},
     {"key": "languages", "type": "multiple", "label": "Languages you speak", "options": ["English", "German"]},
     {"key": "years", "type": "number", "label": "Years of annotation work", "min": 0, "max": 60},
     {"key": "native", "type": "text", "label": "Your native language", "required": true}]

shown once, before the training step or after the test step
(``Study.survey_placement``). No answer is required unless its question says
so. ``annotation.protocol.survey.validate_definition`` is the one check of a
definition; ``submit`` validates a worker's answers
and stores them as one ``SurveyResponse``, or stores nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import ServiceError
from annotation.models import Participation, Study, SurveyResponse
from annotation.protocol.survey import is_number

MAX_TEXT_ANSWER = 500

Placement = Study.SurveyPlacement


class InvalidSurveyAnswers(ServiceError):
    """The answers do not fit the survey; ``errors`` maps question keys (or ``""``) to messages."""

    code = "invalid_survey"
    status = 400

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" if k else v for k, v in errors.items()))
        self.errors = errors

    def extra(self) -> dict[str, Any]:
        return {"errors": self.errors}


def _clean_answer(q: Mapping[str, Any], value: Any) -> Any:
    """The stored form of one answer; ValueError with the worker-facing message."""
    kind = q["type"]
    if kind == "single":
        if not isinstance(value, str) or value not in q["options"]:
            raise ValueError(_("Choose one of the options."))
        return value
    if kind == "multiple":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v in q["options"] for v in value):
            raise ValueError(_("Choose among the options only."))
        return [o for o in q["options"] if o in value]  # the options' order, each once
    if kind == "number":
        if isinstance(value, str):
            try:
                value = float(value.strip().replace(",", "."))
            except ValueError:
                raise ValueError(_("Give a number.")) from None
        if not is_number(value):
            raise ValueError(_("Give a number."))
        if "min" in q and value < q["min"]:
            raise ValueError(_("Give a number of at least %(min)s.") % {"min": q["min"]})
        if "max" in q and value > q["max"]:
            raise ValueError(_("Give a number of at most %(max)s.") % {"max": q["max"]})
        return int(value) if float(value).is_integer() else value
    if not isinstance(value, str):
        raise ValueError(_("Give a short text."))
    value = value.strip()
    if len(value) > MAX_TEXT_ANSWER:
        raise ValueError(_("Keep the answer under %(n)s characters.") % {"n": MAX_TEXT_ANSWER})
    return value


def _is_blank(value: Any) -> bool:
    return value is None or value == "" or value == [] or (isinstance(value, str) and not value.strip())


def clean_answers(definition: list[dict[str, Any]], answers: Any) -> dict[str, Any]:
    """The answers as stored (unanswered optional questions left out); InvalidSurveyAnswers otherwise."""
    if not isinstance(answers, Mapping):
        raise InvalidSurveyAnswers({"": _("Send the answers as an object: question key -> answer.")})
    keys = {q["key"] for q in definition}
    errors: dict[str, str] = {k: _("There is no such question.") for k in answers if k not in keys}
    cleaned: dict[str, Any] = {}
    for q in definition:
        value = answers.get(q["key"])
        if _is_blank(value):
            if q.get("required"):
                errors[q["key"]] = _("This question needs an answer.")
            continue
        try:
            cleaned[q["key"]] = _clean_answer(q, value)
        except ValueError as exc:
            errors[q["key"]] = str(exc)
    if errors:
        raise InvalidSurveyAnswers(errors)
    return cleaned


def due(participation: Participation) -> str | None:
    """The placement at which this worker owes the survey now (not yet answered), else None."""
    study = participation.study
    if not study.survey:
        return None
    placement = study.survey_placement
    state = participation.state
    if placement == Placement.BEFORE_TRAINING and state != Participation.State.CLAIMED:
        return None
    if placement == Placement.AFTER_TEST and state != Participation.State.COMPLETED:
        return None
    if SurveyResponse.objects.filter(participation=participation, placement=placement).exists():
        return None
    return placement


class SurveyNotDue(ServiceError):
    code = "survey_not_due"
    status = 409


def submit(*, participation: Participation, answers: Any) -> SurveyResponse:
    """Store the worker's answers to the survey now due; nothing is stored if one answer is wrong."""
    placement = due(participation)
    if placement is None:
        raise SurveyNotDue(_("there is no survey to answer now (none, not yet, or already answered)"))
    cleaned = clean_answers(participation.study.survey, answers)
    try:
        with transaction.atomic():
            return SurveyResponse.objects.create(
                participation=participation, placement=placement, answers=cleaned, submitted_at=timezone.now()
            )
    except IntegrityError:  # a double submit: the first one stands
        raise SurveyNotDue(_("the survey has already been answered")) from None
