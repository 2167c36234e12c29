"""The project's URLs and one more without a rule: the role x URL walk must name it."""

from django.http import HttpResponse
from django.urls import include, path

urlpatterns = [
    path("", include("annotation.urls")),
    path("dashboard-new/", lambda request: HttpResponse("a page nobody gave a rule"), name="unruled"),
]
