"""The comprehension check: a worker's attempts, the second chance, and the screen-out.

A study with a comprehension check (``Study.comprehension``, checked by
``annotation.protocol.comprehension``) asks it after consent and before training (and before a
survey placed there). Prolific's rule (docs/prolific.md, "Comprehension check"): a worker who fails
gets a second attempt before being screened out, and a screened-out worker is paid for the time
spent. So:

- ``submit`` records each attempt (``ComprehensionAttempt``) with the keys of the questions answered
  wrongly; a malformed answer stores nothing.
- Failing the first attempt shows which questions were wrong, never the right options (the second
  attempt must still check understanding; the instructions stay on the page to read again).
- Failing the second excludes the worker (``ExclusionKind.COMPREHENSION``): the slot is free again,
  the outcome is ``screened_out`` with its code (``annotation.services.state.outcomes``), and paid time
  ends at the screen-out (``annotation.services.money.pay``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import ServiceError
from annotation.models import ComprehensionAttempt, Participation
from annotation.protocol.comprehension import MAX_ATTEMPTS, wrong_keys
from annotation.services.state import lifecycle

State = Participation.State
SCREEN_OUT_REASON = "failed the comprehension check twice"


class InvalidComprehensionAnswers(ServiceError):
    """The answers do not fit the check; ``errors`` maps question keys (or ``""``) to messages."""

    code = "invalid_comprehension"
    status = 400

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" if k else v for k, v in errors.items()))
        self.errors = errors

    def extra(self) -> dict[str, Any]:
        return {"errors": self.errors}


class ComprehensionNotDue(ServiceError):
    code = "comprehension_not_due"
    status = 409


@dataclass(frozen=True)
class AttemptResult:
    number: int
    passed: bool
    wrong: list[str]
    screened_out: bool

    @property
    def attempts_left(self) -> int:
        return 0 if self.passed or self.screened_out else MAX_ATTEMPTS - self.number


def attempts(participation: Participation) -> list[ComprehensionAttempt]:
    return list(ComprehensionAttempt.objects.filter(participation=participation).order_by("number"))


def due(participation: Participation) -> bool:
    """Whether the worker must (still) pass the study's comprehension check before going on."""
    if not participation.study.comprehension or participation.state != State.CLAIMED:
        return False
    return not ComprehensionAttempt.objects.filter(participation=participation, passed=True).exists()


def last_failed(participation: Participation) -> ComprehensionAttempt | None:
    """The failed attempt the worker is now retrying, if any (its ``wrong`` keys are shown)."""
    done = attempts(participation)
    return done[-1] if done and not done[-1].passed else None


def clean_answers(definition: list[dict[str, Any]], answers: Any) -> dict[str, list[str]]:
    """Each question's chosen option(s) as a list in the options' order; InvalidComprehensionAnswers otherwise.

    Every question needs an answer: a blank one is refused, not marked wrong, so a slip of the mouse does
    not spend an attempt.
    """
    if not isinstance(answers, Mapping):
        raise InvalidComprehensionAnswers({"": _("Send the answers as an object: question key -> answer.")})
    keys = {q["key"] for q in definition}
    errors: dict[str, str] = {k: _("There is no such question.") for k in answers if k not in keys}
    cleaned: dict[str, list[str]] = {}
    for q in definition:
        value = answers.get(q["key"])
        chosen = [value] if isinstance(value, str) else value
        if not chosen:
            errors[q["key"]] = _("This question needs an answer.")
        elif not isinstance(chosen, list) or not all(isinstance(v, str) and v in q["options"] for v in chosen):
            errors[q["key"]] = _("Choose among the options only.")
        elif not q.get("multiple") and len(chosen) != 1:
            errors[q["key"]] = _("Choose one of the options.")
        else:
            cleaned[q["key"]] = [o for o in q["options"] if o in chosen]
    if errors:
        raise InvalidComprehensionAnswers(errors)
    return cleaned


def submit(*, participation: Participation, answers: Any) -> AttemptResult:
    """Record an attempt; after a second failed one, screen the worker out (slot freed, code given)."""
    if not due(participation):
        raise ComprehensionNotDue(_("there is no comprehension check to answer now (none, or already passed)"))
    definition = participation.study.comprehension
    cleaned = clean_answers(definition, answers)
    wrong = wrong_keys(definition, cleaned)
    number = ComprehensionAttempt.objects.filter(participation=participation).count() + 1
    if number > MAX_ATTEMPTS:  # screened out already (a stale page): nothing more to record
        raise ComprehensionNotDue(_("there is no comprehension check to answer now (none, or already passed)"))
    screened_out = bool(wrong) and number == MAX_ATTEMPTS
    now = timezone.now()
    try:
        with transaction.atomic():
            ComprehensionAttempt.objects.create(
                participation=participation, number=number, answers=cleaned, wrong=wrong, passed=not wrong, at=now
            )
            if screened_out:
                lifecycle.exclude(
                    participation, reason=SCREEN_OUT_REASON, kind=Participation.ExclusionKind.COMPREHENSION, at=now
                )
            else:
                lifecycle.touch(participation, at=now)
    except (IntegrityError, lifecycle.InvalidTransition):  # a double submit: the first one stands
        raise ComprehensionNotDue(_("this attempt has already been answered")) from None
    return AttemptResult(number=number, passed=not wrong, wrong=wrong, screened_out=screened_out)


def screened_out_count(study_id: int) -> int:
    """Workers of the study screened out by the comprehension check (previews left out)."""
    return Participation.objects.filter(
        study_id=study_id, state=State.EXCLUDED, exclusion_kind=Participation.ExclusionKind.COMPREHENSION
    ).count()
