"""The worker's pages: /work/ routes to the page the participation's state calls for."""

from django.urls import path

from annotation.views import worker

app_name = "worker"
urlpatterns = [
    path("", worker.home, name="home"),
]
