"""This project next to doccano 1.8 on the peer harness of ../shared/peers/, and the ratios.

    .venv/bin/python bench/peers.py                                 # the harness's default counts, one repeat
    .venv/bin/python bench/peers.py --rounds 1 --n-seq 100 --n-next 20 --n-conc 200 --repeats 1   # smoke test
    .venv/bin/python bench/peers.py --code before=../wt/before --code after=. --ours sqlite,postgres --rounds 2

What it does, all on 127.0.0.1:
1. In a scratch folder (``--scratch``, default $TMPDIR/human-perf-peers, kept: an install found there
   is reused, only the run's data is removed), installs doccano in its own
   virtual environment exactly as the harness's README says (pins included) and a small client
   environment with ``requests`` for the harness (our .venv is shared and stays untouched).
2. Starts doccano (``doccano_loopback.py webserver``: its default gunicorn, 2*cores+1 sync
   workers, SQLite) and its Celery worker (``doccano task``), with their own DOCCANO_HOME.
3. Starts our production stack (``bench/stack.py``: PostgreSQL and Redis, a fresh database, a
   Celery worker on a queue of its own, gunicorn) and our embedded default (the same gunicorn on
   SQLite, Celery tasks in-process, no cache server). The SQLite file is the default settings'
   engine and options, only placed in the scratch folder (``DATABASE_URL=sqlite:///...``) so
   that the work tree's own db.sqlite3 is never touched. Both run ``--settings`` (default
   ``$HUMAN_PERF_SETTINGS`` or ``annotation.settings.production``): no benchmark code is installed.
4. Runs the harness alternately, ours and doccano's: per round us-PostgreSQL, doccano,
   us-SQLite, doccano (``--ours`` picks which of ours). Each of our runs is paired with the
   doccano run right after it; the table gives, per phase, the medians over rounds and the
   median of the paired ratios (our per_s / doccano's per_s, our p99 / doccano's p99).
   With ``--code NAME=DIR`` (repeatable) our servers run each checkout's code (another commit's worktree
   on this .venv), each paired with a doccano run of its own in the same order: a before/after in one run.
   Each submission phase's CPU is counted from /proc (``PhaseCPU``): the harness client's, the server's,
   PostgreSQL's, per submission, and the rate that CPU alone would allow on this machine.
5. Writes every harness JSON line (with ``bench_target`` and ``bench_round`` added) to
   ``bench/results/peers-<time>.jsonl`` (gitignored) and stops everything it started, also on
   Ctrl-C or SIGTERM. Every harness run has a time limit, and so has the whole run
   (``--max-minutes``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ports import free_port
from bench.stack import Stack, cpu_seconds, descendants, postgres_cpu_seconds

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO.parent / "shared" / "peers"
RESULTS = REPO / "bench" / "results"
ADAPTER = REPO / "bench" / "peers_adapter.py"
# The Django settings our servers run; another module (e.g. annotation.settings.bench) via the
# environment or --settings. This is the only place that names it.
SETTINGS_MODULE = os.environ.get("HUMAN_PERF_SETTINGS", "annotation.settings.production")
ADMIN = ("admin", "pass")  # the same account name and password on every server (all on loopback)
DOCCANO_PINS = ["doccano>=1.8,<1.9", "marshmallow<4", "numpy<2"]  # the harness README's install line
CLIENT_PINS = ["requests>=2.31,<3"]
# Our variables that must not leak into doccano's environment (it reads DATABASE_URL, DEBUG, ...).
OUR_VARIABLES = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "DB_CONN_MAX_AGE",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "CELERY_QUEUE",
    "CACHE_URL",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "MEDIA_ROOT",
    "STATIC_ROOT",
)


# Our servers. The SQLite default as this project recommends running it (docs/performance.md): one
# gunicorn process of 16 threads, whose write transactions queue on the process's lock, persistent
# connections; and as it ran before WAL and the queue, for a before/after in the same run.
TARGETS: dict[str, dict] = {
    "postgres": {},
    "sqlite": {"gunicorn_workers": 1, "gunicorn_threads": 16, "extra_env": {"DB_CONN_MAX_AGE": "600"}},
    "sqlite-before": {
        "gunicorn_workers": 4,
        "gunicorn_threads": 4,
        "extra_env": {"SQLITE_JOURNAL_MODE": "DELETE", "SQLITE_SYNCHRONOUS": "FULL", "SQLITE_QUEUE_WRITES": "0"},
    },
}


def log(*parts) -> None:
    print("[peers]", *parts, file=sys.stderr, flush=True)


# --- installing ----------------------------------------------------------------------------


def run_bounded(command: list[str], *, timeout: float, env: dict | None = None, log_file: Path | None = None) -> None:
    """Run a set-up command to completion within ``timeout`` seconds, its output to ``log_file``."""
    out = open(log_file, "ab") if log_file else subprocess.DEVNULL  # noqa: SIM115 - closed below
    try:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = process.wait(timeout=max(1.0, timeout))
        except BaseException:
            _kill_group(process)
            raise
    finally:
        if log_file:
            out.close()
    if code != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {code}" + (f": see {log_file}" if log_file else ""))


def venv(path: Path, packages: list[str], *, probe: str, timeout: float, log_file: Path) -> Path:
    """A virtual environment at ``path`` with ``packages``; reused when ``probe`` imports there."""
    python = path / "bin" / "python"
    if python.exists() and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        log(f"reusing {path}")
        return python
    started = time.monotonic()
    log(f"installing {' '.join(packages)} into {path} (log: {log_file})")
    run_bounded([sys.executable, "-m", "venv", str(path)], timeout=120, log_file=log_file)
    run_bounded([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], timeout=300, log_file=log_file)
    remaining = timeout - (time.monotonic() - started)
    run_bounded([python, "-m", "pip", "install", "-q", *packages], timeout=remaining, log_file=log_file)
    log(f"installed in {time.monotonic() - started:.0f} s")
    return python


# --- servers ---------------------------------------------------------------------------------


def _kill_group(process: subprocess.Popen, grace: float = 15) -> None:
    """SIGTERM the process group of a child started in its own session, SIGKILL after ``grace``."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


