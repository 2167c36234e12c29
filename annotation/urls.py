"""Root URLconf.

- /               the front page (annotation.views.home)
- /join/<slug>/   crowd-platform entry (annotation.urls_entry)
- /work/          the worker's pages (annotation.urls_worker)
- /dashboard/     admins' progress and results (annotation.urls_dashboard)
- /hooks/prolific/ Prolific's signed webhooks (annotation.views.prolific_hooks)
- /jsi18n/<code>/ Django's JavaScript translation catalog for the worker pages (annotation.web.locale)
- /api/session/   the worker's session API (annotation.api.session_urls), first: every worker request
- /api/           the rest of the JSON API, described at /api/schema/ (annotation.api.urls)

``handler500`` answers 503 instead when the error is a database that cannot be
reached (annotation.web.unavailable).
"""

from typing import Any

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny

from annotation.views import prolific_hooks
from annotation.views.home import home
from annotation.web.locale import javascript_catalog


class FaviconRedirect(RedirectView):
    """The icon's URL is looked up per request: with the manifest storage it exists only after collectstatic,
    which an import of the URLs must not need."""

    def get_redirect_url(self, *args: Any, **kwargs: Any) -> str | None:
        return static("favicon.svg")


urlpatterns = [
    # First: URLs resolve by trying patterns in order, and these are a crowd worker's every request.
    path("api/session/", include("annotation.api.session_urls")),
    path("admin/", admin.site.urls),
    # The API's description is public, as the code it is generated from: it holds no data, and the worker's
    # session API it documents is a crowd worker's.
    path("api/schema/", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[AllowAny]),
        name="api-docs",
    ),
    path("api/", include("annotation.api.urls")),
    path("work/", include("annotation.urls_worker")),
    path("dashboard/", include("annotation.urls_dashboard")),
    path("hooks/prolific/", prolific_hooks.receive, name="prolific-hooks"),
    path("jsi18n/<str:language>/", javascript_catalog, name="jsi18n"),
    path("", home, name="home"),
    # Browsers ask for /favicon.ico on pages without a <link rel="icon"> (the admin, a JSON response).
    path("favicon.ico", FaviconRedirect.as_view(permanent=True), name="favicon"),
    path("", include("annotation.urls_entry")),
]

handler500 = "annotation.web.unavailable.server_error"  # a database that is away: 503, not a 500
