"""Fault test: the database goes away under load and comes back; answers and answers to clients stay clean.

A private PostgreSQL cluster of its own (initdb into a temporary folder, a free
port on 127.0.0.1; never the shared server), gunicorn on it with production
settings and persistent connections (DB_CONN_MAX_AGE=600, so health checks on),
and a few scripted workers submitting answers in a loop (after a 503 they wait
Retry-After, as the worker page does). The cluster is stopped (``pg_ctl stop -m
fast``) for a few seconds and started again; a burst of concurrent reads just
before the stop gives every gunicorn thread a connection, a slow probe reads
while it is down (so most threads sit idle through the outage with a broken
connection, as in production), and a burst just after the start makes every
thread serve again. Then:

- every response while it was away is a JSON 503 ``database_unavailable`` with
  Retry-After (no HTML, no 500), and the worker page is the 503 page;
- no acknowledged answer is lost or altered: every answer that got 200 (or a
  409 ``already_locked`` replay, which carries the stored answer) is in the
  database as it was sent;
- no 5xx once the cluster is back: every request sent after ``pg_ctl start``
  returned succeeds (persistent connections broken by the restart are checked
  and replaced before use, not used once and failed). With
  ``CONN_HEALTH_CHECKS`` off this part fails: the burst after the start meets
  the idle threads' dead connections.

Marked ``postgres`` (it runs with the PostgreSQL suite); skips when initdb is
not installed. Run it alone with:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h_dbaway \\
        .venv/bin/python -m pytest -q -p no:cacheprovider tests/worker/test_database_outage.py
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bench.ports import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(90)]

REPO = Path(__file__).resolve().parent.parent.parent
WORKERS = 4
TEST_ITEMS = 400  # more than a worker answers in the test's time, so nobody finishes
LABELS = ("positive", "negative")
BEFORE, OUTAGE, AFTER = 3.0, 4.0, 5.0  # seconds of load before the stop, with the cluster down, after the start

SEED = f"""
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from tests.factories import ConditionFactory, StudyFactory, make_classification_task
task = make_classification_task(slug="outage", n_test={TEST_ITEMS})
study = StudyFactory(task=task, slug="outage", workers_per_condition={WORKERS})
ConditionFactory(study=study, shots=0)
"""


# --- A private PostgreSQL cluster ---------------------------------------------------


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    initdb = found[-1] if found else shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class Cluster:
    """initdb into a temporary folder, as the ``postgres`` user when we are root (initdb refuses root)."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.as_user: list[str] = []
        owner = None
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no postgres user for initdb")
            if not shutil.which("runuser"):
                pytest.skip("running as root without runuser to run initdb as postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="pg-outage-"))
        if owner is not None:
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"

    def run(self, *command: str) -> None:
        subprocess.run([*self.as_user, *command], check=True, capture_output=True, timeout=60)

    def init(self) -> None:
        self.run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                 "--no-sync")  # fmt: skip

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.SubprocessError):
                self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def cluster():
    bin_dir = _pg_bin()
    if bin_dir is None or not (bin_dir / "pg_ctl").exists():
        pytest.skip("initdb/pg_ctl not installed: no private PostgreSQL cluster for the fault test")
    cluster = Cluster(bin_dir)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def server(cluster, tmp_path):
    """gunicorn with production settings on the private cluster, its study seeded; the base URL."""
    import psycopg

    with psycopg.connect(cluster.url("postgres"), autocommit=True) as connection:
        connection.execute("CREATE DATABASE outage")
    database_url = cluster.url("outage")
    seed_env = {**os.environ, "DJANGO_SETTINGS_MODULE": "annotation.settings.test", "DATABASE_URL": database_url}
    subprocess.run([sys.executable, "-c", SEED], cwd=REPO, env=seed_env, check=True, timeout=60)
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.production",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "SECURE_HSTS_SECONDS": "0",
        "STATIC_MANIFEST": "0",
        "DATABASE_URL": database_url,
        "DB_CONN_MAX_AGE": "600",  # persistent connections, as in production: health checks on
        "LOG_LEVEL": "WARNING",
    }
    env.pop("CELERY_BROKER_URL", None)  # tasks in-process
    env.pop("CACHE_URL", None)
    log_path = tmp_path / "gunicorn.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "annotation.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--worker-class", "gthread", "--workers", "2", "--threads", "4", "--error-logfile", "-"],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(base, process, log_path)
        yield Server(base=base, database_url=database_url, log_path=log_path)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


