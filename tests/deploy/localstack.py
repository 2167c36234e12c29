"""A multi-node deployment on this machine: N gunicorn nodes behind nginx, optionally through PgBouncer.

    python -m tests.deploy.localstack --nodes 2 [--pgbouncer] [--celery-workers 1]   (or scripts/deploy_local.sh)

PostgreSQL and Redis are the machine's (scripts/services.sh starts them when down); a fresh database
is created, migrated (directly, never through the pooler), given the demo studies and an admin, and
dropped at the end. nginx (TLS with a throw-away self-signed certificate), PgBouncer, the gunicorn
nodes, one Celery beat and the Celery workers are child processes on free ports (bench/ports.py), each in a
process group of its own, with their configuration, logs and static files in one run directory: the
same templates as a real deployment (deploy/nginx/, deploy/pgbouncer/, deploy/gunicorn.conf.py),
nothing under /etc or any system service touched. Stopped by id on exit, SIGINT or SIGTERM. The
multi-node tests beside this file drive it; docs/deployment.md describes it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.ports import free_port

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
PYTHON = sys.executable
# The commands of the processes, as the Dockerfile and compose.yaml run them (tests/test_compose.py).
GUNICORN_COMMAND = ["gunicorn", "-c", "deploy/gunicorn.conf.py", "annotation.wsgi:application"]
CELERY = [PYTHON, "-m", "celery", "-A", "annotation"]
PG_HOST, PG_PORT = "127.0.0.1", 5432
REDIS_URL = "redis://127.0.0.1:6379"
# PgBouncer keeps protocol-level prepared statements in transaction mode from this version on.
PGBOUNCER_PREPARED_STATEMENTS = (1, 21)


def render(template: Path, values: dict[str, str]) -> str:
    """``${NAME}`` replaced for every NAME in values (as envsubst with a list of names); nginx's own
    ``$variables`` stay. A placeholder left without a value is an error, not a silent blank."""
    text = template.read_text()
    for name, value in values.items():
        text = text.replace("${" + name + "}", value)
    left = re.findall(r"\$\{(ANNOTATION_[A-Z_]+)\}", text)
    if left:
        raise ValueError(f"{template.name}: no value for {', '.join(sorted(set(left)))}")
    return text


def pgbouncer_version(binary: str) -> tuple[int, ...]:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"PgBouncer (\d+)\.(\d+)(?:\.(\d+))?", out)
    if not match:
        raise RuntimeError(f"cannot read the PgBouncer version from {out!r}")
    return tuple(int(part or 0) for part in match.groups())


def admin_sql(sql: str) -> None:
    import psycopg

    with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="postgres", autocommit=True) as c:
        c.execute(sql.encode())  # our own fixed statements (names we chose), not user input


@dataclass
class LocalStack:
    nodes: int = 2
    pgbouncer: bool = False
    celery_workers: int = 1
    database: str = "annotation_local"
    redis_db: int = 10  # the broker's; the cache takes the next one
    gunicorn_workers: int = 2
    gunicorn_threads: int = 4
    pool_size: int = 4  # PgBouncer's server connections: fewer than the nodes' threads, so they are shared
    # DB_PREPARE_THRESHOLD for the app: None picks it (2, or "none" through a PgBouncer older than 1.21).
    prepare_threshold: str | None = None
    access_log: bool = False
    keep_database: bool = False
    keep_files: bool = False  # the run directory (configuration, logs) after stop
    admin_user: str = "admin"
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    run_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="annotation-stack-")))
    https_port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    pgbouncer_port: int = field(default_factory=free_port)
    node_ports: list[int] = field(default_factory=list)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(50))
    pgbouncer_binary: str = field(default_factory=lambda: os.environ.get("PGBOUNCER", "pgbouncer"))
    _database_created: bool = False

    def __post_init__(self) -> None:
        if not self.node_ports:
            self.node_ports = [free_port() for _ in range(self.nodes)]
        self.run_dir.chmod(0o755)  # nginx's and PgBouncer's unprivileged workers read from it

    # --- what every process shares -------------------------------------------------

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    @property
    def host(self) -> str:
        """The Host a browser sends to the proxy (and the proxy passes on)."""
        return f"127.0.0.1:{self.https_port}"

    @property
    def certificate(self) -> Path:
        return self.run_dir / "tls" / "cert.pem"

    @property
    def direct_database_url(self) -> str:
        return f"postgres://postgres@{PG_HOST}:{PG_PORT}/{self.database}"

    @property
    def database_url(self) -> str:
        """What the app nodes and Celery use: PgBouncer's address when it is in front."""
        if self.pgbouncer:
            return f"postgres://postgres@127.0.0.1:{self.pgbouncer_port}/{self.database}"
        return self.direct_database_url

    @property
    def queue(self) -> str:
        return f"stack-{self.database}-{os.getpid()}"

    def effective_prepare_threshold(self) -> str:
        if self.prepare_threshold is not None:
            return self.prepare_threshold
        if self.pgbouncer and not self.pgbouncer_keeps_prepared_statements():
            return "none"
        return "2"

    def pgbouncer_keeps_prepared_statements(self) -> bool:
        return pgbouncer_version(self.pgbouncer_binary) >= PGBOUNCER_PREPARED_STATEMENTS

    def environment(self, database_url: str | None = None) -> dict[str, str]:
        """This process's environment with the stack's settings, less DEBUG (production refuses it)."""
        env = {**os.environ, **self.settings(database_url)}
        env.pop("DEBUG", None)
        return env

    def settings(self, database_url: str | None = None) -> dict[str, str]:
        """The production settings every node, worker and beat gets (docs/deployment.md)."""
        return {
            "DJANGO_SETTINGS_MODULE": "annotation.settings.production",
            "SECRET_KEY": self.secret_key,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "CSRF_TRUSTED_ORIGINS": f"https://127.0.0.1:{self.https_port},https://localhost:{self.https_port}",
            "PROXY_SSL_HEADER": "X-Forwarded-Proto",
            "DATABASE_URL": database_url or self.database_url,
            "DB_CONN_MAX_AGE": "600",
            "DB_PREPARE_THRESHOLD": self.effective_prepare_threshold(),
            "DB_DISABLE_SERVER_SIDE_CURSORS": "1" if self.pgbouncer else "0",
            "CELERY_BROKER_URL": f"{REDIS_URL}/{self.redis_db}",
            "CELERY_QUEUE": self.queue,
            "CACHE_URL": f"{REDIS_URL}/{self.redis_db + 1}",
            "STATIC_ROOT": str(self.run_dir / "static"),
            "MEDIA_ROOT": str(self.run_dir / "media"),
            "LOG_LEVEL": "WARNING",
            "GUNICORN_WORKERS": str(self.gunicorn_workers),
            "GUNICORN_THREADS": str(self.gunicorn_threads),
            "GUNICORN_ACCESS_LOG": "1" if self.access_log else "0",
        }

    # --- start ---------------------------------------------------------------------

    def start(self) -> None:
        try:
            subprocess.run(
                ["bash", str(REPO / "scripts" / "services.sh"), "postgres", "redis"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            self._prepare_database()
            self._write_certificate()
            if self.pgbouncer:
                self._start_pgbouncer()
            for index, port in enumerate(self.node_ports):
                self._start_node(index, port)
            for index in range(self.celery_workers):
                name = f"worker{index}"
                self._spawn(
                    name,
                    [*CELERY, "worker", "--pool=solo", "--loglevel=WARNING", "-Q", self.queue]
                    + ["-n", f"{self.queue}-{name}@localhost", "--without-mingle", "--without-gossip"],
                )
            schedule = str(self.run_dir / "beat-schedule")
            self._spawn("beat", [*CELERY, "beat", "--loglevel=WARNING", "--schedule", schedule])
            self._start_nginx()
        except BaseException:
            self.stop()
            raise

    def start_pooler_only(self) -> None:
        """An empty database behind PgBouncer, nothing else: for checking a PgBouncer binary."""
        try:
            admin_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            admin_sql(f'CREATE DATABASE "{self.database}"')
            self._database_created = True
            self._start_pgbouncer()
        except BaseException:
            self.stop()
            raise

    def manage(self, *args: str) -> None:
        """``manage.py`` against PostgreSQL itself (migrations do not go through the pooler)."""
        subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=REPO,
            env=self.environment(self.direct_database_url),
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def _prepare_database(self) -> None:
        admin_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        admin_sql(f'CREATE DATABASE "{self.database}"')
        self._database_created = True
        self.manage("migrate", "--noinput")
        self.manage("collectstatic", "--noinput")
        self.manage("load_demo")
        self.manage("ensure_admin", "--username", self.admin_user, "--password", self.admin_password)

    def _write_certificate(self) -> None:
        tls = self.run_dir / "tls"
        tls.mkdir(exist_ok=True)
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
            + ["-keyout", str(tls / "key.pem"), "-out", str(self.certificate), "-subj", "/CN=localhost"]
            + ["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
            check=True,
            capture_output=True,
        )

    def _spawn(self, name: str, command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = open(self.run_dir / f"{name}.log", "wb")  # noqa: SIM115 - the child keeps it
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env or self.environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own: stopped by its id, children included
        )
        log.close()
        self.processes[name] = process
        return process

    def log(self, name: str) -> str:
        path = self.run_dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _start_pgbouncer(self) -> None:
        values = {
            "ANNOTATION_PGBOUNCER_DATABASES": f"{self.database} = host={PG_HOST} port={PG_PORT} dbname={self.database}",
            "ANNOTATION_PGBOUNCER_LISTEN_ADDR": "127.0.0.1",
            "ANNOTATION_PGBOUNCER_PORT": str(self.pgbouncer_port),
            # The machine's PostgreSQL trusts the loopback; PgBouncer still admits only users in its auth file.
            "ANNOTATION_PGBOUNCER_AUTH_TYPE": "trust",
            "ANNOTATION_PGBOUNCER_AUTH_FILE": str(self.run_dir / "userlist.txt"),
            "ANNOTATION_PGBOUNCER_POOL_SIZE": str(self.pool_size),
        }
        config = render(DEPLOY / "pgbouncer" / "pgbouncer.ini.template", values)
        config += "admin_users = postgres\n"  # SHOW POOLS / SERVERS for the tests
        if not self.pgbouncer_keeps_prepared_statements():
            # Older PgBouncer refuses the setting; the app then prepares nothing (DB_PREPARE_THRESHOLD=none).
            config = re.sub(r"(?m)^max_prepared_statements = .*$", "; (max_prepared_statements: 1.21+)", config)
        (self.run_dir / "userlist.txt").write_text('"postgres" ""\n')
        (self.run_dir / "userlist.txt").chmod(0o644)
        path = self.run_dir / "pgbouncer.ini"
        path.write_text(config)
        path.chmod(0o644)
        command = [self.pgbouncer_binary]
        if os.geteuid() == 0:
            command += ["-u", "nobody"]  # PgBouncer refuses to run as root
        self._spawn("pgbouncer", [*command, str(path)])
        self._wait("pgbouncer", lambda: _port_open(self.pgbouncer_port))
        self._wait("pgbouncer", self._pgbouncer_serves)

    def _pgbouncer_serves(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.database_url.replace("postgres://", "postgresql://"), connect_timeout=2) as c:
                return c.execute("SELECT 1").fetchone() == (1,)
        except psycopg.Error:
            return False

    def _start_node(self, index: int, port: int) -> None:
        name = f"node{index}"
        env = {**self.environment(), "GUNICORN_BIND": f"127.0.0.1:{port}"}
        self._spawn(name, [PYTHON, "-m", *GUNICORN_COMMAND], env)  # cwd: the repository
        self._wait(name, lambda: self._node_answers(port))

    def _node_answers(self, port: int) -> bool:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/", headers={"Host": self.host, "X-Forwarded-Proto": "https"}
        )
        try:
            with urllib.request.urlopen(request, timeout=2) as reply:
                return bool(reply.status < 500)
        except urllib.error.HTTPError as exc:
            return exc.code < 500
        except OSError:
            return False

    def _start_nginx(self) -> None:
        (self.run_dir / "nginx-temp").mkdir(exist_ok=True)
        site = render(
            DEPLOY / "nginx" / "site.conf.template",
            {
                "ANNOTATION_UPSTREAM_SERVERS": " ".join(f"server 127.0.0.1:{port};" for port in self.node_ports),
                "ANNOTATION_HTTPS_LISTEN": f"127.0.0.1:{self.https_port} ssl",
                "ANNOTATION_HTTP_LISTEN": f"127.0.0.1:{self.http_port}",
                "ANNOTATION_SERVER_NAME": "127.0.0.1 localhost",
                "ANNOTATION_TLS_CERT": str(self.certificate),
                "ANNOTATION_TLS_KEY": str(self.run_dir / "tls" / "key.pem"),
                "ANNOTATION_STATIC_ROOT": str(self.run_dir / "static"),
            },
        )
        (self.run_dir / "site.conf").write_text(site)
        main = render(
            DEPLOY / "nginx" / "local.conf.template",
            {
                # As root, nginx's workers drop to nobody; as anyone else they run as that user.
                "ANNOTATION_NGINX_USER": "user nobody nogroup;" if os.geteuid() == 0 else "",
                "ANNOTATION_RUN_DIR": str(self.run_dir),
            },
        )
        (self.run_dir / "nginx.conf").write_text(main)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        error_log = str(self.run_dir / "nginx-error.log")
        self._spawn("nginx", [nginx, "-e", error_log, "-p", str(self.run_dir), "-c", str(self.run_dir / "nginx.conf")])
        self._wait("nginx", self._proxy_answers)

    def _proxy_answers(self) -> bool:
        context = ssl.create_default_context(cafile=str(self.certificate))
        try:
            with urllib.request.urlopen(f"{self.url}/", timeout=2, context=context) as reply:
                return bool(reply.status < 500)
        except urllib.error.HTTPError as exc:
            return exc.code < 500
        except OSError:
            return False

    def _wait(self, name: str, ready: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            if self.processes[name].poll() is not None:
                break
            time.sleep(0.2)
        tail = self.log(name)[-3000:] or (self.run_dir / "nginx-error.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{name} did not come up (logs in {self.run_dir}):\n{tail}")

    # --- stop ----------------------------------------------------------------------

    def stop(self) -> None:
        """Stop every process this stack started (by process group id), then drop its database."""
        for process in reversed(list(self.processes.values())):  # nginx first: no new requests
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.processes.clear()
        if self._database_created and not self.keep_database:
            try:
                admin_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            except Exception as exc:
                print(f"could not drop database {self.database}: {exc}", file=sys.stderr)
            self._database_created = False
        if not self.keep_files:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> LocalStack:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2, help="gunicorn nodes behind nginx (default 2)")
    parser.add_argument("--pgbouncer", action="store_true", help="the app reaches PostgreSQL through PgBouncer")
    parser.add_argument("--celery-workers", type=int, default=1, help="Celery workers (beat: always one)")
    parser.add_argument("--database", default="annotation_local", help="created fresh, dropped at the end")
    parser.add_argument("--redis-db", type=int, default=10, help="the broker's Redis db; the cache takes the next")
    parser.add_argument("--https-port", type=int, help="nginx's port (default: a free one)")
    parser.add_argument("--keep-database", action="store_true", help="do not drop the database at the end")
    parser.add_argument("--keep-files", action="store_true", help="keep the run directory (configuration, logs)")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.celery_workers < 0:
        parser.error("--nodes must be at least 1 and --celery-workers at least 0")
    stack = LocalStack(
        nodes=args.nodes,
        pgbouncer=args.pgbouncer,
        celery_workers=args.celery_workers,
        database=args.database,
        redis_db=args.redis_db,
        keep_database=args.keep_database,
        keep_files=args.keep_files,
        access_log=True,
        **({"https_port": args.https_port} if args.https_port else {}),
    )
    stopping = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    stack.start()
    try:
        print(f"up: {stack.url}/ (self-signed certificate {stack.certificate})")
        print(f"  admin: {stack.url}/admin/  user {stack.admin_user}, password {stack.admin_password}")
        print(f"  a worker: {stack.url}/join/demo-sst2/?worker_id=alice")
        print(f"  nodes: {', '.join(f'127.0.0.1:{port}' for port in stack.node_ports)}; logs in {stack.run_dir}")
        if stack.pgbouncer:
            threshold = stack.effective_prepare_threshold()
            print(f"  PgBouncer: 127.0.0.1:{stack.pgbouncer_port} (DB_PREPARE_THRESHOLD={threshold})")
        print("Ctrl-C (or SIGTERM) stops it.", flush=True)
        while not stopping:
            for name, process in stack.processes.items():
                if process.poll() is not None:
                    print(f"{name} exited ({process.returncode}); stopping", file=sys.stderr)
                    return 1
            time.sleep(0.5)
        return 0
    finally:
        stack.stop()
        print("stopped", flush=True)


if __name__ == "__main__":
    sys.exit(main())
