"""The JSON API: studies (admins) and reports (researchers); the worker's session is mounted first in
the root URLconf (annotation.urls).

Last, a catch-all: an address under /api/ that matches no route (an unknown path, or an id that is not
an integer) is a 404 in the API's one error shape, not Django's HTML page, in development too.
"""

from django.urls import include, path, re_path

from annotation.api.errors import not_found

urlpatterns = [
    path("", include("annotation.api.study_urls")),
    path("reports/", include("annotation.api.report_urls")),
    re_path(r"^.*$", not_found, name="api-not-found"),
]