@dataclass
class Server:
    base: str
    database_url: str
    log_path: Path


def _wait_until_serving(base: str, process: subprocess.Popen, log_path: Path) -> None:
    import requests

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if requests.get(base + "/", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    pytest.fail(f"gunicorn did not come up:\n{log_path.read_text()[-3000:]}")


# --- Scripted workers ---------------------------------------------------------------


def send(session, method: str, base: str, path: str, **kwargs) -> Call:
    """One request, recorded whatever happens."""
    import requests

    record = Call(sent=time.monotonic(), path=path, status=0)
    try:
        reply = session.request(method, base + path, timeout=10, **kwargs)
    except requests.RequestException as exc:
        record.text = repr(exc)
    else:
        record.status = reply.status_code
        record.content_type = reply.headers.get("Content-Type", "")
        record.retry_after = reply.headers.get("Retry-After")
        record.text = reply.text[:300]
        if record.content_type.startswith("application/json"):
            record.body = reply.json()
    record.received = time.monotonic()
    return record


@dataclass
class Call:
    sent: float
    path: str
    status: int  # 0: no HTTP answer at all
    content_type: str = ""
    retry_after: str | None = None
    body: dict | None = None
    text: str = ""
    received: float = 0.0


@dataclass
class ScriptedWorker:
    base: str
    name: str
    calls: list[Call] = field(default_factory=list)
    acknowledged: dict[int, dict] = field(default_factory=dict)  # item -> the answer the server confirmed
    replays: list[tuple[dict, dict]] = field(default_factory=list)  # (what we sent, what 409 said is stored)
    error: BaseException | None = None
    cookie: str = ""  # the worker cookie the entry link set

    def call(self, session, method: str, path: str, body: dict | None = None) -> Call:
        headers = {"X-CSRFToken": session.cookies.get("csrftoken", "")} if method == "POST" else {}
        record = send(session, method, self.base, path, json=body, headers=headers)
        self.calls.append(record)
        return record

    def run(self, stop: threading.Event) -> None:
        try:
            self._run(stop)
        except BaseException as exc:  # reported by the test
            self.error = exc

    def _run(self, stop: threading.Event) -> None:
        import requests

        session = requests.Session()
        link = f"{self.base}/join/outage/?worker_id={self.name}"
        joined = session.post(link, data={"choice": "start"}, allow_redirects=False, timeout=10)
        assert joined.status_code == 302, joined.text[:300]
        self.cookie = session.cookies["worker"]
        assert self.call(session, "GET", "/api/session/current/").status == 200
        started = self.call(session, "POST", "/api/session/start/", {})
        assert started.status == 200 and started.body, started.text
        item = started.body["item"]["item"]
        rounds = 0
        while not stop.is_set():
            rounds += 1
            if rounds % 4 == 0:
                self.call(session, "POST", "/api/session/events/", {"item": item, "type": "heartbeat"})
            answer = {"item": item, "label": LABELS[item % 2], "confidence": 1 + item % 5}
            reply = self.call(session, "POST", "/api/session/submit/", answer)
            if reply.status == 200:
                self.acknowledged[item] = answer
                if not reply.body.get("next"):
                    return  # the test step is over (not expected with TEST_ITEMS)
                item = reply.body["next"]["item"]["item"]
            elif reply.status == 409 and reply.body and reply.body.get("error") == "already_locked":
                # A submission that was stored but whose answer was lost: the replay is the acknowledgement.
                self.acknowledged[item] = answer
                self.replays.append((answer, reply.body["answer"]))
                current = self.call(session, "GET", "/api/session/current/")
                if current.status == 200:
                    item = current.body["item"]["item"]
            else:  # a 503 (or anything else, which the test refuses): the same answer after Retry-After, as the
                # worker page does; meanwhile most server threads stay idle and keep their broken connections
                time.sleep(float(reply.retry_after or 1))
            time.sleep(0.02)


def burst(base: str, cookies: list[str], n: int = 16) -> list[Call]:
    """n reads at once: every gunicorn thread serves one, so every thread has (or gets) a connection."""
    import requests

    def read(i: int) -> Call:
        with requests.Session() as session:
            return send(session, "GET", base, "/api/session/progress/", cookies={"worker": cookies[i % len(cookies)]})

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(read, range(n)))


