from annotation.models.attention import AttentionCheck, AttentionDecision
from annotation.models.export import ExportJob, ModelRun
from annotation.models.integrity import IntegrityDecision
from annotation.models.participation import (
    FilterDecision,
    Participation,
    ParticipationEvent,
    SurveyResponse,
    Worker,
)
from annotation.models.prolific import ProlificAction, ProlificCall, ProlificGroup
from annotation.models.response import AnswerSpan, Response
from annotation.models.study import Condition, Study

__all__ = [
    "AttentionCheck",
    "AttentionDecision",
    "AnswerSpan",
    "Condition",
    "ExportJob",
    "FilterDecision",
    "IntegrityDecision",
    "ModelRun",
    "Participation",
    "ParticipationEvent",
    "ProlificAction",
    "ProlificCall",
    "ProlificGroup",
    "Response",
    "Study",
    "SurveyResponse",
    "Worker",
]
