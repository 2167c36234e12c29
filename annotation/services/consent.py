"""The consent step: a study's consent text, shown right after entry, agreed to or declined.

A worker of a study with a consent text must agree before anything else (the
start page, the survey, the steps): ``required`` says whether they still owe
it. Agreeing records the time and the SHA-256 of the exact text shown on the
participation; a page that showed an older text (the researcher edited it in
between) is refused, so the hash always names what the worker read.
Declining ends the participation as ``declined``, which holds no slot, and
gives it the study's ``declined`` code (annotation.services.outcomes).
"""

from __future__ import annotations

import hashlib

from django.utils import timezone
from django.utils.translation import gettext

from annotation.errors import ServiceError
from annotation.models import Participation, Study
from annotation.services import lifecycle, study_texts

State = Participation.State


class ConsentError(ServiceError):
    code = "consent_error"
    status = 409

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


def text_hash(text: str) -> str:
    """SHA-256 (hex) of the consent text exactly as stored and shown."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_asked(study: Study) -> bool:
    """Whether the study asks its workers for consent (a text is always set then: Study.clean)."""
    return study.consent_required and bool(study.consent_text.strip())


def required(participation: Participation) -> bool:
    """Whether the worker must still answer the consent text before anything else."""
    return is_asked(participation.study) and participation.consented_at is None and participation.state == State.CLAIMED


def _check_answerable(participation: Participation, shown_hash: str | None, language: str | None = None) -> None:
    if not is_asked(participation.study):
        raise ConsentError("no_consent", gettext("this study has no consent step"))
    if participation.state != State.CLAIMED or participation.consented_at is not None:
        raise ConsentError("consent_answered", gettext("the consent text has already been answered"))
    if shown_hash is not None and shown_hash != text_hash(study_texts.consent_text(participation.study, language)):
        raise ConsentError("consent_changed", gettext("the consent text has changed since it was shown: read it again"))


def agree(participation: Participation, *, shown_hash: str | None = None, language: str | None = None) -> None:
    """Record the worker's agreement to the text now set (``shown_hash``: the text their page showed), in
    ``language``: the hash recorded is of the text shown in that language (Study.translations)."""
    _check_answerable(participation, shown_hash, language)
    now = timezone.now()
    digest = text_hash(study_texts.consent_text(participation.study, language))
    updated = Participation.all_objects.filter(  # all_objects: a staff preview consents too
        pk=participation.pk, state=State.CLAIMED, consented_at__isnull=True
    ).update(consented_at=now, consent_hash=digest, last_activity_at=now)
    if not updated:
        raise ConsentError("consent_answered", gettext("the consent text has already been answered"))
    participation.consented_at, participation.consent_hash, participation.last_activity_at = now, digest, now


def decline(participation: Participation) -> None:
    """The worker said no: the participation ends as declined (its slot is free again)."""
    _check_answerable(participation, None)
    try:
        lifecycle.transition(participation, to_state=State.DECLINED, reason="declined the consent text")
    except lifecycle.InvalidTransition:
        raise ConsentError("consent_answered", gettext("the consent text has already been answered")) from None
    lifecycle.give_completion_code(participation)
