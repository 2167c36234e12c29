"""gunicorn's configuration for one app node: ``gunicorn -c deploy/gunicorn.conf.py annotation.wsgi:application``.

The same file on every node (tests/deploy/localstack.py, the Dockerfile); what differs comes from the
environment, read strictly like the app's settings:

- GUNICORN_BIND (default 127.0.0.1:8000): where nginx reaches this node;
- GUNICORN_WORKERS (4) processes of GUNICORN_THREADS (4) threads: what the benchmarks use on 2 cores
  (docs/performance.md); the gthread worker keeps nginx's upstream connections alive;
- GUNICORN_ACCESS_LOG (off): 1 writes one line per request to stdout;
- FORWARDED_ALLOW_IPS (gunicorn's own; default 127.0.0.1,::1): the proxies allowed to set
  X-Forwarded-*; the app itself trusts PROXY_SSL_HEADER (annotation/settings/production.py).
"""

import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"{name} must be a positive integer; got {value!r}")
    return int(value)


bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = _int("GUNICORN_WORKERS", 4)
threads = _int("GUNICORN_THREADS", 4)
# Longer than nginx keeps an idle upstream connection (60 s), so that nginx, not gunicorn, closes it.
keepalive = 120
timeout = 30  # a request stuck this long has its process restarted
graceful_timeout = 30  # on SIGTERM, requests in flight get this long to finish
backlog = 512
accesslog = "-" if os.environ.get("GUNICORN_ACCESS_LOG", "").strip().lower() in ("1", "true", "yes", "on") else None
errorlog = "-"
