"""Django's Redis cache, keeping one Redis client per connection pool.

Django's client builds a new ``redis.Redis`` object for every cache call, and
redis-py's constructor fills a table of several hundred response callbacks
each time: on the worker's hot path (the session read of every request) that
was most of the session's cost (bench/profile_session.py). A ``redis.Redis``
is safe to share, so one per pool is enough.
"""

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class _ReusingClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class SharedClientRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _ReusingClient
