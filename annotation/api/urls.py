"""The JSON API: studies (admins) and reports (researchers); the worker's session is mounted first in
the root URLconf (annotation.urls)."""

from django.urls import include, path

urlpatterns = [
    path("", include("annotation.api.study_urls")),
    path("reports/", include("annotation.api.report_urls")),
]
