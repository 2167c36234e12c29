"""Base settings: the whole configuration, read from the environment.

This is what development and the one-command demo run (``manage.py``'s
default): with ``DEBUG=1`` and no other variable the app uses an SQLite file in
the project folder and runs Celery tasks eagerly in-process. Everything that
differs between a laptop and a deployment comes from the environment
(docs/deployment.md, "Configuration"); ``production`` adds the hardening that
only makes sense behind HTTPS, ``test`` and ``bench`` adjust this for the test
suite and the replay benchmark.
"""

import hmac
import re
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from annotation.settings.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
APP_VERSION = "0.1.0"

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off (set DEBUG=1 for local development)")
    SECRET_KEY = "insecure-development-key-only-used-with-DEBUG-on"

# The key of the keyed hash (HMAC-SHA256) that replaces a participant's platform identifier when they
# withdraw or their study's retention ends (annotation.services.rights, docs/participants.md). Only the
# environment holds it: with it, a returning withdrawn worker is still recognised (one try per task).
# Unset, it is derived from SECRET_KEY (also only in the environment), so no running deployment breaks;
# set it to keep the pseudonyms stable when SECRET_KEY is rotated.
PSEUDONYM_KEY = env_str("PSEUDONYM_KEY") or hmac.new(SECRET_KEY.encode(), b"pseudonym-key", "sha256").hexdigest()
# Days platform identifiers are kept after a study closes and its Prolific operations are done.
IDENTIFIER_RETENTION_DAYS = env_int("IDENTIFIER_RETENTION_DAYS", 90, minimum=1)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from here: /api/docs/ works offline
    "tasks_app",
    "annotation",
]

