"""Shared fixtures. Tests run on SQLite by default; set DATABASE_URL for PostgreSQL."""

import os
from pathlib import Path

import pytest

from tests.browser import browser, full_browser, open_as, playwright, staff_session  # noqa: F401  (registered once)

REPO_ROOT = Path(__file__).resolve().parent.parent
CLUES_DIR = Path(os.environ.get("CLUES_DIR", REPO_ROOT.parent / "shared" / "clues"))
FEWCLUE_FIXTURE = REPO_ROOT / "tests" / "fixtures" / "fewclue"
# FewCLUE's datasets/ (its nine unlabeled.json aside) beside the repository, as CI's clean clone has it.
FEWCLUE_DIR = Path(os.environ.get("FEWCLUE_DIR") or REPO_ROOT.parent / "shared" / "fewclue" / "datasets")


@pytest.fixture(autouse=True)
def _empty_memory_cache():
    """Every test starts with an empty local-memory cache. The dashboard keeps figures under keys derived
    from the rows (annotation.reporting.figure_keys), and a rolled-back test's rows may come back in the
    next test with the same ids (SQLite rolls its id counters back too): a figure kept by one test must
    not be served to another. A Redis cache is left alone (several test processes share it)."""
    from django.conf import settings
    from django.core.cache import cache

    if settings.CACHES["default"]["BACKEND"].endswith("LocMemCache"):
        cache.clear()


@pytest.fixture(scope="session")
def clues_dir() -> Path:
    """The real CLUES release beside the repo; tests that need it skip when absent."""
    if not (CLUES_DIR / "SST-2").is_dir():
        pytest.skip(f"CLUES release not found at {CLUES_DIR} (set CLUES_DIR)")
    return CLUES_DIR


@pytest.fixture(scope="session")
def fewclue_dir() -> Path:
    """FewCLUE's datasets/ folder: ../shared/fewclue/datasets beside the repository (or FEWCLUE_DIR). CI has it
    there, so these tests run in CI; a checkout without it skips them."""
    if not (FEWCLUE_DIR / "eprstmt").is_dir():
        pytest.skip(f"FewCLUE datasets/ not found at {FEWCLUE_DIR} (set FEWCLUE_DIR)")
    return FEWCLUE_DIR


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(config, items):
    from django.db import connection

    on_postgres = connection.vendor == "postgresql"
    integration = os.environ.get("CELERY_INTEGRATION") == "1"
    fuzzing = os.environ.get("SCHEMATHESIS") == "1"
    multinode = os.environ.get("MULTINODE") == "1"
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)"))
        if "celery_worker" in item.keywords and not integration:
            item.add_marker(pytest.mark.skip(reason="needs a real Celery worker (CELERY_INTEGRATION=1)"))
        if "schemathesis" in item.keywords and not fuzzing:
            item.add_marker(pytest.mark.skip(reason="a few minutes of fuzzing: CI's own step (SCHEMATHESIS=1)"))
        if "multinode" in item.keywords and not multinode:
            item.add_marker(pytest.mark.skip(reason="nginx, PgBouncer, two app nodes: CI's own step (MULTINODE=1)"))
        if "multinode" in item.keywords:
            # The stacks share one database name and Redis db (tests/deploy/conftest.py): one worker runs them.
            item.add_marker(pytest.mark.xdist_group("multinode"))
    if os.environ.get("DATABASE_TESTS_ONLY") == "1":
        _keep_only_database_tests(config, items)


# What a test asks for when it reads or writes the database (pytest-django's fixtures, and the session
# fixtures that build rows once); a test without any of them fails if it touches the database.
DATABASE_FIXTURES = {"db", "transactional_db", "live_server", "django_db_setup"}


def _keep_only_database_tests(config, items) -> None:
    """CI's PostgreSQL stage: the tests that never reach the database already ran, identically, in the
    SQLite stage (settings parsing, files, pure functions); running them twice only costs minutes. So did
    the pages in Chromium (``browser``): what they check is what the browser shows and does (layout at two
    widths, translations, keys, scripts, CSP), and the views and services behind them run on PostgreSQL in
    their own tests here; a third of the stage's time went to rendering the same pages again."""
    keep, drop = [], []
    for item in items:
        uses = item.get_closest_marker("django_db") or DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        browser_only = "browser" in item.keywords and "postgres" not in item.keywords
        (keep if (uses and not browser_only) or "postgres" in item.keywords else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _database_url(settings_dict: dict) -> str:
    from urllib.parse import quote

    auth = quote(settings_dict.get("USER") or "", safe="")
    if settings_dict.get("PASSWORD"):
        auth += ":" + quote(settings_dict["PASSWORD"], safe="")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgres://{auth}{'@' if auth else ''}{host}{port}/{settings_dict['NAME']}"


def _celery_env(queue: str, **extra: str) -> dict:
    from django.db import connection

    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.test",
        "DATABASE_URL": _database_url(connection.settings_dict),
        "CELERY_QUEUE": queue,
        **extra,
    }


