"""Settings parse the environment strictly."""

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

# Variables a production shell would not have (the browser tests set the last one).
NOT_IN_PRODUCTION = {"DEBUG", "SECRET_KEY", "DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}


PRINT_DATABASE_ENGINE = (
    "import django; django.setup(); from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])"
)


def run_settings(env: dict, code: str = PRINT_DATABASE_ENGINE) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in NOT_IN_PRODUCTION}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env={**full_env, "DJANGO_SETTINGS_MODULE": "annotation.settings"},
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
    assert "sqlite3" in run_settings({"DEBUG": "1"}).stdout
    pg = run_settings({"DEBUG": "1", "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/x"})
    assert "postgresql" in pg.stdout


def test_check_deploy_passes_with_production_settings():
    env = {k: v for k, v in os.environ.items() if k not in NOT_IN_PRODUCTION}
    env.update({"DEBUG": "0", "SECRET_KEY": "x" * 60 + "-production-like-key", "ALLOWED_HOSTS": "example.org"})
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
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


def _print(env: dict, expression: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in NOT_IN_PRODUCTION}
    full_env.update(env, DJANGO_SETTINGS_MODULE="annotation.settings")
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=full_env, capture_output=True, text=True)


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