# --- The test -------------------------------------------------------------------------


def test_an_outage_gives_json_503s_loses_no_answer_and_leaves_no_5xx(cluster, server):
    import psycopg
    import requests

    workers = [ScriptedWorker(base=server.base, name=f"outage-{i}") for i in range(WORKERS)]
    stop = threading.Event()
    threads = [threading.Thread(target=w.run, args=(stop,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    probes: list[Call] = []
    try:
        time.sleep(BEFORE)
        probes += burst(server.base, [w.cookie for w in workers])  # a connection on every thread
        stopping = time.monotonic()
        cluster.stop("fast")
        down = time.monotonic()
        page = requests.get(f"{server.base}/work/", cookies={"worker": workers[0].cookie}, timeout=10)
        with requests.Session() as probe:  # one read a second while it is down (the workers wait Retry-After)
            probe.cookies["worker"] = workers[1].cookie
            while time.monotonic() < down + OUTAGE:
                probes.append(send(probe, "GET", server.base, "/api/session/progress/"))
                time.sleep(1)
        starting = time.monotonic()
        cluster.start()
        up = time.monotonic()
        probes += burst(server.base, [w.cookie for w in workers])  # every thread's first request after the start
        time.sleep(AFTER)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=20)
    for w in workers:
        assert w.error is None, f"{w.name}: {w.error!r}"
    calls = [c for w in workers for c in w.calls] + probes
    log = server.log_path.read_text()
    statuses = sorted({c.status for c in calls})
    counts = {status: sum(c.status == status for c in calls) for status in statuses}
    print(
        f"outage {starting - down:.1f} s; responses by status {counts}; replays {sum(len(w.replays) for w in workers)}"
    )

    # While the database was away: JSON 503s with Retry-After, nothing else; the worker page is the 503 page.
    assert page.status_code == 503 and "Back in a moment" in page.text, page.text[:300]
    unavailable = [c for c in calls if c.status == 503]
    assert unavailable, "no request met the outage"
    for c in unavailable:
        assert c.content_type.startswith("application/json"), c
        assert c.body and c.body["error"] == "database_unavailable" and c.body["detail"], c
        assert c.retry_after == "5", c
    during = [c for c in calls if down <= c.sent < starting]
    assert during and all(c.status == 503 for c in during), [c for c in during if c.status != 503][:3]
    strange = [c for c in calls if c.status not in (200, 409, 503)]
    assert not strange, strange[:3]
    assert all(c.body and c.body.get("error") == "already_locked" for c in calls if c.status == 409)

    # Before the stop and after the start: every request succeeds (no 5xx after recovery).
    before = [c for c in calls if c.received < stopping]
    after = [c for c in calls if c.sent >= up]
    assert before and all(c.status == 200 for c in before), [c for c in before if c.status != 200][:3]
    assert len(after) > 20, f"only {len(after)} requests after the restart"
    assert all(c.status < 500 for c in after), [c for c in after if c.status >= 500][:3]
    assert all(c.status in (200, 409) for c in after), [c for c in after if c.status not in (200, 409)][:3]
    assert "Internal Server Error" not in log, log[-3000:]

    # 0 acknowledged answers lost or altered; a replay's stored answer is the one sent.
    for sent, stored in (r for w in workers for r in w.replays):
        assert (stored["label"], stored["confidence"]) == (sent["label"], sent["confidence"]), (sent, stored)
    acknowledged = {item: answer for w in workers for item, answer in w.acknowledged.items()}
    assert len(acknowledged) > 50, f"only {len(acknowledged)} answers acknowledged"
    with psycopg.connect(server.database_url) as connection:
        rows = connection.execute(
            "SELECT id, status, label, confidence FROM annotation_response WHERE id = ANY(%s)", [list(acknowledged)]
        ).fetchall()
    stored = {row[0]: row[1:] for row in rows}
    lost = [item for item in acknowledged if item not in stored]
    altered = {
        item: stored[item]
        for item, answer in acknowledged.items()
        if item in stored and stored[item] != ("answered", answer["label"], answer["confidence"])
    }
    assert not lost and not altered, f"lost {lost[:5]}, altered {dict(list(altered.items())[:5])}"
