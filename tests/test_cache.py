"""CACHE_URL gives Django's own Redis cache, which then holds the admins' sessions too.

The settings part runs in a subprocess; the rest needs Redis on 127.0.0.1:6379 and is skipped without it.
"""

import socket
import uuid

import pytest

from tests.test_settings import run_settings

URL = "redis://127.0.0.1:6379/13"


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


needs_redis = pytest.mark.skipif(not _redis_up(), reason="needs Redis on 127.0.0.1:6379")
# cache.clear() empties the whole Redis db: under pytest-xdist one worker runs these tests, one at a time.
pytestmark = pytest.mark.xdist_group("redis-db13")


def test_a_cache_url_gives_djangos_redis_cache_and_cached_sessions():
    code = (
        "import django; django.setup(); from django.conf import settings; from django.core.cache import caches\n"
        "cache = caches['default']; print(f'{type(cache).__module__}.{type(cache).__name__}', settings.SESSION_ENGINE)"
    )
    result = run_settings({"DEBUG": "1", "CACHE_URL": URL}, code)
    assert result.stdout.split() == [
        "django.core.cache.backends.redis.RedisCache",
        "django.contrib.sessions.backends.cached_db",
    ], result.stderr


@pytest.fixture
def redis_cache(settings):
    from django.core.cache import caches

    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": URL,
            "KEY_PREFIX": f"test-{uuid.uuid4().hex}",
        }
    }
    try:
        yield caches["default"]
    finally:
        caches["default"].clear()


@needs_redis
def test_it_stores_reads_and_deletes(redis_cache):
    assert redis_cache.get("missing", "default") == "default"
    redis_cache.set("answer", {"participation_id": 42, "text": "é ✓"}, timeout=60)
    assert redis_cache.get("answer") == {"participation_id": 42, "text": "é ✓"}
    assert redis_cache.add("answer", "other") is False
    redis_cache.delete("answer")
    assert redis_cache.get("answer") is None


@needs_redis
def test_a_session_survives_through_the_cache_and_the_database(redis_cache, db):
    from django.contrib.sessions.backends.cached_db import SessionStore

    session = SessionStore()
    session["participation_id"] = 7
    session.save()
    assert redis_cache.get(SessionStore.cache_key_prefix + session.session_key) is not None  # written to Redis
    assert SessionStore(session.session_key)["participation_id"] == 7
    redis_cache.clear()  # a cold cache: read through to the database
    assert SessionStore(session.session_key)["participation_id"] == 7
