"""Settings, one module per environment, chosen with DJANGO_SETTINGS_MODULE.

- ``base``: the whole configuration from the environment; development and the
  demo (``manage.py``'s default)
- ``production``: base with DEBUG refused, SECRET_KEY required, the HTTPS
  hardening and JSON logs (the default of the WSGI, ASGI and Celery apps)
- ``test``: the test suite (pyproject.toml)
- ``bench``: production plus the replay benchmark's instrumentation and
  reference endpoints (bench/stack.py)

Beside them, helpers that are no settings: ``env`` (strict parsing of the environment),
``logformat`` (the JSON log format LOGGING names) and ``bench_server`` (the bench settings'
URLconf and middleware).
"""

import os

from django.core.exceptions import ImproperlyConfigured

# Naming the package itself would give Django empty settings and a misleading error about SECRET_KEY.
if os.environ.get("DJANGO_SETTINGS_MODULE") == "annotation.settings":
    raise ImproperlyConfigured(
        "DJANGO_SETTINGS_MODULE=annotation.settings names no settings: use annotation.settings.production, "
        "annotation.settings.base (development), annotation.settings.test or annotation.settings.bench"
    )
