"""Production settings: the base configuration, DEBUG off, behind HTTPS.

The default of ``annotation.wsgi``, ``annotation.asgi`` and the Celery app, so
that a server started without DJANGO_SETTINGS_MODULE either runs hardened or
refuses to start. Plain-HTTP set-ups (a loopback benchmark) turn the HTTPS
parts off with SECURE_SSL_REDIRECT=0, SECURE_COOKIES=0, SECURE_HSTS_SECONDS=0.
Behind a reverse proxy (docs/deployment.md) the proxy's headers say what the
browser asked for: PROXY_SSL_HEADER, USE_X_FORWARDED_HOST, USE_X_FORWARDED_PORT.
"""

import re

from django.core.exceptions import ImproperlyConfigured

from annotation.settings.env import env_bool, env_header, env_int, env_str

# Checked before base is read, whose own check of SECRET_KEY suggests DEBUG=1.
if env_bool("DEBUG", False):
    raise ImproperlyConfigured(
        "DEBUG must be off with annotation.settings.production "
        "(unset DEBUG, or use DJANGO_SETTINGS_MODULE=annotation.settings.base for development)"
    )
if not env_str("SECRET_KEY"):
    raise ImproperlyConfigured("SECRET_KEY is required with annotation.settings.production")

from annotation.settings.base import *  # noqa: F403
from annotation.settings.base import CSRF_TRUSTED_ORIGINS, LOGGING

# --- HTTPS ---------------------------------------------------------------------
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)  # the workers' signed cookie follows it too
CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True

# --- Behind a reverse proxy ----------------------------------------------------
# The proxy terminates TLS and says so in a header that Django then believes for request.is_secure()
# (secure cookies, the HTTPS redirect, CSRF's origin check). Safe only if every request comes through a
# proxy that sets the header itself, replacing any the client sent (deploy/nginx/site.conf.template does);
# PROXY_SSL_HEADER=none for a server that browsers reach directly.
_proxy_ssl_header = env_header("PROXY_SSL_HEADER", "X-Forwarded-Proto")
SECURE_PROXY_SSL_HEADER = (_proxy_ssl_header, "https") if _proxy_ssl_header else None
# The host and port the browser used, when the proxy passes them in X-Forwarded-Host/-Port rather than Host.
USE_X_FORWARDED_HOST = env_bool("USE_X_FORWARDED_HOST", False)
USE_X_FORWARDED_PORT = env_bool("USE_X_FORWARDED_PORT", False)
# CSRF compares these with the Origin header: scheme and host (and port), nothing else. Django checks the
# form only in `manage.py check`, which a gunicorn start does not run.
for _origin in CSRF_TRUSTED_ORIGINS:
    if not re.fullmatch(r"https?://[^/\s?#]+", _origin):
        raise ImproperlyConfigured(
            f"CSRF_TRUSTED_ORIGINS must list origins such as https://study.example.org (no path); got {_origin!r}"
        )

# --- Logging: one JSON object per line, for a log collector --------------------
LOGGING = {
    **LOGGING,
    "formatters": {"json": {"()": "annotation.settings.logformat.JsonFormatter"}},
    "handlers": {"console": {**LOGGING["handlers"]["console"], "formatter": "json"}},
}
