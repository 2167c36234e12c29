"""The shared-client Redis cache behind CACHE_URL (needs Redis on 127.0.0.1:6379; skipped without it)."""

import socket
import uuid

import pytest

from annotation.cache import SharedClientRedisCache

URL = "redis://127.0.0.1:6379/13"


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _redis_up(), reason="needs Redis on 127.0.0.1:6379")


@pytest.fixture
def cache():
    backend = SharedClientRedisCache(URL, {"KEY_PREFIX": f"test-{uuid.uuid4().hex}"})
    yield backend
    backend.clear()


def test_it_stores_reads_and_deletes_like_any_django_cache(cache):
    assert cache.get("missing", "default") == "default"
    cache.set("answer", {"participation_id": 42, "text": "é ✓"}, timeout=60)
    assert cache.get("answer") == {"participation_id": 42, "text": "é ✓"}
    assert cache.add("answer", "other") is False
    cache.delete("answer")
    assert cache.get("answer") is None


def test_one_redis_client_serves_every_call(cache):
    client = cache._cache
    assert client.get_client() is client.get_client(write=True)
    cache.set("k", 1)
    assert cache.get("k") == 1 and len(client._clients) == 1


def test_a_session_survives_through_the_cache_and_the_database(settings, db):
    from django.contrib.sessions.backends.cached_db import SessionStore
    from django.core.cache import caches

    settings.CACHES = {
        "default": {
            "BACKEND": "annotation.cache.SharedClientRedisCache",
            "LOCATION": URL,
            "KEY_PREFIX": f"test-{uuid.uuid4().hex}",
        }
    }
    try:
        session = SessionStore()
        session["participation_id"] = 7
        session.save()
        assert SessionStore(session.session_key)["participation_id"] == 7
        caches["default"].clear()  # a cold cache: read through to the database
        assert SessionStore(session.session_key)["participation_id"] == 7
    finally:
        caches["default"].clear()
