"""Start and stop the production stack on this machine for the replay benchmark.

PostgreSQL and Redis are brought up by scripts/services.sh (and stopped again
only if this run started them); a fresh database is created and dropped at
the end; the Celery worker and gunicorn are child processes in their own
process groups, stopped by id. Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from bench.ports import free_port

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PG_URL = "postgres://postgres@127.0.0.1:5432"
REDIS_DB = 11  # a Redis database of its own, so no other worker on the machine takes our tasks


def _up(command: list[str]) -> bool:
    return subprocess.run(command, capture_output=True).returncode == 0


def pg_is_up() -> bool:
    return _up(["pg_isready", "-h", "127.0.0.1", "-p", "5432"])


def redis_is_up() -> bool:
    return _up(["redis-cli", "-h", "127.0.0.1", "-p", "6379", "ping"])


def _admin_sql(sql: str) -> None:
    import psycopg

    connection = psycopg.connect(dbname="postgres", user="postgres", host="127.0.0.1", port=5432, autocommit=True)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
    finally:
        connection.close()


def descendants(pid: int) -> list[int]:
    """pid and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    result, todo = [], [pid]
    while todo:
        current = todo.pop()
        result.append(current)
        todo.extend(children.get(current, []))
    return result


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> tuple[float, float]:
    """(user, system) CPU seconds of these processes (all their threads, live and ended)."""
    user = system = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            user, system = user + int(fields[11]), system + int(fields[12])  # utime, stime (stat's 14th, 15th)
    return user / TICK, system / TICK


