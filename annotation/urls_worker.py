"""The worker's pages: /work/ routes to the page the participation's state calls for; staff previews."""

from django.urls import path

from annotation.views import consent_survey, preview, worker

app_name = "worker"
urlpatterns = [
    path("", worker.home, name="home"),
    path("consent/", consent_survey.consent_answer, name="consent"),
    path("survey/", consent_survey.survey_answer, name="survey"),
    path("comprehension/", consent_survey.comprehension_answer, name="comprehension"),
    path("preview/<slug:slug>/", preview.start, name="preview"),
    path("preview/<slug:slug>/restart/", preview.restart, name="preview-restart"),
]
