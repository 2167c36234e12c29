"""Settings parse the environment strictly, and each environment's module holds what it should."""

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

# Variables a production shell would not have (the browser tests set DJANGO_ALLOW_ASYNC_UNSAFE), and
# settings that a developer's shell may hold but whose defaults these tests check.
NOT_IN_PRODUCTION = {
    "DEBUG",
    "SECRET_KEY",
    "DATABASE_URL",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "CACHE_URL",
    "DB_CONN_MAX_AGE",
    "LOG_LEVEL",
}


# Reading a setting imports the settings module, which is where every value is parsed and checked;
# django.setup() (the apps, a second of each run) adds nothing these tests look at.
PRINT_DATABASE_ENGINE = "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])"


BASE = "annotation.settings.base"
PRODUCTION = "annotation.settings.production"
BENCH = "annotation.settings.bench"
PRODUCTION_ENV = {"SECRET_KEY": "x" * 60 + "-production-like-key", "ALLOWED_HOSTS": "example.org"}


def run_settings(
    env: dict, code: str = PRINT_DATABASE_ENGINE, module: str | None = BASE, args: tuple = ()
) -> subprocess.CompletedProcess:
    """``python -c code`` (or ``python args``) with ``module`` as DJANGO_SETTINGS_MODULE (None: unset)."""
    full_env = {k: v for k, v in os.environ.items() if k not in NOT_IN_PRODUCTION}
    full_env.pop("DJANGO_SETTINGS_MODULE", None)
    full_env.update(env)
    if module:
        full_env["DJANGO_SETTINGS_MODULE"] = module
    return subprocess.run(
        [sys.executable, *(args or ("-c", code))],
        cwd=REPO_ROOT,
        env=full_env,
        capture_output=True,
        text=True,
    )


def test_secret_key_is_required_when_debug_is_off():
    result = run_settings({"DEBUG": "0"})
    assert result.returncode != 0
    assert "SECRET_KEY is required" in result.stderr


def test_a_malformed_boolean_names_the_variable():
    result = run_settings({"DEBUG": "maybe"})
    assert result.returncode != 0
    assert "DEBUG must be one of" in result.stderr


def test_default_database_is_sqlite_and_postgres_url_is_parsed():
    assert run_settings({"DEBUG": "1"}).stdout.strip() == "django.db.backends.sqlite3"
    pg = run_settings({"DEBUG": "1", "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/x"})
    assert "postgresql" in pg.stdout


