"""Shared fixtures. Tests run on SQLite by default; set DATABASE_URL for PostgreSQL."""

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CLUES_DIR = Path(os.environ.get("CLUES_DIR", REPO_ROOT.parent / "shared" / "clues"))


@pytest.fixture(scope="session")
def clues_dir() -> Path:
    """The real CLUES release beside the repo; tests that need it skip when absent."""
    if not (CLUES_DIR / "SST-2").is_dir():
        pytest.skip(f"CLUES release not found at {CLUES_DIR} (set CLUES_DIR)")
    return CLUES_DIR


def pytest_collection_modifyitems(config, items):
    from django.db import connection

    on_postgres = connection.vendor == "postgresql"
    integration = os.environ.get("CELERY_INTEGRATION") == "1"
    fuzzing = os.environ.get("SCHEMATHESIS") == "1"
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)"))
        if "celery_worker" in item.keywords and not integration:
            item.add_marker(pytest.mark.skip(reason="needs a real Celery worker (CELERY_INTEGRATION=1)"))
        if "schemathesis" in item.keywords and not fuzzing:
            item.add_marker(pytest.mark.skip(reason="a few minutes of fuzzing: CI's own step (SCHEMATHESIS=1)"))


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


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, tmp_path_factory):
    """A real ``celery -A annotation worker`` on the broker, using pytest's test database.

    The worker consumes a queue of its own, made this session's default, so that
    other test runs on the same broker cannot take our tasks (or we theirs).
    Stopped before the test database is dropped.
    """
    import subprocess
    import sys
    import time

    from django.db import connection

    from annotation.celery import app

    if connection.vendor != "postgresql":
        pytest.skip("the Celery integration tests need PostgreSQL (set DATABASE_URL)")
    queue = f"pytest-{os.getpid()}"
    node = f"{queue}@localhost"
    log_path = tmp_path_factory.mktemp("celery") / "worker.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed at teardown
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "annotation",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "-n",
            node,
            "-Q",
            queue,
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=REPO_ROOT,
        env=_celery_env(queue),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    previous_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        deadline = time.monotonic() + 60
        while not app.control.ping(destination=[node], timeout=1.0):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Celery worker did not answer a ping:\n{log_path.read_text()[-3000:]}")
        yield process
    finally:
        app.conf.task_default_queue = previous_queue
        _stop(process, log)


@pytest.fixture
def celery_beat_process(celery_worker_process, tmp_path):
    """A real ``celery -A annotation beat`` sending the periodic tasks to the worker's queue every second."""
    import subprocess
    import sys

    from annotation.celery import app

    log_path = tmp_path / "beat.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed at teardown
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "annotation",
            "beat",
            "--loglevel=INFO",
            "--schedule",
            str(tmp_path / "beat-schedule"),
        ],
        cwd=REPO_ROOT,
        env=_celery_env(app.conf.task_default_queue, ABANDON_SWEEP_SECONDS="1"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    process.log_path = log_path
    try:
        yield process
    finally:
        _stop(process, log)


@pytest.fixture
def celery_processes(django_db_setup, tmp_path):
    """Start ``celery -A annotation worker`` or ``beat`` processes of a test's own, on a queue of its own.

    ``celery_processes.worker(queue, **env)`` starts a solo worker (answering a ping before it returns),
    ``celery_processes.beat(queue, **env)`` a beat; ``env`` adds variables to their environment (e.g.
    EXPORT_STALE_SECONDS). The test may kill them; those still alive are stopped at teardown. For tests
    that kill a worker, which the session's ``celery_worker_process`` must survive.
    """
    import subprocess
    import sys
    import time

    from django.db import connection

    from annotation.celery import app

    if connection.vendor != "postgresql":
        pytest.skip("the Celery integration tests need PostgreSQL (set DATABASE_URL)")
    started: list[tuple[subprocess.Popen, object]] = []

    def start(name: str, args: list[str], queue: str, env: dict) -> subprocess.Popen:
        log_path = tmp_path / f"{name}-{len(started)}.log"
        log = open(log_path, "w")  # noqa: SIM115 - closed at teardown
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "annotation", *args],
            cwd=REPO_ROOT,
            env=_celery_env(queue, **env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        process.log_path = log_path
        started.append((process, log))
        return process

    class Processes:
        def worker(self, queue: str, **env: str) -> subprocess.Popen:
            node = f"{queue}-{len(started)}@localhost"
            args = ["worker", "--pool=solo", "--loglevel=INFO", "-n", node, "-Q", queue]
            process = start("worker", [*args, "--without-mingle", "--without-gossip"], queue, env)
            deadline = time.monotonic() + 60
            while not app.control.ping(destination=[node], timeout=1.0):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Celery worker did not answer a ping:\n{self.log(process)}")
            return process

        def beat(self, queue: str, **env: str) -> subprocess.Popen:
            schedule = tmp_path / f"beat-schedule-{len(started)}"
            return start("beat", ["beat", "--loglevel=INFO", "--schedule", str(schedule)], queue, env)

        def log(self, process: subprocess.Popen) -> str:
            return process.log_path.read_text()[-3000:]

    try:
        yield Processes()
    finally:
        for process, log in reversed(started):
            if process.poll() is None:
                _stop(process, log)
            else:
                log.close()