def wait_http(url: str, *, timeout: float, process: subprocess.Popen | None = None, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if process is not None and process.poll() is not None:
            break
        time.sleep(0.5)
    raise RuntimeError(f"{what or url} did not answer 200 within {timeout:.0f} s")


@dataclass
class OurServer(Stack):
    """bench/stack.py's production stack with the peers run's settings module and scratch folders.

    ``sqlite=True`` is the embedded default instead: an SQLite file, Celery tasks run in-process,
    a per-process memory cache, and neither PostgreSQL nor Redis.
    """

    sqlite: bool = False
    ready_path: str = "/"  # production settings mount no /bench/ endpoint
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="peers-ours-")))
    settings: str | None = None  # the Django settings module; default the peers run's SETTINGS_MODULE
    extra_env: dict[str, str] = field(default_factory=dict)  # last word on the environment (variants)

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env.update(
            DJANGO_SETTINGS_MODULE=self.settings or SETTINGS_MODULE,
            MEDIA_ROOT=str(self.scratch / "media"),  # export files
            STATIC_ROOT=str(self.scratch / "static"),
        )
        # gunicorn's control socket defaults to one path in the home folder, shared by every gunicorn
        # on the machine (ours and other people's): each of ours gets its own.
        env["GUNICORN_CMD_ARGS"] = f"--control-socket {self.scratch / 'gunicorn.ctl'}"
        if self.sqlite:
            for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CELERY_QUEUE", "CACHE_URL", "DB_CONN_MAX_AGE"):
                env.pop(name, None)
            env["DATABASE_URL"] = f"sqlite:///{self.scratch / 'db.sqlite3'}"
        env.update(self.extra_env)
        return env

    def prepare(self) -> None:
        if not self.sqlite:
            self.start_services()
            self.create_database()
        self.manage("migrate")
        self.manage("collectstatic", "--noinput")
        self.manage("ensure_admin", "--username", ADMIN[0], "--password", ADMIN[1])

    def start(self) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.prepare()
        self.start_servers()

    def start_servers(self) -> None:
        """gunicorn, and on PostgreSQL the Celery worker too, once the database is prepared."""
        if not self.sqlite:
            from celery import Celery

            self.start_celery()
            self.start_gunicorn()
            self.wait_for_celery(Celery("peers", broker=self.broker_url, backend=self.broker_url), timeout=60)
        else:
            self.start_gunicorn()

    @property
    def queue(self) -> str:
        return f"peers-{self.database}"  # each server's own Celery queue (on Stack's Redis database)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def server_pids(self) -> list[str]:
        return [f"{name}={process.pid}" for name, process in self.processes.items()]


