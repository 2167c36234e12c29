"""Settings for the test suite: the base settings, with DEBUG on unless the environment turns it off.

The environment still chooses the database (DATABASE_URL) and the broker.
"""

import os

os.environ.setdefault("DEBUG", "1")

from annotation.settings.base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast users in tests
# Each pytest-xdist worker (PYTEST_XDIST_WORKER=gw0, gw1, ...) has a database of its own, whose ids start
# at 1 like the others': uploads and exports named after those ids get a folder of its own too.
MEDIA_ROOT = BASE_DIR / "test-artifacts" / "media" / os.environ.get("PYTEST_XDIST_WORKER", "")  # noqa: F405
# WhiteNoise warns about a missing STATIC_ROOT; tests serve static files through the finders.
STATIC_ROOT = BASE_DIR / "test-artifacts" / "static"  # noqa: F405
STATIC_ROOT.mkdir(parents=True, exist_ok=True)

from annotation.settings.env import env_int  # noqa: E402

# Test-only: each export job sleeps this long once claimed (heartbeats go on), so that the Celery
# integration tests can kill its worker mid-job. Off (0) unless the test sets it for its worker.
EXPORT_TEST_DELAY_SECONDS = env_int("EXPORT_TEST_DELAY_SECONDS", 0, minimum=0)