MIDDLEWARE = [
    "annotation.web.request_cycles.BreakRequestCycles",  # outermost: it runs once the response is complete
    "django.middleware.security.SecurityMiddleware",
    "annotation.web.csp.ContentSecurityPolicyMiddleware",  # outside WhiteNoise: static files get the header too
    # The worker's language (browser or study), before the first page that can answer (the 400 below);
    # the admin, dashboard and researchers' API stay in LANGUAGE_CODE.
    "annotation.web.locale.WorkerLocaleMiddleware",
    "annotation.web.middleware.RefuseUnusableURLs",  # NUL or non-UTF-8 in the URL: 400 before any view
    "annotation.db.sqlite_queue.SQLiteWriteQueueMiddleware",  # SQLite file databases only: writers take turns
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # The session API does without these three (annotation.web.session_api_middleware); every page runs them.
    "annotation.web.session_api_middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "annotation.web.session_api_middleware.AuthenticationMiddleware",
    "annotation.web.session_api_middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # innermost: a database that cannot be reached answers 503 (JSON under /api/), not a 500
    "annotation.web.unavailable.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "annotation.urls"
WSGI_APPLICATION = "annotation.wsgi.application"
ASGI_APPLICATION = "annotation.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
_SQLITE_JOURNAL_MODES = ("WAL", "DELETE", "TRUNCATE", "PERSIST")
_SQLITE_BUSY_TIMEOUT_SECONDS = 20  # how long a writer waits for SQLite's write lock before failing
# Requests that write take turns per process on SQLite file databases (annotation.db.sqlite_queue).
SQLITE_QUEUE_WRITES = env_bool("SQLITE_QUEUE_WRITES", True)
# DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/annotation.
# Default: an SQLite file beside manage.py, with a busy timeout so that the
# dev server and an in-process Celery task do not trip over each other.
_database_url = env_str("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
# DB_CONN_MAX_AGE > 0 keeps connections between requests; each is then checked before a request
# reuses it, so that a database restart costs one reconnection instead of a failed request.
_conn_max_age = env_int("DB_CONN_MAX_AGE", 0)
try:
    _db = dj_database_url.parse(_database_url, conn_max_age=_conn_max_age, conn_health_checks=_conn_max_age > 0)
except Exception as exc:  # dj-database-url raises several types for bad URLs
    raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default serves a small study from several gunicorn threads (docs/performance.md):
    # WAL lets readers and the one writer proceed at once, synchronous=NORMAL syncs at checkpoints
    # instead of at every commit (a power cut may lose the last commits, never corrupt the file), and
    # BEGIN IMMEDIATE takes the write lock when a transaction starts, so that a read-then-write
    # transaction waits for the lock (busy timeout) instead of failing at its first write.
    # SQLITE_JOURNAL_MODE=DELETE for a file system without shared memory (network mounts).
    _journal_mode = (env_str("SQLITE_JOURNAL_MODE") or "WAL").upper()
    if _journal_mode not in _SQLITE_JOURNAL_MODES:
        raise ImproperlyConfigured(f"SQLITE_JOURNAL_MODE must be one of {', '.join(_SQLITE_JOURNAL_MODES)}")
    _synchronous = (env_str("SQLITE_SYNCHRONOUS") or "NORMAL").upper()
    if _synchronous not in ("NORMAL", "FULL"):
        raise ImproperlyConfigured("SQLITE_SYNCHRONOUS must be NORMAL or FULL")
    _db.setdefault("OPTIONS", {}).update(
        timeout=_SQLITE_BUSY_TIMEOUT_SECONDS,
        transaction_mode="IMMEDIATE",
        init_command=f"PRAGMA journal_mode={_journal_mode}; PRAGMA synchronous={_synchronous}",
    )
elif _db["ENGINE"] == "django.db.backends.postgresql":
    # psycopg 3 prepares a statement on the server once a connection has run it DB_PREPARE_THRESHOLD
    # times (the worker's few statements run thousands of times); that needs server-side binding.
    # DB_PREPARE_THRESHOLD=none turns preparation off, for a pooler that cannot keep prepared statements;
    # 0 is refused: it would prepare migrations' multi-statement SQL, which PostgreSQL cannot prepare.
    _db.setdefault("OPTIONS", {})["server_side_binding"] = True
    if env_str("DB_PREPARE_THRESHOLD", "2").lower() == "none":
        _db["OPTIONS"]["prepare_threshold"] = None
    else:
        _db["OPTIONS"]["prepare_threshold"] = env_int("DB_PREPARE_THRESHOLD", 2, minimum=1)
    # A pooler in transaction mode (PgBouncer) cannot keep the cursors that QuerySet.iterator() declares
    # WITH HOLD outside a transaction: DB_DISABLE_SERVER_SIDE_CURSORS=1 (iterator() then fetches each result whole).
    _db["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("DB_DISABLE_SERVER_SIDE_CURSORS", False)
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Celery -------------------------------------------------------------------
# No broker configured: tasks run eagerly in the calling process.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or None
if CELERY_BROKER_URL and not re.match(r"^[a-z][a-z0-9+.-]*://", CELERY_BROKER_URL):
    raise ImproperlyConfigured(
        f"CELERY_BROKER_URL must be a URL such as redis://127.0.0.1:6379/0; got {CELERY_BROKER_URL!r}"
    )
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A queue of its own lets two deployments (or test runs) share one broker without taking each other's tasks.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE") or "celery"
# Late acknowledgement: a message stays in Redis, unacknowledged, until its task ends. A worker that
# dies (SIGKILL, OOM, lost machine) never acknowledges it, and Redis hands it out again only after the
# visibility timeout (its default is an hour). Export jobs do not wait for that: the sweep below takes
# over a job whose worker stopped sending heartbeats. The timeout is what recovers the other tasks; a
# task running longer than it is delivered a second time, which the export job's claim turns into a no-op.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 900, minimum=60)}
CELERY_BEAT_SCHEDULE = {
    "release-abandoned-slots": {
        "task": "annotation.release_abandoned_slots",
        "schedule": env_int("ABANDON_SWEEP_SECONDS", 60, minimum=1),
    },
    # The relative training filter's group verdicts that are due (a timeout, a released slot).
    "decide-training-filters": {
        "task": "annotation.decide_training_filters",
        "schedule": env_int("ABANDON_SWEEP_SECONDS", 60, minimum=1),
    },
    "pseudonymise-expired-identifiers": {
        "task": "annotation.pseudonymise_expired_identifiers",
        "schedule": env_int("RETENTION_SWEEP_SECONDS", 3600, minimum=1),
    },
    "sweep-export-jobs": {
        "task": "annotation.sweep_export_jobs",
        "schedule": env_int("EXPORT_SWEEP_SECONDS", 60, minimum=1),
    },
    "sweep-rehearsal-jobs": {
        "task": "annotation.sweep_rehearsal_jobs",
        "schedule": env_int("EXPORT_SWEEP_SECONDS", 60, minimum=1),
    },
    "sweep-prolific-jobs": {
        "task": "annotation.sweep_prolific_jobs",
        "schedule": env_int("EXPORT_SWEEP_SECONDS", 60, minimum=1),
    },
}

# --- Export jobs ----------------------------------------------------------------
# A running job's worker writes a heartbeat every EXPORT_HEARTBEAT_SECONDS; a job without one for
# EXPORT_STALE_SECONDS is stale: its worker is taken for dead. The sweep queues a stale job again, up
# to EXPORT_MAX_ATTEMPTS starts in all, then fails it with the reason (docs/reports.md).
EXPORT_STALE_SECONDS = env_int("EXPORT_STALE_SECONDS", 120, minimum=2)
EXPORT_HEARTBEAT_SECONDS = min(10.0, EXPORT_STALE_SECONDS / 4)
EXPORT_MAX_ATTEMPTS = env_int("EXPORT_MAX_ATTEMPTS", 3, minimum=1)

# --- Rehearsals run from the dashboard (docs/reports.md) ------------------------------
# The function a rehearsal job calls (manage.py rehearse_study's engine); a dotted path, so a test may
# name a lighter one. A rehearsal starts a server and a crowd of its own: one whose worker died is not
# started again (the sweep fails it with the reason); run it again from the dashboard.
REHEARSAL_ENGINE = "annotation.rehearsal.runner.rehearse"
# Without a Celery worker (eager), each rehearsal job runs in a process of its own (manage.py
# run_rehearsal_job), so that the dashboard's POST returns at once instead of running the rehearsal inline.
REHEARSAL_IN_SUBPROCESS = env_bool("REHEARSAL_IN_SUBPROCESS", CELERY_TASK_ALWAYS_EAGER)
REHEARSAL_STALE_SECONDS = EXPORT_STALE_SECONDS
REHEARSAL_HEARTBEAT_SECONDS = EXPORT_HEARTBEAT_SECONDS
REHEARSAL_MAX_ATTEMPTS = 1

# --- Prolific operations (optional) ----------------------------------------------
# Off unless PROLIFIC_API_TOKEN is set (docs/prolific.md). PROLIFIC_API_URL points the client
# elsewhere (the tests' stand-in server); PROLIFIC_WORKSPACE_ID is where participant groups are made.
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN") or ""
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL") or "https://api.prolific.com/api/v1/"
if not re.match(r"^https?://", PROLIFIC_API_URL):
    raise ImproperlyConfigured(f"PROLIFIC_API_URL must be an http(s):// URL; got {PROLIFIC_API_URL!r}")
PROLIFIC_WORKSPACE_ID = env_str("PROLIFIC_WORKSPACE_ID") or ""
PROLIFIC_TIMEOUT_SECONDS = env_int("PROLIFIC_TIMEOUT_SECONDS", 20, minimum=1)
# A webhook whose signed timestamp is further than this from now is refused (a replay).
PROLIFIC_WEBHOOK_TOLERANCE_SECONDS = env_int("PROLIFIC_WEBHOOK_TOLERANCE_SECONDS", 300, minimum=1)
# Polling, the fallback when Prolific cannot reach the app: Celery beat reads the submissions of the
# studies with Prolific workers at work this often (0: never). Only scheduled when the token is set.
PROLIFIC_POLL_SECONDS = env_int("PROLIFIC_POLL_SECONDS", 120, minimum=0)
# A run started from the dashboard or the admin is a Celery job (annotation.services.prolific.jobs). One whose
# worker died is not started again (the sweep fails it): a run again from the page does only what is left.
PROLIFIC_JOB_STALE_SECONDS = EXPORT_STALE_SECONDS
PROLIFIC_JOB_HEARTBEAT_SECONDS = EXPORT_HEARTBEAT_SECONDS
PROLIFIC_JOB_MAX_ATTEMPTS = 1
if PROLIFIC_API_TOKEN and PROLIFIC_POLL_SECONDS:
    CELERY_BEAT_SCHEDULE["poll-prolific-submissions"] = {
        "task": "annotation.poll_prolific_submissions",
        "schedule": PROLIFIC_POLL_SECONDS,
    }

# --- Cache and sessions -------------------------------------------------------
# CACHE_URL, e.g. redis://127.0.0.1:6379/1: Django's Redis cache, shared by all server
# processes, which then also holds the (admins') sessions, written through to the
# database. Workers carry a signed cookie instead (annotation.web.worker_cookie) and read
# no session store. Default: a per-process memory cache and sessions in the database
# only (a memory cache is not shared between processes, so it never holds sessions).
CACHE_URL = env_str("CACHE_URL") or None
if CACHE_URL:
    if not re.match(r"^rediss?://", CACHE_URL):
        raise ImproperlyConfigured(f"CACHE_URL must be a redis:// or rediss:// URL; got {CACHE_URL!r}")
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    SESSION_ENGINE = "django.contrib.sessions.backends.db"

# --- Auth, i18n, static -------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# The worker UI ships in these languages (docs/studies.md, Languages); a study picks one or follows the
# worker's browser among them. The catalogs are locale/<code>/LC_MESSAGES/django(js).po, compiled .mo beside.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = Path(env_str("MEDIA_ROOT") or BASE_DIR / "media")
MEDIA_URL = "media/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG and env_bool("STATIC_MANIFEST", True)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

LOGIN_URL = "admin:login"

# --- REST framework and the OpenAPI schema -----------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    # Every view of ours names annotation.api.permissions.RolePermission (this default would import it while DRF's
    # own views module is being loaded): the fallback refuses all but staff.
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "EXCEPTION_HANDLER": "annotation.api.errors.exception_handler",  # one error shape for the whole API
    # DRF's three, with a JSON parser that limits nesting (a deep body is a 400, not a RecursionError).
    "DEFAULT_PARSER_CLASSES": [
        "annotation.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]
    + (["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Human performance on few-shot NLU benchmarks",
    "DESCRIPTION": "Studies, cohorts, the worker's annotation session and the human-performance tables.\n\n"
    "Limits (docs/session-api.md, Limits): JSON bodies nest at most 32 levels (400 too_deep); a session "
    "API body is at most 64 KiB and any other body 2.5 MB (413 too_large); a NUL character or non-UTF-8 "
    "bytes in the URL are 400 invalid; an answer has at most 50 spans and no more than its context has "
    "words (400 too_many_spans), never the same span twice or a near-copy (400 duplicate_span), and "
    "overlapping spans only where the task allows them (400 overlapping_spans).",
    "VERSION": APP_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "StudyStatusEnum": "annotation.models.study.Study.Status",
        "ParticipationStateEnum": "annotation.models.participation.Participation.State",
        # attention_action and integrity_action share one choice set: review or exclude.
        "RuleActionEnum": "annotation.models.study.Study.AttentionAction",
    },
}

# --- Security -----------------------------------------------------------------
# The HTTPS-only hardening (secure cookies, SSL redirect, HSTS) is in production.py.
SESSION_COOKIE_AGE = 60 * 60 * 24 * 14
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (annotation.web.csp): this policy on every response. The site's pages use only
# their own static scripts and styles; MTurk may frame the entry page (views.entry.join) and the worker's
# finish and excluded pages post the HIT to MTurk (views.worker.home): those views widen it themselves.
MTURK_ORIGINS = ["https://www.mturk.com", "https://workersandbox.mturk.com"]
CSP_POLICY = {
    "default-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
# Pages whose markup is not ours. The admin (staff only, behind a login) has inline scripts and style
# attributes in Django's templates. Swagger UI's bundle and CSS are static files of the sidecar package
# (no CDN: the page works offline) and it sets style attributes and data: images; its own init script
# is a file (the split view).
CSP_PATH_UPDATES = {
    "/admin/": {
        "script-src": ["'self'", "'unsafe-inline'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
    },
    "/api/docs/": {
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
    },
}

# --- Logging ------------------------------------------------------------------
# Plain text on stderr; production.py swaps the formatter for one JSON object per line.
# Django's loggers keep their defaults (runserver's request lines; a console handler
# only with DEBUG) and propagate here too: the handler's level, not only the root's,
# keeps their INFO records out below LOG_LEVEL.
LOG_LEVEL = (env_str("LOG_LEVEL") or "WARNING").upper()
if LOG_LEVEL not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
    raise ImproperlyConfigured(
        f"LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL; got {env_str('LOG_LEVEL')!r}"
    )
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "level": LOG_LEVEL},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
}
