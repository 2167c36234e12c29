"""The worker's session API under /api/session/ (see annotation.api.session)."""

from django.urls import path

from annotation.api import session

app_name = "session"
urlpatterns = [
    path("current/", session.CurrentView.as_view(), name="current"),
    path("consent/", session.ConsentView.as_view(), name="consent"),
    path("survey/", session.SurveyView.as_view(), name="survey"),
    path("comprehension/", session.ComprehensionView.as_view(), name="comprehension"),
    path("start/", session.StartView.as_view(), name="start"),
    path("submit/", session.SubmitView.as_view(), name="submit"),
    path("skip/", session.SkipView.as_view(), name="skip"),
    path("progress/", session.ProgressView.as_view(), name="progress"),
    path("events/", session.EventView.as_view(), name="events"),
    path("items/<int:item_id>/", session.ItemView.as_view(), name="item"),
    path("items/<int:item_id>/reveal/", session.RevealView.as_view(), name="reveal"),
]