@dataclass
class Doccano:
    python: Path
    home: Path
    port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in OUR_VARIABLES}
        env["DOCCANO_HOME"] = str(self.home)
        return env

    def cli(self) -> str:
        return str(self.python.parent / "doccano")

    def start(self, harness: Path) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        logs = self.home / "logs"
        logs.mkdir(exist_ok=True)
        env = self.environment()
        run_bounded([self.cli(), "init"], env=env, timeout=300, log_file=logs / "init.log")
        run_bounded(
            [self.cli(), "createuser", "--username", ADMIN[0], "--password", ADMIN[1]],
            env=env,
            timeout=120,
            log_file=logs / "init.log",
        )
        for name, command in (
            (
                "webserver",
                [str(self.python), str(harness / "doccano_loopback.py"), "webserver", "--port", str(self.port)],
            ),
            ("task", [self.cli(), "task"]),
        ):
            out = open(logs / f"{name}.log", "wb")  # noqa: SIM115 - the child keeps it
            self.processes[name] = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.home
            )
        # /v1/health/ answers 500 until the Celery worker is up as well
        wait_http(
            f"{self.base_url}/v1/health/",
            timeout=180,
            process=self.processes["webserver"],
            what=f"doccano (logs in {logs})",
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def server_pids(self) -> list[str]:
        return [f"{name}={process.pid}" for name, process in self.processes.items()]

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):
            _kill_group(process)
        self.processes.clear()


# --- the harness -------------------------------------------------------------------------------


def harness_command(args, client: Path, peer: str, base_url: str, pids: list[str], label: str) -> list[str]:
    command = [str(client), str(args.harness / "bench_peers.py"), "--peer", peer, "--base-url", base_url]
    command += ["--username", ADMIN[0], "--password", ADMIN[1], "--version-label", label]
    for name in ("n_seq", "n_next", "n_conc", "threads", "repeats", "phase_timeout"):
        command += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    for pid in pids:
        command += ["--server-pid", pid]
    if peer == "human-perf":
        command += ["--adapter-file", str(ADAPTER)]
    return command