def test_check_deploy_passes_with_production_settings():
    for env in (PRODUCTION_ENV, {**PRODUCTION_ENV, "DEBUG": "0"}):
        result = run_settings(
            env, module=PRODUCTION, args=("manage.py", "check", "--deploy", "--fail-level", "WARNING")
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_a_malformed_connection_age_names_its_own_variable():
    result = run_settings({"DEBUG": "1", "DB_CONN_MAX_AGE": "forever"})
    assert result.returncode != 0
    assert "DB_CONN_MAX_AGE must be an integer" in result.stderr
    assert "DATABASE_URL" not in result.stderr.strip().splitlines()[-1]


def test_the_sweep_interval_must_be_a_positive_number_of_seconds():
    for value, message in (("0", "must be at least 1"), ("often", "must be an integer")):
        result = run_settings({"DEBUG": "1", "ABANDON_SWEEP_SECONDS": value})
        assert result.returncode != 0
        assert f"ABANDON_SWEEP_SECONDS {message}" in result.stderr


def test_export_job_recovery_settings_are_parsed_strictly():
    for name, value, message in (
        ("EXPORT_STALE_SECONDS", "1", "must be at least 2"),
        ("EXPORT_STALE_SECONDS", "2m", "must be an integer"),
        ("EXPORT_MAX_ATTEMPTS", "0", "must be at least 1"),
        ("EXPORT_SWEEP_SECONDS", "0", "must be at least 1"),
        ("CELERY_VISIBILITY_TIMEOUT", "30", "must be at least 60"),
    ):
        result = run_settings({"DEBUG": "1", name: value})
        assert result.returncode != 0
        assert f"{name} {message}" in result.stderr
    shown = _print(
        {"DEBUG": "1", "EXPORT_STALE_SECONDS": "20", "EXPORT_SWEEP_SECONDS": "5", "CELERY_VISIBILITY_TIMEOUT": "600"},
        "settings.EXPORT_STALE_SECONDS, settings.EXPORT_HEARTBEAT_SECONDS, "
        "settings.CELERY_BEAT_SCHEDULE['sweep-export-jobs']['schedule'], settings.CELERY_BROKER_TRANSPORT_OPTIONS",
    )
    assert shown.stdout.strip() == "20 5.0 5 {'visibility_timeout': 600}", shown.stderr


def test_prolific_polling_is_scheduled_only_when_prolific_is_configured():
    schedule = "settings.CELERY_BEAT_SCHEDULE.get('poll-prolific-submissions', {}).get('schedule')"
    off = _print({"DEBUG": "1", "PROLIFIC_API_TOKEN": ""}, schedule)
    assert off.stdout.strip() == "None", off.stderr
    on = _print({"DEBUG": "1", "PROLIFIC_API_TOKEN": "t", "PROLIFIC_POLL_SECONDS": "30"}, schedule)
    assert on.stdout.strip() == "30", on.stderr
    never = _print({"DEBUG": "1", "PROLIFIC_API_TOKEN": "t", "PROLIFIC_POLL_SECONDS": "0"}, schedule)
    assert never.stdout.strip() == "None", never.stderr
    bad = run_settings({"DEBUG": "1", "PROLIFIC_WEBHOOK_TOLERANCE_SECONDS": "0"})
    assert "PROLIFIC_WEBHOOK_TOLERANCE_SECONDS must be at least 1" in bad.stderr


def test_the_celery_queue_comes_from_the_environment():
    code = "import django; django.setup(); from annotation.celery import app; print(app.conf.task_default_queue)"
    for queue, expected in (("", "celery"), ("study-eu", "study-eu")):
        result = run_settings({"DEBUG": "1", "CELERY_QUEUE": queue}, code)
        assert result.stdout.strip() == expected, result.stderr


def test_a_broker_that_is_not_a_url_names_the_variable():
    result = run_settings({"DEBUG": "1", "CELERY_BROKER_URL": "127.0.0.1:6379"})
    assert result.returncode != 0
    assert "CELERY_BROKER_URL must be a URL" in result.stderr
    assert run_settings({"DEBUG": "1", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0"}).returncode == 0


def _print(env: dict, expression: str, module: str | None = BASE) -> subprocess.CompletedProcess:
    code = f"from django.conf import settings; settings.DEBUG; print({expression})"  # DEBUG: the module loads
    return run_settings(env, code, module=module)


def test_sessions_stay_in_the_database_without_a_shared_cache():
    result = _print({"DEBUG": "1"}, "settings.SESSION_ENGINE, settings.CACHES['default']['BACKEND']")
    assert result.stdout.split() == [
        "django.contrib.sessions.backends.db",
        "django.core.cache.backends.locmem.LocMemCache",
    ]


def test_a_redis_cache_url_holds_the_sessions_too():
    result = _print(
        {"DEBUG": "1", "CACHE_URL": "redis://127.0.0.1:6379/3"},
        "settings.SESSION_ENGINE, settings.CACHES['default']['LOCATION']",
    )
    assert "cached_db" in result.stdout and "redis://127.0.0.1:6379/3" in result.stdout
    backend = _print({"DEBUG": "1", "CACHE_URL": "redis://127.0.0.1:6379/3"}, "settings.CACHES['default']['BACKEND']")
    assert backend.stdout.strip() == "django.core.cache.backends.redis.RedisCache", backend.stderr


def test_a_cache_url_that_is_not_redis_names_the_variable():
    result = _print({"DEBUG": "1", "CACHE_URL": "memcached://127.0.0.1:11211"}, "1")
    assert result.returncode != 0
    assert "CACHE_URL must be a redis://" in result.stderr


# --- Which settings module, and what each one holds ----------------------------


def test_production_refuses_debug():
    for value in ("1", "true", "on"):
        result = run_settings({**PRODUCTION_ENV, "DEBUG": value}, module=PRODUCTION)
        assert result.returncode != 0
        assert "DEBUG must be off with annotation.settings.production" in result.stderr


def test_production_requires_a_secret_key():
    result = run_settings({"ALLOWED_HOSTS": "example.org"}, module=PRODUCTION)
    assert result.returncode != 0
    assert "SECRET_KEY is required with annotation.settings.production" in result.stderr.strip().splitlines()[-1]


def test_production_is_hardened_and_base_is_not():
    expression = (
        "settings.DEBUG, settings.SECURE_SSL_REDIRECT, settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, "
        "settings.SECURE_HSTS_SECONDS > 0, settings.SECURE_PROXY_SSL_HEADER is not None"
    )
    production = _print(PRODUCTION_ENV, expression, module=PRODUCTION)
    assert production.stdout.split() == ["False", "True", "True", "True", "True", "True"], production.stderr
    base = _print({"DEBUG": "1"}, expression)
    assert base.stdout.split() == ["True", "False", "False", "False", "False", "False"], base.stderr
    # A plain-HTTP deployment (the replay on the loopback) turns the HTTPS parts off.
    plain = {**PRODUCTION_ENV, "SECURE_SSL_REDIRECT": "0", "SECURE_COOKIES": "0", "SECURE_HSTS_SECONDS": "0"}
    assert _print(plain, expression, module=PRODUCTION).stdout.split() == ["False"] * 5 + ["True"]


def test_a_server_started_without_a_settings_module_gets_production():
    """``gunicorn annotation.wsgi`` (and the ASGI and Celery apps) default to production settings."""
    code = "import {module}; from django.conf import settings; print(settings.SETTINGS_MODULE)"
    for module in ("annotation.wsgi", "annotation.asgi", "annotation.celery"):
        started = run_settings(PRODUCTION_ENV, code.format(module=module), module=None)
        assert started.stdout.strip() == PRODUCTION, started.stderr
    refused = run_settings({"DEBUG": "1"}, "import annotation.wsgi", module=None)
    assert refused.returncode != 0
    assert "DEBUG must be off with annotation.settings.production" in refused.stderr


def test_manage_py_defaults_to_the_base_settings():
    shell = ("manage.py", "shell", "-c", "from django.conf import settings; print(settings.SETTINGS_MODULE)")
    result = run_settings({"DEBUG": "1"}, module=None, args=shell)
    assert result.stdout.strip().splitlines()[-1] == BASE, result.stderr


def test_the_settings_package_itself_is_refused_with_the_modules_to_choose_from():
    result = run_settings({"DEBUG": "1"}, module="annotation.settings")
    assert result.returncode != 0
    assert "use annotation.settings.production" in result.stderr


def test_only_the_bench_settings_install_the_benchmark_code():
    expression = "settings.ROOT_URLCONF, [m for m in settings.MIDDLEWARE if 'bench' in m]"
    for env, module in (({"DEBUG": "1"}, BASE), (PRODUCTION_ENV, PRODUCTION), ({}, "annotation.settings.test")):
        result = _print(env, expression, module=module)
        assert result.stdout.strip() == "annotation.urls []", (module, result.stderr)
    bench = _print(PRODUCTION_ENV, expression, module=BENCH)
    assert (
        bench.stdout.strip()
        == "annotation.settings.bench_server ['annotation.settings.bench_server.QueryCountMiddleware']"
    ), bench.stderr
    assert run_settings({**PRODUCTION_ENV, "DEBUG": "1"}, module=BENCH).returncode != 0  # production's checks hold


def test_persistent_connections_are_checked_before_reuse():
    expression = "settings.DATABASES['default']['CONN_MAX_AGE'], settings.DATABASES['default']['CONN_HEALTH_CHECKS']"
    assert _print({"DEBUG": "1"}, expression).stdout.split() == ["0", "False"]
    assert _print({"DEBUG": "1", "DB_CONN_MAX_AGE": "600"}, expression).stdout.split() == ["600", "True"]


def test_the_log_level_comes_from_the_environment_and_is_checked():
    assert _print({"DEBUG": "1"}, "settings.LOGGING['root']['level']").stdout.strip() == "WARNING"
    assert _print({"DEBUG": "1", "LOG_LEVEL": "info"}, "settings.LOGGING['root']['level']").stdout.strip() == "INFO"
    result = run_settings({"DEBUG": "1", "LOG_LEVEL": "loud"})
    assert result.returncode != 0
    assert "LOG_LEVEL must be one of" in result.stderr


LOG_EVERYTHING = """
import django, logging
django.setup()
log = logging.getLogger("annotation.example")
log.info("below the level")
log.warning("first %s", "line")
try:
    1 / 0
except ZeroDivisionError:
    log.exception("it broke")
logging.getLogger("django.request").error("from Django")
"""


def test_production_logs_one_json_object_per_line():
    import json

    result = run_settings({**PRODUCTION_ENV, "LOG_LEVEL": "WARNING"}, LOG_EVERYTHING, module=PRODUCTION)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stderr.splitlines()]
    assert [(r["level"], r["logger"], r["message"]) for r in records] == [
        ("WARNING", "annotation.example", "first line"),
        ("ERROR", "annotation.example", "it broke"),
        ("ERROR", "django.request", "from Django"),  # Django's loggers too, once each (no DEBUG console)
    ]
    assert all(r["time"].endswith("+00:00") for r in records)
    assert "ZeroDivisionError" in records[1]["exception"] and "exception" not in records[0]


def test_development_logs_plain_text():
    result = run_settings({"DEBUG": "1"}, LOG_EVERYTHING)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].endswith(" WARNING annotation.example: first line")
    assert any(line.endswith(" ERROR django.request: from Django") for line in lines)
    assert "Traceback (most recent call last):" in result.stderr
