"""The JSON API: studies (admins), the worker's session, reports (researchers)."""
from django.urls import include, path

urlpatterns = [
    path("", include("annotation.api.study_urls")),
    path("session/", include("annotation.api.session_urls")),
    path("reports/", include("annotation.api.report_urls")),
]