def run_harness(command: list[str], *, env: dict, timeout: float, server_roots: list[int]) -> dict:
    """One harness run: its JSON line, with the CPU of each submission phase added (``PhaseCPU``).

    Its progress goes through to our stderr, read line by line to time the phases' CPU."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.PIPE,
            cwd=command[1].rsplit("/", 1)[0],
            start_new_session=True,
        )
        meter = PhaseCPU(process.pid, server_roots)
        reader = threading.Thread(target=meter.follow, args=(process.stderr,), daemon=True)
        reader.start()
        try:
            process.wait(timeout=timeout)
        except BaseException:
            _kill_group(process, grace=5)
            raise
        reader.join(timeout=10)
        if process.returncode != 0:
            raise RuntimeError(f"the harness exited {process.returncode}")
        out.seek(0)
        result = json.loads(out.read().decode().strip().splitlines()[-1])
    meter.add_to(result)
    return result


class PhaseCPU:
    """The CPU seconds each submission phase of a harness run costs: the harness itself (the client, every
    thread; not the commands it runs), the server's processes (every process under the roots given) and
    PostgreSQL's (all on the machine; an SQLite server's database work is in its own processes).

    Sampled from /proc when the harness's progress line says a phase starts (``[peer rN] (a) sequential
    xN``) and when it gives the phase's figure (``[peer rN]     -> ...``), which it prints right after.
    Per submission, and the rate that CPU alone allows: one request at a time (sequential), the client's
    and the server's CPU add up on every request's path; with many in flight (concurrent), at best every
    core is busy all the time.
    """

    START = re.compile(r"\[\S+ r(\d+)\] \((?:a|b)\) (sequential|concurrent) x(\d+)")
    END = re.compile(r"\[\S+ r\d+\]\s+-> ")

    def __init__(self, client_pid: int, server_roots: list[int]):
        self.client_pid = client_pid
        self.server_roots = server_roots
        self.started: tuple[int, str, int, list[int], tuple[float, float, float]] | None = None
        self.phases: dict[tuple[int, str], dict[str, float]] = {}

    def _sample(self, pids: list[int]) -> tuple[float, float, float]:
        return sum(cpu_seconds([self.client_pid])), sum(cpu_seconds(pids)), postgres_cpu_seconds()

    def follow(self, stream) -> None:
        for raw in stream:
            line = raw.decode(errors="replace")
            sys.stderr.write(line)
            if started := self.START.search(line):
                pids = [pid for root in self.server_roots for pid in descendants(root)]
                self.started = (int(started[1]), started[2], int(started[3]), pids, self._sample(pids))
            elif self.started and self.END.search(line):
                repeat, phase, count, pids, before = self.started
                client, server, database = (b - a for a, b in zip(before, self._sample(pids), strict=True))
                self.phases[(repeat, phase)] = self.per_submission(phase, count, client, server, database)
                self.started = None

    @staticmethod
    def per_submission(phase: str, count: int, client: float, server: float, database: float) -> dict[str, float]:
        total = (client + server + database) * 1000 / max(count, 1)
        cores = 1 if phase == "sequential" else os.cpu_count() or 1
        return {
            "client_cpu_ms": round(client * 1000 / max(count, 1), 3),
            "server_cpu_ms": round(server * 1000 / max(count, 1), 3),
            "database_cpu_ms": round(database * 1000 / max(count, 1), 3),
            "server_database_cpu_ms": round((server + database) * 1000 / max(count, 1), 3),
            "cpu_ms": round(total, 3),
            "cpu_ceiling_per_s": round(cores * 1000 / total, 1) if total else 0.0,
        }

    def add_to(self, result: dict) -> None:
        for (repeat, phase), figures in self.phases.items():
            if repeat <= len(result["runs"]) and isinstance(result["runs"][repeat - 1].get(phase), dict):
                result["runs"][repeat - 1][phase].update(figures)


# --- the table -------------------------------------------------------------------------------------

# (row label, phase key in a harness run, metric, higher is better)
METRICS = [
    ("(c) next item p50 ms", "next_item", "p50_ms", False),
    ("(c) next item p99 ms", "next_item", "p99_ms", False),
    ("(c) flow items/s", "next_item", "flow_items_per_s", True),
    ("(a) sequential per_s", "sequential", "per_s", True),
    ("(a) sequential p99 ms", "sequential", "p99_ms", False),
    ("(b) concurrent per_s", "concurrent", "per_s", True),
    ("(b) concurrent p99 ms", "concurrent", "p99_ms", False),
    ("(a) client CPU ms per submission", "sequential", "client_cpu_ms", False),
    ("(a) server + database CPU ms", "sequential", "server_database_cpu_ms", False),
    ("(a) rate the CPU allows per_s", "sequential", "cpu_ceiling_per_s", True),
    ("(b) client CPU ms per submission", "concurrent", "client_cpu_ms", False),
    ("(b) server + database CPU ms", "concurrent", "server_database_cpu_ms", False),
    ("(b) rate the CPU allows per_s", "concurrent", "cpu_ceiling_per_s", True),
    ("(d) export A wall s", "export_seq_project", "wall_s", False),
    ("(d) export B wall s", "export_conc_project", "wall_s", False),
]


def figure(result: dict, phase: str, metric: str) -> float | None:
    """The median over the run's repeats (None when the phase failed or did not run)."""
    values = [(run.get(phase) or {}).get(metric) for run in result["runs"]]
    values = [v for v in values if isinstance(v, int | float)]
    return statistics.median(values) if values else None


