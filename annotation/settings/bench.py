"""Settings for the replay benchmark's server (bench/stack.py): production plus its instrumentation.

The only settings that install annotation.settings.bench_server: its URLconf adds the two
reference endpoints under /bench/ to the production URLs, and its middleware,
outermost, reports each request's queries, CPU and garbage-collection time in
response headers. The harness runs plain HTTP on the loopback, so it sets
SECURE_SSL_REDIRECT=0, SECURE_COOKIES=0 and SECURE_HSTS_SECONDS=0.
"""

from annotation.settings.production import *  # noqa: F403
from annotation.settings.production import MIDDLEWARE

ROOT_URLCONF = "annotation.settings.bench_server"
MIDDLEWARE = ["annotation.settings.bench_server.QueryCountMiddleware", *MIDDLEWARE]
