from annotation.models.attention import AttentionCheck, AttentionDecision
from annotation.models.audit import AuditEntry
from annotation.models.export import ExportJob, ModelRun
from annotation.models.integrity import IntegrityDecision
from annotation.models.launch import LaunchOverride
from annotation.models.participation import (
    ComprehensionAttempt,
    ConsentDecline,
    FilterDecision,
    Participation,
    ParticipationEvent,
    SurveyResponse,
    Withdrawal,
    Worker,
)
from annotation.models.plan import AnalysisPlan
from annotation.models.prolific import (
    ProlificAction,
    ProlificCall,
    ProlificEvent,
    ProlificGroup,
    ProlificHookSecret,
    ProlificJob,
    ProlificMessage,
    ProlificSubscription,
)
from annotation.models.rehearsal import RehearsalJob
from annotation.models.response import AnswerSpan, Response
from annotation.models.study import Condition, Study

__all__ = [
    "AnalysisPlan",
    "AttentionCheck",
    "AuditEntry",
    "AttentionDecision",
    "AnswerSpan",
    "ComprehensionAttempt",
    "Condition",
    "ConsentDecline",
    "ExportJob",
    "FilterDecision",
    "IntegrityDecision",
    "LaunchOverride",
    "ModelRun",
    "Participation",
    "ParticipationEvent",
    "ProlificAction",
    "ProlificCall",
    "ProlificEvent",
    "ProlificGroup",
    "ProlificHookSecret",
    "ProlificJob",
    "ProlificMessage",
    "ProlificSubscription",
    "RehearsalJob",
    "Response",
    "Study",
    "SurveyResponse",
    "Withdrawal",
    "Worker",
]