def errors(result: dict) -> int:
    total = 0
    for run in result["runs"]:
        for phase in ("next_item", "sequential", "concurrent"):
            total += sum(((run.get(phase) or {}).get("errors") or {}).values())
        for phase in ("export_seq_project", "export_conc_project"):
            total += "error" in (run.get(phase) or {})
    return total


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(pairs: dict[str, list[tuple[dict, dict]]], doccano_runs: list[dict]) -> str:
    """Medians per target, and per pairing the median (min-max) of our figure over doccano's."""
    ours = list(pairs)
    header = ["phase / metric", *ours, "doccano", *(f"{t} / doccano" for t in ours)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, phase, metric, _ in METRICS:
        row = [label]
        for target in ours:
            row.append(_fmt(_median([figure(us, phase, metric) for us, _ in pairs[target]])))
        row.append(_fmt(_median([figure(d, phase, metric) for d in doccano_runs])))
        for target in ours:
            ratios = []
            for us, them in pairs[target]:
                a, b = figure(us, phase, metric), figure(them, phase, metric)
                if a is not None and b:
                    ratios.append(a / b)
            cell = _fmt(_median(ratios), 3)
            if len(ratios) > 1:
                cell += f" ({min(ratios):.3f}-{max(ratios):.3f})"
            row.append(cell)
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def summary_json(pairs: dict[str, list[tuple[dict, dict]]], doccano_runs: list[dict]) -> dict:
    """Per phase and metric: the medians of each target and doccano, and our paired ratios over doccano's."""
    phases: dict[str, dict] = {}
    for label, phase, metric, _ in METRICS:
        entry: dict = {"doccano": _median([figure(d, phase, metric) for d in doccano_runs])}
        for target, runs in pairs.items():
            entry[f"us-{target}"] = _median([figure(us, phase, metric) for us, _ in runs])
            ratios = [
                figure(us, phase, metric) / figure(them, phase, metric)
                for us, them in runs
                if figure(us, phase, metric) is not None and figure(them, phase, metric)
            ]
            entry[f"us-{target}/doccano"] = round(_median(ratios), 3) if ratios else None
        phases[label] = entry
    return {"phases": phases}


def commit_of(code: Path) -> str:
    """The checkout's commit, with ``+changes`` when tracked files differ from it."""
    reply = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=code, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=code, capture_output=True)
    return reply.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def host_info() -> dict:
    lines = Path("/proc/cpuinfo").read_text().splitlines()
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
    return {"nproc": os.cpu_count(), "cpu_model": model, "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def _median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# --- main ------------------------------------------------------------------------------------------


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="rounds of: us-PostgreSQL, doccano, us-SQLite, doccano")
    parser.add_argument("--n-seq", type=int, default=1000)
    parser.add_argument("--n-next", type=int, default=200)
    parser.add_argument("--n-conc", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=1, help="the harness's repeats per run (its own default: 2)")
    parser.add_argument("--phase-timeout", type=float, default=300.0, help="the harness's bound per phase, seconds")
    parser.add_argument(
        "--ours", default="postgres,sqlite,sqlite-before", help=f"our servers, some of {', '.join(TARGETS)}"
    )
    parser.add_argument(
        "--code",
        action="append",
        metavar="NAME=DIR",
        help="a checkout whose servers to run (repeatable, e.g. before=../wt/before after=.; default this one)",
    )
    parser.add_argument("--settings", default=None, help=f"our Django settings module (default {SETTINGS_MODULE})")
    parser.add_argument("--harness", type=Path, default=HARNESS, help="folder of bench_peers.py (not copied here)")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=Path(tempfile.gettempdir()) / "human-perf-peers",
        help="scratch folder; its installs are kept and reused, each run's data removed",
    )
    parser.add_argument("--output", type=Path, default=None, help="also write the JSON summary to this file")
    parser.add_argument("--keep-scratch", action="store_true", help="keep the scratch folder (and its installs)")
    parser.add_argument("--install-timeout", type=float, default=1200.0, help="seconds for doccano's pip install")
    parser.add_argument("--max-minutes", type=float, default=40.0, help="the whole run's time limit")
    args = parser.parse_args(argv)
    args.ours = [t.strip() for t in args.ours.split(",") if t.strip()]
    problems = []
    if not set(args.ours) <= set(TARGETS) or not args.ours:
        problems.append(f"--ours takes some of {', '.join(TARGETS)}, comma separated")
    if args.rounds < 1 or min(args.n_seq, args.n_conc, args.threads, args.repeats) < 1 or args.n_next < 0:
        problems.append("--rounds, --n-seq, --n-conc, --threads and --repeats must be >= 1, --n-next >= 0")
    args.codes = []
    for spec in args.code or [f"this={REPO}"]:
        name, _, folder = spec.partition("=")
        path = Path(folder or name).resolve()
        if not (path / "manage.py").is_file() or not (path / "bench" / "peers_adapter.py").is_file():
            problems.append(f"--code {spec}: no manage.py and bench/peers_adapter.py in {path}")
        args.codes.append((name if folder else path.name, path))
    if not (args.harness / "bench_peers.py").is_file():
        problems.append(f"no bench_peers.py in {args.harness} (give --harness)")
    if problems:
        parser.error("; ".join(problems))
    return args


