"""Admins' API: /api/studies/, /api/conditions/, /api/participations/, /api/workers/, /api/attention-checks/,
/api/participants/export/, /api/participants/withdraw/, /api/studies/{id}/prolific/{operation}/,
/api/studies/{id}/prolific-messages/."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from annotation.api import attention, prolific, rights, studies

router = SimpleRouter()
router.register("studies", studies.StudyViewSet, basename="study")
router.register("conditions", studies.ConditionViewSet, basename="condition")
router.register("participations", studies.ParticipationViewSet, basename="participation")
router.register("workers", studies.WorkerViewSet, basename="worker")
router.register("attention-checks", attention.AttentionCheckViewSet, basename="attention-check")

urlpatterns = [
    path(
        "studies/<int:id>/prolific/<str:operation>/",
        prolific.ProlificOperationView.as_view(),
        name="study-prolific",
    ),
    path("studies/<int:id>/prolific-messages/", prolific.ProlificMessageView.as_view(), name="study-prolific-messages"),
    path("participants/export/", studies.ParticipantExportView.as_view(), name="participant-export"),
    path("participants/withdraw/", rights.WithdrawalView.as_view(), name="participant-withdraw"),
    *router.urls,
]
