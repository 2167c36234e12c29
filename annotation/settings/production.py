"""Production settings: the base configuration, DEBUG off, behind HTTPS.

The default of ``annotation.wsgi``, ``annotation.asgi`` and the Celery app, so
that a server started without DJANGO_SETTINGS_MODULE either runs hardened or
refuses to start. Plain-HTTP set-ups (a loopback benchmark) turn the HTTPS
parts off with SECURE_SSL_REDIRECT=0, SECURE_COOKIES=0, SECURE_HSTS_SECONDS=0.
"""

from django.core.exceptions import ImproperlyConfigured

from annotation.env import env_bool, env_int, env_str

# Checked before base is read, whose own check of SECRET_KEY suggests DEBUG=1.
if env_bool("DEBUG", False):
    raise ImproperlyConfigured(
        "DEBUG must be off with annotation.settings.production "
        "(unset DEBUG, or use DJANGO_SETTINGS_MODULE=annotation.settings.base for development)"
    )
if not env_str("SECRET_KEY"):
    raise ImproperlyConfigured("SECRET_KEY is required with annotation.settings.production")

from annotation.settings.base import *  # noqa: F403
from annotation.settings.base import LOGGING

# --- HTTPS ---------------------------------------------------------------------
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)  # the workers' signed cookie follows it too
CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")  # the proxy in front terminates TLS
SECURE_CONTENT_TYPE_NOSNIFF = True

# --- Logging: one JSON object per line, for a log collector --------------------
LOGGING = {
    **LOGGING,
    "formatters": {"json": {"()": "annotation.logformat.JsonFormatter"}},
    "handlers": {"console": {**LOGGING["handlers"]["console"], "formatter": "json"}},
}