def main(argv=None) -> int:
    global SETTINGS_MODULE
    args = parse_args(argv)
    if args.settings:
        SETTINGS_MODULE = args.settings
    started = time.monotonic()
    deadline = started + args.max_minutes * 60

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    # SIGINT too: a shell starts background jobs with it ignored, and Ctrl-C must still stop everything
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)

    made_scratch = args.scratch is None
    scratch = (args.scratch or Path(tempfile.mkdtemp(prefix="peers-"))).resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))  # this run's data: databases, homes, logs
    RESULTS.mkdir(parents=True, exist_ok=True)
    results_path = RESULTS / f"peers-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    servers: list = []
    try:
        client = venv(
            scratch / "client", CLIENT_PINS, probe="import requests", timeout=300, log_file=scratch / "client-pip.log"
        )
        doccano_python = venv(
            scratch / "doccano",
            DOCCANO_PINS,
            probe="import backend.cli, marshmallow, numpy; assert int(numpy.__version__.split('.')[0]) < 2",
            timeout=args.install_timeout,
            log_file=scratch / "doccano-pip.log",
        )
        commits = {name: commit_of(code) for name, code in args.codes}

        log(f"starting doccano (home {work / 'doccano-home'})")
        doccano = Doccano(python=doccano_python, home=work / "doccano-home")
        servers.append(doccano)
        doccano.start(args.harness)
        doccano_version = subprocess.run(
            [str(doccano_python), "-m", "pip", "show", "doccano"], capture_output=True, text=True
        ).stdout
        doccano_label = next(
            (f"doccano {line.split()[1]}" for line in doccano_version.splitlines() if line.startswith("Version:")),
            "doccano",
        )

        ours: dict[str, OurServer] = {}
        for name, code in args.codes:
            for target in args.ours:
                key = target if len(args.codes) == 1 else f"{target}@{name}"
                log(f"starting our {key} server ({SETTINGS_MODULE}, {code})")
                server = OurServer(
                    database=f"peers_bench_{os.getpid()}_{len(ours)}",
                    sqlite=target.startswith("sqlite"),
                    scratch=work / f"ours-{len(ours)}",
                    log_dir=work / f"ours-{len(ours)}" / "logs",
                    code=code,
                    **TARGETS[target],
                )
                server.log_dir.mkdir(parents=True, exist_ok=True)
                servers.append(server)
                server.start()
                ours[key] = server
        code_names = {key: name for name, _ in args.codes for key in ours if key.endswith(f"@{name}")}

        per_run = args.repeats * 7 * args.phase_timeout + 180  # 7 bounded phases per repeat, and start-up
        pairs: dict[str, list[tuple[dict, dict]]] = {t: [] for t in ours}
        doccano_runs: list[dict] = []
        order = [step for target in ours for step in (target, "doccano")]
        for round_number in range(1, args.rounds + 1):
            waiting: tuple[str, dict] | None = None  # our last run, until the doccano run after it
            for target in order:
                remaining = deadline - time.monotonic()
                if remaining < 30:
                    raise TimeoutError(f"--max-minutes {args.max_minutes} reached")
                if target == "doccano":
                    command = harness_command(
                        args, client, "doccano", doccano.base_url, doccano.server_pids(), doccano_label
                    )
                    env = doccano.environment()
                    roots = [process.pid for process in doccano.processes.values()]
                else:
                    server = ours[target]
                    commit = commits[code_names.get(target, args.codes[0][0])]
                    label = f"human-perf {commit} {target} {SETTINGS_MODULE}"
                    command = harness_command(args, client, "human-perf", server.base_url, server.server_pids(), label)
                    # the adapter of the checkout measured: its set-up runs that checkout's manage.py
                    command[command.index(str(ADAPTER))] = str(server.code / "bench" / "peers_adapter.py")
                    env = {**server.environment(), "HUMAN_PERF_PYTHON": sys.executable}
                    roots = [process.pid for process in server.processes.values()]
                log(f"round {round_number}: {target}")
                result = run_harness(command, env=env, timeout=min(per_run, remaining), server_roots=roots)
                result["bench_target"] = "doccano" if target == "doccano" else f"us-{target}"
                result["bench_round"] = round_number
                with open(results_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(result, ensure_ascii=False) + "\n")
                if errors(result):
                    log(f"round {round_number}: {target} had {errors(result)} errors (see {results_path})")
                if target == "doccano":
                    doccano_runs.append(result)
                    if waiting is not None:
                        pairs[waiting[0]].append((waiting[1], result))
                        waiting = None
                else:
                    waiting = (target, result)
        params = f"--n-seq {args.n_seq} --n-next {args.n_next} --n-conc {args.n_conc} --threads {args.threads}"
        print(
            f"\nPeer harness, {args.rounds} round(s), {params} --repeats {args.repeats}; commits {commits}",
            file=sys.stderr,
        )
        print("medians over rounds; ratios paired with the next doccano run\n", file=sys.stderr)
        print(table(pairs, doccano_runs), file=sys.stderr)
        print(f"\nraw JSON lines: {results_path}", file=sys.stderr)
        summary = summary_json(pairs, doccano_runs)
        summary.update(commits=commits, parameters=params + f" --repeats {args.repeats}", rounds=args.rounds)
        summary["host"] = host_info()
        text = json.dumps(summary, indent=1)
        if args.output:
            args.output.write_text(text + "\n")
        print(text)
        return 0
    except KeyboardInterrupt as exc:
        log(f"interrupted ({exc or 'Ctrl-C'}): stopping everything")
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        for server in reversed(servers):
            try:
                server.stop()
            except Exception as exc:  # keep stopping the others
                log(f"could not stop {type(server).__name__}: {exc}")
        if args.keep_scratch:
            log(f"kept {scratch}")
        elif made_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        else:  # a scratch folder given: keep its installs, drop this run's data
            shutil.rmtree(work, ignore_errors=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)


if __name__ == "__main__":
    sys.exit(main())