def postgres_cpu_seconds() -> float:
    """CPU seconds of every PostgreSQL process on the machine, plus the children the postmaster has reaped."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry}/comm") as f:
                if f.read().strip() != "postgres":
                    continue
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
            if fields[1] == "1" or not _is_postgres(int(fields[1])):  # the postmaster: its reaped children too
                total += int(fields[13]) + int(fields[14])
    return total / TICK


def _is_postgres(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() == "postgres"
    except OSError:
        return False


def status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class Stack:
    database: str = "bench_replay"
    gunicorn_workers: int = 4
    gunicorn_threads: int = 4
    gunicorn_worker_class: str = "gthread"  # or "sync": one request at a time per process, no keep-alive
    log_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="bench-replay-")))
    port: int = field(default_factory=free_port)
    started_services: list[str] = field(default_factory=list)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    database_created: bool = False
    ready_path: str = "/bench/noop/"  # answered 200 once gunicorn serves requests
    # The checkout whose code the servers and commands run (another commit's worktree for a before/after);
    # its Python modules must run on this .venv's packages.
    code: Path = REPO

    @property
    def database_url(self) -> str:
        return f"{PG_URL}/{self.database}"

    @property
    def broker_url(self) -> str:
        return f"redis://127.0.0.1:6379/{REDIS_DB}"

    @property
    def queue(self) -> str:
        return f"bench-replay-{os.getpid()}"

    def environment(self) -> dict[str, str]:
        """The benchmark's settings (production's, with its endpoints and instrumentation) for plain HTTP
        on the loopback."""
        if not hasattr(self, "_secret"):
            self._secret = secrets.token_urlsafe(50)
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "annotation.settings.bench",
            "DEBUG": "0",
            "SECRET_KEY": self._secret,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_COOKIES": "0",
            "SECURE_HSTS_SECONDS": "0",
            "DATABASE_URL": self.database_url,
            "DB_CONN_MAX_AGE": "600",
            "CELERY_BROKER_URL": self.broker_url,
            "CELERY_RESULT_BACKEND": self.broker_url,
            "CELERY_QUEUE": self.queue,  # what the server sends goes to this run's worker
            "CACHE_URL": f"redis://127.0.0.1:6379/{REDIS_DB + 1}",
            "LOG_LEVEL": "ERROR",
        }

    # --- services and database -------------------------------------------------

    def start_services(self) -> None:
        before = {"postgres": pg_is_up(), "redis": redis_is_up()}
        subprocess.run(
            [str(REPO / "scripts" / "services.sh"), "postgres", "redis"], check=True, stdout=subprocess.DEVNULL
        )
        self.started_services = [name for name, was_up in before.items() if not was_up]

    def create_database(self) -> None:
        _admin_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        _admin_sql(f'CREATE DATABASE "{self.database}"')
        self.database_created = True

    def manage(self, *args: str) -> None:
        subprocess.run(
            [PYTHON, "manage.py", *args], cwd=self.code, env=self.environment(), check=True, stdout=subprocess.DEVNULL
        )

    # --- servers -----------------------------------------------------------------

    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 - the child keeps it
        process = subprocess.Popen(
            command, cwd=self.code, env=self.environment(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes[name] = process
        return process

    def start_celery(self) -> None:
        self._spawn(
            "celery",
            [
                PYTHON,
                "-m",
                "celery",
                "-A",
                "annotation",
                "worker",
                "--pool=solo",
                "--loglevel=WARNING",
                "-Q",
                self.queue,
                "-n",
                f"{self.queue}@localhost",
                "--without-mingle",
                "--without-gossip",
                "--without-heartbeat",
            ],
        )

    def start_gunicorn(self, app: str = "annotation.wsgi:application") -> None:
        """gunicorn serving ``app`` (a module of this repository, whatever checkout ``code`` names)."""
        # gthread keeps browsers' connections alive (the sync worker closes each one); a few
        # processes with a few threads each overlap the database round trips on 2 cores.
        threads = ["--threads", str(self.gunicorn_threads), "--keep-alive", "120"]
        where = [] if app.startswith("annotation.") else ["--pythonpath", str(REPO)]  # bench/ of this checkout
        self._spawn(
            "gunicorn",
            [
                PYTHON,
                "-m",
                "gunicorn",
                app,
                *where,
                "--bind",
                f"127.0.0.1:{self.port}",
                "--worker-class",
                self.gunicorn_worker_class,
                "--workers",
                str(self.gunicorn_workers),
                *(threads if self.gunicorn_worker_class == "gthread" else []),
                "--backlog",
                "512",
                *(["--access-logfile", "-"] if os.environ.get("BENCH_ACCESS_LOG") else []),  # none: no line per request
                "--error-logfile",
                "-",
            ],
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{self.ready_path}", timeout=1) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
            if self.processes["gunicorn"].poll() is not None:
                break
        raise RuntimeError(f"gunicorn did not come up: see {self.log_dir / 'gunicorn.log'}")

    def wait_for_celery(self, app, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        node = f"{self.queue}@localhost"
        while time.monotonic() < deadline:
            if app.control.ping(destination=[node], timeout=0.5):
                return
            if self.processes["celery"].poll() is not None:
                break
        raise RuntimeError(f"the Celery worker did not answer: see {self.log_dir / 'celery.log'}")

    def peak_rss_kb(self) -> dict[str, int]:
        """Sum of VmHWM (peak resident set) over each server's processes."""
        return {
            name: sum(status_kb(pid, "VmHWM") for pid in descendants(process.pid))
            for name, process in self.processes.items()
        }

    def current_rss_kb(self) -> dict[str, int]:
        return {
            name: sum(status_kb(pid, "VmRSS") for pid in descendants(process.pid))
            for name, process in self.processes.items()
        }

    # --- teardown ----------------------------------------------------------------

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
        self.processes.clear()
        if self.database_created:
            try:
                _admin_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            except Exception as exc:
                print(f"could not drop database {self.database}: {exc}", file=sys.stderr)
            self.database_created = False
        if "redis" in self.started_services:
            subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", "6379", "shutdown", "nosave"], capture_output=True)
        if "postgres" in self.started_services:
            version = sorted(os.listdir("/etc/postgresql"))[0]
            subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "stop"], capture_output=True)
        self.started_services = []