def _stop(process, log) -> None:
    import subprocess

    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
    log.close()


def worker_cache_url() -> str:
    """The session worker's cache, as a deployment gives it (``CACHE_URL``): the broker's Redis, database 6."""
    from urllib.parse import urlsplit

    broker = urlsplit(os.environ.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/0")
    return f"redis://{broker.netloc}/6"


def _spawn_celery(args: list[str], *, queue: str, log_path: Path, **env: str):
    """``celery -A annotation <args>`` with the test database and ``queue``; output to ``log_path``."""
    import subprocess
    import sys

    log = open(log_path, "w")  # noqa: SIM115 - closed by _stop
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "annotation", *args],
        cwd=REPO_ROOT,
        env=_celery_env(queue, **env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    process.log_path = log_path
    process.log = log
    return process


def _worker_args(queue: str, node: str) -> list[str]:
    return ["worker", "--pool=solo", "--loglevel=INFO", "-n", node, "-Q", queue, "--without-mingle", "--without-gossip"]


def _wait_for_ping(process, node: str) -> None:
    """Until the worker ``node`` answers a ping; the test fails with its log if it dies or 60 s pass."""
    import time

    from annotation.celery import app

    deadline = time.monotonic() + 60
    while not app.control.ping(destination=[node], timeout=1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the Celery worker did not answer a ping:\n{process.log_path.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, tmp_path_factory):
    """A real ``celery -A annotation worker`` on the broker, using pytest's test database.

    The worker consumes a queue of its own, made this session's default, so that
    other test runs on the same broker cannot take our tasks (or we theirs).
    Stopped before the test database is dropped.
    """
    from django.db import connection

    from annotation.celery import app

    if connection.vendor != "postgresql":
        pytest.skip("the Celery integration tests need PostgreSQL (set DATABASE_URL)")
    queue = f"pytest-{os.getpid()}"
    node = f"{queue}@localhost"
    log_path = tmp_path_factory.mktemp("celery") / "worker.log"
    process = _spawn_celery(_worker_args(queue, node), queue=queue, log_path=log_path, CACHE_URL=worker_cache_url())
    previous_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        _wait_for_ping(process, node)
        yield process
    finally:
        app.conf.task_default_queue = previous_queue
        _stop(process, process.log)


@pytest.fixture
def celery_beat_process(celery_worker_process, tmp_path):
    """A real ``celery -A annotation beat`` sending the periodic tasks to the worker's queue every second."""
    from annotation.celery import app

    args = ["beat", "--loglevel=INFO", "--schedule", str(tmp_path / "beat-schedule")]
    queue = app.conf.task_default_queue
    process = _spawn_celery(args, queue=queue, log_path=tmp_path / "beat.log", ABANDON_SWEEP_SECONDS="1")
    try:
        yield process
    finally:
        _stop(process, process.log)


@pytest.fixture
def celery_processes(django_db_setup, tmp_path):
    """Start ``celery -A annotation worker`` or ``beat`` processes of a test's own, on a queue of its own.

    ``celery_processes.worker(queue, **env)`` starts a solo worker (answering a ping before it returns),
    ``celery_processes.beat(queue, **env)`` a beat; ``env`` adds variables to their environment (e.g.
    EXPORT_STALE_SECONDS). The test may kill them; those still alive are stopped at teardown. For tests
    that kill a worker, which the session's ``celery_worker_process`` must survive.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the Celery integration tests need PostgreSQL (set DATABASE_URL)")
    started: list = []

    def start(name: str, args: list[str], queue: str, env: dict):
        process = _spawn_celery(args, queue=queue, log_path=tmp_path / f"{name}-{len(started)}.log", **env)
        started.append(process)
        return process

    class Processes:
        def worker(self, queue: str, **env: str):
            node = f"{queue}-{len(started)}@localhost"
            process = start("worker", _worker_args(queue, node), queue, env)
            _wait_for_ping(process, node)
            return process

        def beat(self, queue: str, **env: str):
            schedule = tmp_path / f"beat-schedule-{len(started)}"
            return start("beat", ["beat", "--loglevel=INFO", "--schedule", str(schedule)], queue, env)

        def log(self, process) -> str:
            return process.log_path.read_text()[-3000:]

    try:
        yield Processes()
    finally:
        for process in reversed(started):
            if process.poll() is None:
                _stop(process, process.log)
            else:
                process.log.close()
