"""Crowd-platform entry: /join/<study slug>/?<platform parameters>."""

from django.urls import path

from annotation.views import entry

app_name = "entry"
urlpatterns = [
    path("join/<slug:slug>/", entry.join, name="join"),
]
