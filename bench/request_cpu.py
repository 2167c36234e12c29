"""Server CPU per worker session request (current, start, submit, skip), for two checkouts side by side.

    .venv/bin/python bench/request_cpu.py --code before=../wt/before --code after=. --rounds 3
    .venv/bin/python bench/request_cpu.py --code after=. --db sqlite --rounds 1 --requests 300   # a quick look

What a crowd worker's request costs the server, measured as the operating system counts it rather
than by a clock: for each server, the user + system CPU seconds of its gunicorn processes (every
thread, from /proc/<pid>/stat) before and after a phase of N requests of one kind, divided by N; the
user part (the interpreter: Python and the C it calls) and the system part (the kernel: sockets, locks,
the SQLite file) are also given apart.
The database server's CPU (PostgreSQL's processes, reaped ones included through the postmaster's
children's times) is reported beside it; an SQLite server's database work is in its own process.

For each round, database (``--db``) and checkout (``--code NAME=DIR``), alternately so that a drift of
the host's speed touches every checkout alike: a fresh database and server (production settings; SQLite:
one gunicorn process of 16 threads; PostgreSQL: 4 x 4, Redis, a Celery worker: as docs/performance.md
recommends), a span task of ``--items`` sentences imported with ``manage.py import_tasks`` and an open
0-shot study, run in the checkout's own code. Then, over HTTP only (the client is this checkout's), the
workers enter through the entry link and load the session (not measured), a warm-up of every kind (not
measured), and the measured phases in order: ``start`` (one per worker: lays out the test step),
``current`` (GET the session), ``submit`` (one span on the current item; the reply carries the next)
and ``skip``. ``--concurrency`` clients send them, each waiting for its answer. Every request must
answer 200. Last, the floors under them: ``refused``, the same GET without a worker cookie, which
every layer but the database serves before answering 403 (no session API request can cost less);
``redirect``, GET /favicon.ico, a redirect through Django's handler and every middleware with neither
DRF nor the database (None for a checkout without that route); and ``bare``, after the server has
stopped, the same gunicorn (workers, threads) serving bench/bare_wsgi.py, which does nothing.

The client runs on the same cores, but its CPU is not counted. Prints one JSON object: per round the
raw figures, and per database, checkout and kind the median over rounds of server CPU ms per request,
with each checkout's ratio to the first one named.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.rehearsal.client import Browser, Recorder
from bench.openloop import QUESTION, write_span_task
from bench.peers import TARGETS, OurServer, commit_of
from bench.stack import cpu_seconds, descendants, postgres_cpu_seconds

REPO = Path(__file__).resolve().parent.parent
KINDS = ("start", "current", "submit", "skip")
REPORTED = (*KINDS, "refused", "redirect", "bare")
SLUG = "cpu"

# Run by ``manage.py shell`` in the checkout measured: the study is created with that code's services.
CREATE_STUDY = """
from annotation.models import Study
from annotation.services.studies import studies
from tasks_app.models import Task
study = studies.study_create(task=Task.objects.get(slug={slug!r}), slug={slug!r}, shots=[0], workers_per_condition={n})
studies.change_status(study=study, to_status=Study.Status.OPEN)
"""


class Worker:
    def __init__(self, browser: Browser):
        self.browser = browser
        self.item: dict | None = None


async def enter(port: int, number: int, recorder: Recorder) -> Worker:
    """The entry link (the start page's form where the entry asks for it) and the session: not measured."""
    browser = Browser(port, recorder)
    link = f"/join/{SLUG}/?worker_id=cpu-{number:05d}"
    reply = await browser.request("enter", "GET", link)
    if reply.status != 302:  # the start page: its form takes the slot
        reply = await browser.request("enter", "POST", link, form={"choice": "start"})
    if reply.status != 302:
        raise RuntimeError(f"the entry link answered {reply.status}")
    reply = await browser.api("enter", "GET", "/api/session/current/")
    if reply.status != 200:
        raise RuntimeError(f"current answered {reply.status}")
    return Worker(browser)


async def one(worker: Worker, kind: str) -> None:
    browser = worker.browser
    if kind == "start":
        reply = await browser.api(kind, "POST", "/api/session/start/", {})
    elif kind == "current":
        reply = await browser.api(kind, "GET", "/api/session/current/")
    else:
        assert worker.item is not None
        body: dict = {"item": worker.item["item"], "confidence": 4}
        if kind == "submit":
            name = worker.item["context"].split(" met ", 1)[0]
            body["spans"] = [{"start": 0, "end": len(name), "text": name}]
        reply = await browser.api(kind, "POST", f"/api/session/{kind}/", body)
    if reply.status != 200:
        raise RuntimeError(f"{kind} answered {reply.status}: {reply.body[:300]!r}")
    data = reply.json()
    if kind in ("start", "current"):
        worker.item = data["item"]
    else:
        following = data.get("next")
        worker.item = following["item"] if following else None


async def phase(workers: list[Worker], kind: str, count: int, concurrency: int) -> None:
    """``count`` requests of ``kind`` (start: one per worker), ``concurrency`` clients at a time.

    Each client owns its share of the workers and goes round them, so no two requests of one worker
    (one browser, one connection) are ever in flight together."""

    async def client(mine: list[Worker], requests: int) -> None:
        for number in range(requests):
            await one(mine[number % len(mine)], kind)

    shares = [workers[c::concurrency] for c in range(min(concurrency, len(workers)))]
    counts = [len(share) if kind == "start" else count // len(shares) for share in shares]
    if kind != "start":
        counts[0] += count - sum(counts)
    await asyncio.gather(*(client(share, n) for share, n in zip(shares, counts, strict=True)))


async def drive(server: OurServer, args: argparse.Namespace, label: str) -> dict:
    recorder = Recorder()
    total = args.workers + args.warmup_workers
    entered: list[Worker] = []
    numbers = iter(range(total))

    async def enterer() -> None:
        for number in numbers:
            entered.append(await enter(server.port, number, recorder))

    await asyncio.gather(*(enterer() for _ in range(4)))
    warm, measured = entered[: args.warmup_workers], entered[args.warmup_workers :]
    for kind in KINDS:  # warm-up: every code path once per thread at least, nothing counted
        await phase(warm, kind, args.warmup_requests, args.concurrency)
    pids = descendants(server.processes["gunicorn"].pid)
    results = {}
    for kind in KINDS:
        count = len(measured) if kind == "start" else args.requests
        profiler = start_profiler(args, server, label, kind)
        (user0, system0), database0, wall0 = cpu_seconds(pids), postgres_cpu_seconds(), time.perf_counter()
        await phase(measured, kind, count, args.concurrency)
        wall = time.perf_counter() - wall0
        stop_profiler(profiler)
        (user, system), database = cpu_seconds(pids), postgres_cpu_seconds() - database0
        results[kind] = per_request(count, user - user0, system - system0, wall, None if server.sqlite else database)
    for worker in entered:
        worker.browser.close()
    # The door: the same GET without a worker cookie, refused (403) before any database work. What every
    # session API request costs whatever it does (gunicorn, Django's handler and middleware, DRF, the error).
    profiler = start_profiler(args, server, label, "refused")
    results["refused"] = await strangers(server.port, pids, "/api/session/current/", 403, args)
    stop_profiler(profiler)
    # Django's floor: a redirect through every middleware, with no DRF and no database (None in a checkout
    # without the route).
    results["redirect"] = await strangers(server.port, pids, "/favicon.ico", 301, args)
    return results


async def strangers(port: int, pids: list[int], path: str, status: int, args: argparse.Namespace) -> dict | None:
    """The server's CPU per GET of ``path`` without cookies, from --concurrency clients; None if a reply is
    not ``status``."""
    clients = [Browser(port, Recorder()) for _ in range(args.concurrency)]
    try:
        first = await clients[0].request("probe", "GET", path)
        if first.status != status:
            return None
        count = args.requests // len(clients)

        async def client(browser: Browser) -> None:
            for _ in range(count):
                reply = await browser.request("stranger", "GET", path)
                if reply.status != status:
                    raise RuntimeError(f"GET {path} answered {reply.status}, not {status}")

        (user0, system0), wall0 = cpu_seconds(pids), time.perf_counter()
        await asyncio.gather(*(client(browser) for browser in clients))
        user, system = cpu_seconds(pids)
        return per_request(count * len(clients), user - user0, system - system0, time.perf_counter() - wall0, None)
    finally:
        for browser in clients:
            browser.close()


def bare_gunicorn(server: OurServer, args: argparse.Namespace) -> dict | None:
    """gunicorn's own floor: the server's gunicorn (workers, threads), serving bench/bare_wsgi.py instead,
    which does nothing."""
    try:
        server.start_gunicorn(app="bench.bare_wsgi:application")
        pids = descendants(server.processes["gunicorn"].pid)
        return asyncio.run(strangers(server.port, pids, "/api/session/current/", 200, args))
    finally:
        server.stop()


def start_profiler(args: argparse.Namespace, server: OurServer, label: str, kind: str) -> subprocess.Popen | None:
    """With --profile: py-spy samples the gunicorn processes during this phase (its own CPU is not counted)."""
    if not args.profile:
        return None
    args.profile.mkdir(parents=True, exist_ok=True)
    out = args.profile / f"{label}-{kind}.txt"
    command = [args.py_spy, "record", "--pid", str(server.processes["gunicorn"].pid), "--subprocesses"]
    command += ["--format", "raw", "--rate", "250", "--nonblocking", "--gil", "--output", str(out)]
    profiler = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # py-spy attaches before the phase starts
    return profiler


def stop_profiler(profiler: subprocess.Popen | None) -> None:
    if profiler is not None:
        profiler.send_signal(signal.SIGINT)  # py-spy writes its samples on an interrupt
        profiler.wait(timeout=60)


def per_request(count: int, user: float, system: float, wall: float, database: float | None) -> dict:
    """Milliseconds per request: the server's CPU (user + system, and each), the database's, the client's wait."""
    return {
        "requests": count,
        "server_cpu_ms": round((user + system) * 1000 / count, 3),
        "server_user_ms": round(user * 1000 / count, 3),
        "server_system_ms": round(system * 1000 / count, 3),
        "database_cpu_ms": None if database is None else round(database * 1000 / count, 3),
        "wall_ms": round(wall * 1000 / count, 3),
    }


def measure(name: str, code: Path, db: str, args: argparse.Namespace, scratch: Path) -> dict:
    layout = TARGETS["sqlite" if db == "sqlite" else "postgres"]
    server = OurServer(
        database=f"bench_cpu_{os.getpid()}",
        sqlite=db == "sqlite",
        scratch=scratch,
        log_dir=scratch,
        code=code,
        ready_path="/",
        **layout,
    )
    try:
        server.scratch.mkdir(parents=True, exist_ok=True)
        server.prepare()
        path = scratch / f"{SLUG}_test.jsonl"
        write_span_task(path, items=args.items, slug=SLUG)
        server.manage(
            "import_tasks",
            str(path),
            "--task",
            SLUG,
            "--name",
            "CPU per request",
            "--kind",
            "span",
            "--description",
            "Benchmark items.",
            "--question-type",
            f"PER={QUESTION}",
        )
        n = args.workers + args.warmup_workers + 5
        server.manage("shell", "-c", CREATE_STUDY.format(slug=SLUG, n=n))
        server.start_servers()
        kinds = asyncio.run(drive(server, args, f"{db}-{name}"))
    finally:
        server.stop()
    kinds["bare"] = bare_gunicorn(server, args)
    return kinds


def summarize(runs: list[dict], names: list[str], dbs: list[str], metric: str = "server_cpu_ms") -> dict:
    table: dict = {}
    for db in dbs:
        for kind in REPORTED:
            row = {}
            for name in names:
                figures = [r["kinds"][kind] for r in runs if r["db"] == db and r["code"] == name]
                values = [f[metric] for f in figures if f is not None]
                row[name] = round(statistics.median(values), 3) if values else None
            first = row[names[0]]
            for name in names[1:]:
                if first and row[name] is not None:
                    row[f"{name}/{names[0]}"] = round(row[name] / first, 3)
            table.setdefault(db, {})[kind] = row
    return table


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", action="append", metavar="NAME=DIR", help="a checkout to measure (repeatable)")
    parser.add_argument("--db", default="sqlite,postgres", help="sqlite, postgres or both (comma separated)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=200, help="measured workers (one start each)")
    parser.add_argument("--requests", type=int, default=2000, help="requests per measured kind but start")
    parser.add_argument("--items", type=int, default=200, help="test items per worker")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--warmup-workers", type=int, default=20)
    parser.add_argument("--warmup-requests", type=int, default=100)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--profile", type=Path, metavar="DIR", help="py-spy's samples of each phase (raw stacks)")
    parser.add_argument("--py-spy", default="py-spy", help="the py-spy executable for --profile")
    args = parser.parse_args(argv)
    codes = args.code or [f"this={REPO}"]
    args.codes = []
    for spec in codes:
        name, _, folder = spec.partition("=")
        path = Path(folder or name).resolve()
        if not (path / "manage.py").exists():
            parser.error(f"--code {spec}: no manage.py in {path}")
        args.codes.append((name if folder else path.name, path))
    args.dbs = [d for d in args.db.split(",") if d]
    if not set(args.dbs) <= {"sqlite", "postgres"} or not args.dbs:
        parser.error("--db takes sqlite, postgres or both")
    if not 1 <= args.rounds <= 20 or not 1 <= args.concurrency <= 32 or args.workers < 1 or args.requests < 1:
        parser.error("--rounds 1..20, --concurrency 1..32, --workers and --requests at least 1")
    # Every worker needs a test item for each of its submits and skips.
    if args.items * args.workers < 2 * args.requests or args.items * args.warmup_workers < 2 * args.warmup_requests:
        parser.error("--items too few for the requests: each worker answers at most --items items")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    runs = []
    for round_number in range(1, args.rounds + 1):
        for db in args.dbs:
            for name, code in args.codes:
                with tempfile.TemporaryDirectory(prefix="bench-cpu-") as folder:
                    print(f"[cpu] round {round_number} {db} {name} ({code})", file=sys.stderr, flush=True)
                    kinds = measure(name, code, db, args, Path(folder))
                runs.append({"round": round_number, "db": db, "code": name, "kinds": kinds})
                line = ", ".join(f"{k} {v['server_cpu_ms']:.2f}" for k, v in kinds.items() if v)
                print(f"[cpu]   server CPU ms per request: {line}", file=sys.stderr, flush=True)
    names = [name for name, _ in args.codes]
    report = {
        "host": {"cpu": _cpu_model(), "nproc": os.cpu_count(), "python": platform.python_version()},
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)),
        "minutes": round((time.time() - started) / 60, 1),
        "codes": {name: {"dir": str(code), "commit": commit_of(code)} for name, code in args.codes},
        "settings": {k: getattr(args, k) for k in ("workers", "requests", "items", "concurrency", "rounds")},
        "median_server_cpu_ms": summarize(runs, names, args.dbs),
        "median_server_user_ms": summarize(runs, names, args.dbs, "server_user_ms"),
        "runs": runs,
    }
    text = json.dumps(report, indent=2)
    if args.output:
        args.output.write_text(text + "\n")
    print(text)
    return 0


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
