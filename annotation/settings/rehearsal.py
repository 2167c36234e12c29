"""A rehearsal's server and steps (``rehearse_study``): the production settings, on the scratch database the
rehearsal names, with the clock the rehearsal moves (``annotation.rehearsal.clock``).

Only this module defines REHEARSAL_CLOCK_FILE; production and base do not, so no environment of a real
deployment can move its time. The rehearsal runs over plain HTTP on 127.0.0.1 and sets what production
reads for that in the environment it starts its processes with (SECURE_SSL_REDIRECT=0, SECURE_COOKIES=0,
SECURE_HSTS_SECONDS=0, PROXY_SSL_HEADER=none, ALLOWED_HOSTS=127.0.0.1).
"""

from django.core.exceptions import ImproperlyConfigured

from annotation.settings.env import env_str
from annotation.settings.production import *  # noqa: F403

REHEARSAL_CLOCK_FILE = env_str("REHEARSAL_CLOCK_FILE") or ""
if not REHEARSAL_CLOCK_FILE:
    raise ImproperlyConfigured("REHEARSAL_CLOCK_FILE is required with annotation.settings.rehearsal")
