"""The consent step: a study's consent text, agreed to or declined on the entry page.

A worker of a study with a consent text agrees before any slot is theirs: the
entry page shows the text, and agreeing is what claims the slot
(annotation.services.admission.entry records the agreement in the claim's transaction).
Agreeing records the time and the SHA-256 of the exact text shown on the
participation; a page that showed an older text (the researcher edited it in
between) is refused, so the hash always names what the worker read.
Declining there takes no slot: ``decline_at_entry`` records a ConsentDecline
(counted by the statement) and the worker gets the study's ``declined`` code.

A participation that still owes the answer (a staff preview, which has no
entry page) answers on /work/: ``required`` says so, ``agree`` records it and
``decline`` ends the participation as ``declined``, which holds no slot.
"""

from __future__ import annotations

import hashlib

from django.utils import timezone
from django.utils.translation import gettext

from annotation.errors import ServiceError
from annotation.models import ConsentDecline, Participation, Study, Worker
from annotation.services.state import lifecycle
from annotation.services.texts import study_texts

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


def check_shown(study: Study, shown_hash: str | None, language: str | None = None) -> None:
    """Refuse an answer to a text other than the one now set (``shown_hash`` None: not checked)."""
    if shown_hash is not None and shown_hash != text_hash(study_texts.consent_text(study, language)):
        raise ConsentError("consent_changed", gettext("the consent text has changed since it was shown: read it again"))


def _check_answerable(participation: Participation, shown_hash: str | None, language: str | None = None) -> None:
    if not is_asked(participation.study):
        raise ConsentError("no_consent", gettext("this study has no consent step"))
    if participation.state != State.CLAIMED or participation.consented_at is not None:
        raise ConsentError("consent_answered", gettext("the consent text has already been answered"))
    check_shown(participation.study, shown_hash, language)


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


def has_declined(*, worker: Worker | None, study: Study) -> bool:
    """Whether the worker declined this study's consent text at its entry page."""
    return worker is not None and ConsentDecline.objects.filter(worker=worker, study=study).exists()


def decline_at_entry(*, worker: Worker, study: Study, platform_data: dict | None = None) -> None:
    """The worker said no on the entry page, before any slot: record it once (no slot, no participation)."""
    if not is_asked(study):
        raise ConsentError("no_consent", gettext("this study has no consent step"))
    ConsentDecline.objects.get_or_create(
        worker=worker, study=study, defaults={"at": timezone.now(), "platform_data": platform_data or {}}
    )


def declined_count(study: Study) -> int:
    """The workers who declined the study's text: at its entry page, or (a participation) afterwards."""
    at_entry = ConsentDecline.objects.filter(study=study).count()
    return at_entry + Participation.objects.filter(study=study, state=State.DECLINED).count()
