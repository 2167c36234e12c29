"""The worker's pages: /work/ routes to the page the participation's state calls for; staff previews."""

from django.urls import path

from annotation.views import preview, worker

app_name = "worker"
urlpatterns = [
    path("", worker.home, name="home"),
    path("preview/<slug:slug>/", preview.start, name="preview"),
    path("preview/<slug:slug>/restart/", preview.restart, name="preview-restart"),
]
