"""Subject access: everything stored about one participant, as plain data (``manage.py participant_data``)."""

from collections.abc import Sequence
from typing import Any

from django.core import serializers
from django.db.models import Model, QuerySet

from annotation.models import (
    AnswerSpan,
    AttentionDecision,
    AuditEntry,
    ComprehensionAttempt,
    ConsentDecline,
    FilterDecision,
    IntegrityDecision,
    Participation,
    ParticipationEvent,
    ProlificAction,
    ProlificCall,
    ProlificEvent,
    Response,
    SurveyResponse,
    Withdrawal,
    Worker,
)
from annotation.services.state import pseudonyms


class UnknownParticipant(Exception):
    pass


def _rows(queryset: QuerySet[Any] | Sequence[Model]) -> list[dict[str, Any]]:
    return [{"id": r["pk"], **r["fields"]} for r in serializers.serialize("python", queryset)]


def participant_data(*, platform: str, external_id: str) -> dict[str, Any]:
    """Every row that concerns them, table by table (under their pseudonym too, once they withdrew)."""
    ids = (external_id, pseudonyms.pseudonym(platform=platform, external_id=external_id))
    workers = list(Worker.objects.filter(platform=platform, external_id__in=ids))
    if not workers:
        raise UnknownParticipant(f"no {platform} participant with this id is stored")
    participations = Participation.all_objects.filter(worker__in=workers, is_preview=False)
    actions = ProlificAction.objects.filter(participation__in=participations)
    responses = Response.all_objects.filter(participation__in=participations)
    return {
        "worker": _rows(workers),
        "participations": _rows(participations),
        "events": _rows(ParticipationEvent.objects.filter(participation__in=participations)),
        "answers": _rows(responses),
        "answer_spans": _rows(AnswerSpan.objects.filter(response__in=responses)),
        "survey_answers": _rows(SurveyResponse.objects.filter(participation__in=participations)),
        "comprehension_attempts": _rows(ComprehensionAttempt.objects.filter(participation__in=participations)),
        "training_filter_decisions": _rows(FilterDecision.objects.filter(participation__in=participations)),
        "attention_decisions": _rows(AttentionDecision.objects.filter(participation__in=participations)),
        "integrity_decisions": _rows(IntegrityDecision.objects.filter(participation__in=participations)),
        "consent_declines": _rows(ConsentDecline.objects.filter(worker__in=workers)),
        "withdrawals": _rows(Withdrawal.objects.filter(participation__in=participations)),
        "audit_entries": _rows(AuditEntry.objects.filter(participation__in=participations)),
        "prolific_actions": _rows(actions),
        "prolific_calls": _rows(ProlificCall.objects.filter(action__in=actions)),
        "prolific_events": _rows(
            ProlificEvent.objects.filter(participation__in=participations)
            | ProlificEvent.objects.filter(participant_id__in=ids)
        ),
    }
