"""A rehearsal run: the design copied to a scratch database, a server on it, the simulated crowd through the
real HTTP flow, the Prolific operations against the stand-in, then every invariant checked (docs/studies.md).

This process only *reads* the real database (the design, the gold answers the crowd needs); everything
that writes runs in child processes whose DATABASE_URL is the scratch database (a copy of a migrated
template, ``scratch``): gunicorn (the server the crowd talks to, as docs/deployment.md serves a study,
Celery eager) and one ``manage.py rehearsal_step serve`` for every step, both with the production settings
and the rehearsal's clock (``annotation.settings.rehearsal``). Nothing waits for time to pass: the rehearsal
moves that clock past an inactivity limit, a group timeout or a grace period (``clock``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connections

from annotation.models import AttentionCheck, Study
from annotation.rehearsal import clock
from annotation.rehearsal import scratch as scratch_db
from annotation.rehearsal.client import Browser, Recorder
from annotation.rehearsal.crowd import Key, Outcome, ProtocolError, SimulatedWorker, item_key, staff_login
from annotation.rehearsal.report import Report
from annotation.rehearsal.steps import GUARD, REPLY, end_state_key
from annotation.services.prolific.standin import TOKEN, StandIn
from annotation.services.studies import launch
from tasks_app.models import Example

MANAGE = Path(settings.BASE_DIR) / "manage.py"
GUNICORN_CONF = Path(settings.BASE_DIR) / "deploy" / "gunicorn.conf.py"
PROLIFIC_STUDY = "REHEARSAL-PROLIFIC-STUDY"
MAX_WAVE = 32  # simulated workers at a time, at most (each is a handful of coroutines and a connection)
MAX_REQUESTS = 5000  # per simulated worker: a loop that never ends fails instead of hanging


class RehearsalError(Exception):
    """The rehearsal could not run (not a failed invariant: those are in the report)."""


def _run_coroutine(make: Callable[[], Any]) -> Any:
    """Run ``make()``'s coroutine to the end. Where an event loop already runs in this thread (a caller that
    is itself asynchronous, or Playwright's synchronous API in the same process), on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


class OutsideTheLoop:
    """The caller's ``log`` may write to the database (a dashboard job's progress and last lines), which
    Django refuses inside an event loop (SynchronousOnlyOperation): lines logged from the crowd's coroutines
    are written by one thread of their own, whose database connection is closed at the end."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.pool: ThreadPoolExecutor | None = None

    def __call__(self, line: str) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.log(line)
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rehearsal-log")
        self.pool.submit(self.log, line).result()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.submit(connections.close_all).result()
            self.pool.shutdown()
            self.pool = None


@dataclass
class Behaviour:
    """One simulated worker's way of taking part."""

    name: str  # careful, average, guessing, skipper, fails_attention, declines, leaves, returns, ...
    p_gold: float
    p_skip: float = 0.0
    agree: bool = True
    fail_checks: bool = False
    leave_after: int | None = None  # items answered before closing the tab


@dataclass
class Crowd:
    """What the simulated crowd did, by worker id (several outcomes for a worker who came back)."""

    outcomes: list[tuple[Behaviour, Outcome]] = field(default_factory=list)

    def add(self, behaviour: Behaviour, outcome: Outcome) -> None:
        self.outcomes.append((behaviour, outcome))

    def facts(self) -> list[dict[str, Any]]:
        return [
            {
                "behaviour": behaviour.name,
                "p_gold": round(behaviour.p_gold, 3),
                "worker_id": o.worker_id,
                "study": o.study,
                "state": o.state,
                "refused": o.refused,
                "code": o.code,
                "link": o.link,
                "errors": o.errors,
                "unknown_gold": o.unknown_gold,
                "answered": len(o.training) + len(o.test) + len(o.checks),
                "checks_answered": len(o.checks),
                "page_title": _title(o.page),
            }
            for behaviour, o in self.outcomes
        ]


def _title(html: str) -> str:
    start = html.find("<h1>")
    return html[start + 4 : html.find("</h1>", start)].strip() if start >= 0 else ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def migrate(database_url: str) -> None:
    """``manage.py migrate`` on an empty database (a template's, made once per set of migrations)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")}
    env.update(DJANGO_SETTINGS_MODULE="annotation.settings.base", DEBUG="1", DATABASE_URL=database_url)
    done = subprocess.run(
        [sys.executable, str(MANAGE), "migrate", "--noinput", "-v0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RehearsalError(f"manage.py migrate failed: {done.stderr.strip()[-2000:]}")


# gunicorn as docs/deployment.md runs it (deploy/gunicorn.conf.py), one process of 16 threads on SQLite (the
# embedded default's shape: one writer at a time), two of 8 on PostgreSQL (the app loaded once, --preload:
# each process more is a Django start on a busy machine).
GUNICORN_SHAPE = {"sqlite": ("1", "16"), "postgresql": ("2", "8")}


@dataclass
class Scratch:
    """The scratch database's processes: the environment they share, the server and the steps' process.

    Both run the production settings with the rehearsal's clock (``annotation.settings.rehearsal``) over
    plain HTTP on 127.0.0.1, Celery eager (no broker in their environment)."""

    db: scratch_db.ScratchDatabase
    standin: StandIn
    port: int = 0
    server: subprocess.Popen | None = None
    steps: subprocess.Popen | None = None
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(50))

    @property
    def clock_file(self) -> Path:
        return self.db.directory / "clock"

    def environment(self, database_url: str) -> dict[str, str]:
        drop = ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "DEBUG", "DATABASE_URL", "CSRF_TRUSTED_ORIGINS")
        env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("GUNICORN_")}
        workers, threads = GUNICORN_SHAPE[self.db.engine]
        env.update(
            DJANGO_SETTINGS_MODULE="annotation.settings.rehearsal",
            REHEARSAL_CLOCK_FILE=str(self.clock_file),
            SECRET_KEY=self.secret,  # this run's own: nothing it signs is valid anywhere else
            ALLOWED_HOSTS="127.0.0.1,localhost",
            # Plain HTTP on the local address: production's HTTPS parts off, and no proxy to believe.
            SECURE_SSL_REDIRECT="0",
            SECURE_COOKIES="0",
            SECURE_HSTS_SECONDS="0",
            PROXY_SSL_HEADER="none",
            STATIC_MANIFEST="0",  # no collectstatic for a scratch copy; the crowd loads no static file
            STATIC_ROOT=str(self.db.directory / "static"),
            MEDIA_ROOT=str(self.db.directory / "media"),
            DATABASE_URL=database_url,
            DB_CONN_MAX_AGE="60",
            **{GUARD: self.db.name},
            PROLIFIC_API_TOKEN=TOKEN,
            PROLIFIC_API_URL=self.standin.url,
            PROLIFIC_WORKSPACE_ID="rehearsal-workspace",
            PROLIFIC_TIMEOUT_SECONDS="10",
            GUNICORN_BIND=f"127.0.0.1:{self.port}",
            GUNICORN_WORKERS=workers,
            GUNICORN_THREADS=threads,
        )
        return env

    @property
    def env(self) -> dict[str, str]:
        return self.environment(self.db.url)

    def start_steps(self) -> None:
        """One process for every step (Django starts once): ``rehearsal_step serve``."""
        with open(self.db.directory / "steps.log", "wb") as log:
            self.steps = subprocess.Popen(
                [sys.executable, str(MANAGE), "rehearsal_step", "serve"],
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )

    def step(self, step: str, slug: str, **options: Any) -> Any:
        if self.steps is None:
            self.start_steps()
        assert self.steps is not None and self.steps.stdin is not None and self.steps.stdout is not None
        try:
            self.steps.stdin.write(json.dumps({"step": step, "slug": slug, **options}) + "\n")
            self.steps.stdin.flush()
        except BrokenPipeError:
            pass  # it stopped: said below
        for line in self.steps.stdout:
            if line.startswith(REPLY):
                reply = json.loads(line[len(REPLY) :])
                if "error" in reply:
                    raise RehearsalError(f"rehearsal step {step} failed: {reply['error']}")
                return reply["result"]
        raise RehearsalError(f"the steps' process stopped: see {self.db.directory / 'steps.log'}")

    def stop_steps(self) -> None:
        if self.steps is not None and self.steps.poll() is None:
            assert self.steps.stdin is not None
            self.steps.stdin.close()  # the end of its input: it returns
            try:
                self.steps.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.steps.pid, signal.SIGKILL)
                self.steps.wait()
        if self.steps is not None and self.steps.stdout is not None:
            self.steps.stdout.close()

    def launch_server(self) -> None:
        """gunicorn with the deployment's configuration, started (it boots while the copy is loaded)."""
        self.port = free_port()
        (self.db.directory / "static").mkdir(exist_ok=True)
        with open(self.db.directory / "server.log", "wb") as log:  # the child keeps its own copy
            self.server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "-c",
                    str(GUNICORN_CONF),
                    "--preload",
                    "annotation.wsgi:application",
                ],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped by its id
            )

    def wait_for_server(self) -> None:
        assert self.server is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RehearsalError(f"the scratch server stopped: see {self.db.directory / 'server.log'}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2)
                return
            except urllib.error.HTTPError:
                return  # it answers
            except OSError:
                time.sleep(0.05)
        raise RehearsalError("the scratch server did not answer within 60 s")

    def start_server(self) -> None:
        self.launch_server()
        self.wait_for_server()

    def stop_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGINT)  # gunicorn's quick shutdown: the crowd is done
            try:
                self.server.wait(timeout=5)  # a scratch server: nothing of it is kept
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()

    @property
    def described(self) -> str:
        """How the crowd's server ran, for the report."""
        workers, threads = GUNICORN_SHAPE[self.db.engine]
        return f"gunicorn gthread {workers} x {threads}, annotation.settings.rehearsal (production's), Celery eager"

    def move_clock(self, minutes: float) -> None:
        clock.move(self.clock_file, minutes * 60)


def gold_book(study: Study) -> tuple[dict[Key, frozenset[str]], frozenset[Key]]:
    """Item -> gold answer set for every item of the task, keyed as the worker page shows the item
    (``crowd.item_key``: its context, the example's question or the task's override, its marks and its own
    options), and the attention checks' keys."""
    task = study.task
    gold: dict[Key, frozenset[str]] = {}
    for ex in Example.objects.filter(task=task).only("context", "question", "gold_answers", "marks", "choices"):
        answers = frozenset(str(a) for a in ex.gold_answers or [])
        gold[item_key(ex.context, ex.question, ex.marks, ex.choices)] = answers
        if task.worker_question:
            gold.setdefault(item_key(ex.context, task.worker_question, ex.marks, ex.choices), answers)
    checks = set()
    for check in AttentionCheck.objects.filter(study=study).select_related("example"):
        ex = check.example
        for question in (ex.question, check.question, task.worker_question):
            if question:
                key = item_key(ex.context, question, ex.marks, ex.choices)
                gold[key] = frozenset(check.expected)
                checks.add(key)
    return gold, frozenset(checks)


def comprehension_answers(study: Study) -> dict[str, object]:
    """The comprehension check answered as a careful worker does, from the study's own right options (a
    checkbox question posts each of them)."""
    answers: dict[str, object] = {}
    for question in study.comprehension or []:
        right = list(question["correct"])
        answers[question["key"]] = right if question.get("multiple") else right[0]
    return answers


def survey_answers(study: Study) -> dict[str, object]:
    """An answer to each survey question, valid for its type."""
    answers: dict[str, object] = {}
    for q in study.survey or []:
        options = [o[0] if isinstance(o, list | tuple) else o for o in q.get("options") or []]
        if q["type"] == "single":
            answers[q["key"]] = str(options[0]) if options else ""
        elif q["type"] == "multiple":
            answers[q["key"]] = [str(options[0])] if options else []
        elif q["type"] == "number":
            answers[q["key"]] = str(q.get("min", 1))
        else:
            answers[q["key"]] = "a rehearsal worker"
    return answers


class Rehearsal:
    def __init__(
        self,
        *,
        study: Study,
        workers_per_condition: int | None = None,
        seed: int = 0,
        concurrency: int | None = None,
        engine: str | None = None,
        tamper: Callable[[dict[str, Any]], None] | None = None,
        keep: bool = False,
        log: Callable[[str], None] = lambda line: None,
    ):
        self.study = study
        self.workers_per_condition = workers_per_condition
        self.rng = random.Random(seed)
        self.seed = seed
        self.concurrency = concurrency  # None: sized to the design once it is loaded (``crowd_size``)
        self.engine = engine
        self.tamper = tamper
        self.keep = keep  # keep the run's files: the SQLite scratch database, the server's log, the facts
        self.log = OutsideTheLoop(log)
        self.recorder = Recorder()
        self.crowd = Crowd()
        self.gold, self.checks = gold_book(study)
        self.survey = survey_answers(study)
        self.comprehension = comprehension_answers(study)
        self.labels = max(1, study.task.labels.count())
        self.numbered = 0

    # --- the crowd ---------------------------------------------------------------------------------

    def behaviour(self, name: str) -> Behaviour:
        """A behaviour with its accuracy drawn for this worker (the seed fixes every draw)."""
        chance = 1 / self.labels if self.study.task.is_classification else 0.1
        p_gold = {
            "careful": self.rng.uniform(0.85, 0.98),
            "average": self.rng.uniform(0.6, 0.8),
            "guessing": self.rng.uniform(chance, chance + 0.15),
        }.get(name, self.rng.uniform(0.75, 0.95))
        return Behaviour(
            name=name,
            p_gold=p_gold,
            p_skip=0.4 if name == "skipper" else 0.0,
            agree=name != "declines",
            fail_checks=name == "fails_attention",
            leave_after=2 if name in ("leaves", "returns") else None,
        )

    def new_id(self, name: str) -> str:
        self.numbered += 1
        return f"rh{self.seed}-{self.numbered:03d}-{name}"

    def worker(
        self,
        behaviour: Behaviour,
        worker_id: str,
        *,
        slug: str,
        leave: bool,
        browser: Browser | None = None,
        entry_path: str = "",
    ) -> SimulatedWorker:
        if not entry_path:  # a Prolific participant: the submission Prolific makes when they start
            self.standin.add_submission(
                submission_id=f"sub-{worker_id}", participant=worker_id, study_id=PROLIFIC_STUDY
            )
        return SimulatedWorker(
            port=self.scratch.port,
            recorder=self.recorder,
            study=slug,
            worker_id=worker_id,
            kind="abandons" if leave else "fails_training" if behaviour.name == "fails_training" else behaviour.name,
            gold=self.gold,
            rng=random.Random(self.rng.random()),
            p_gold=behaviour.p_gold,
            p_skip=behaviour.p_skip,
            p_reload=0.1,
            abandon_after=behaviour.leave_after or 0,
            max_requests=MAX_REQUESTS,
            query=f"PROLIFIC_PID={worker_id}&STUDY_ID={PROLIFIC_STUDY}&SESSION_ID=sub-{worker_id}",
            agree=behaviour.agree,
            survey=self.survey,
            comprehension=self.comprehension,
            checks=self.checks,
            fail_checks=behaviour.fail_checks,
            load_static=False,
            browser=browser,
            entry_path=entry_path,
        )

    async def take_part(self, name: str, *, slug: str | None = None, worker_id: str | None = None) -> Outcome:
        behaviour = self.behaviour(name)
        worker_id = worker_id or self.new_id(name)
        slug = slug or self.study.slug
        outcome = await self.worker(behaviour, worker_id, slug=slug, leave=behaviour.leave_after is not None).run()
        self.crowd.add(behaviour, outcome)
        if name == "returns":  # the browser crashed: a new browser opens the same link and carries on
            again = Behaviour(name="returns (back)", p_gold=behaviour.p_gold)
            outcome = await self.worker(again, worker_id, slug=slug, leave=False).run()
            self.crowd.add(again, outcome)
        self.log(f"  {worker_id}: {outcome.state}{' ' + str(outcome.refused) if outcome.refused else ''}")
        return outcome

    def sweep(self, *, filter_timeout: bool = True) -> int:
        """Move the clock past the inactivity limit (and, with ``filter_timeout``, the relative filter's group
        timeout), then run what the Celery beat runs: nothing waits for those minutes to pass."""
        timeout = (self.design.get("filter_group_timeout_minutes") or 0) if filter_timeout else 0
        minutes = max(self.design["abandon_after_minutes"], timeout) + 1
        self.advance(minutes)
        swept = self.scratch.step("sweep", self.study.slug)
        released = int(swept["released"])
        self.log(
            f"abandonment sweep: {released} slot(s) released; {swept['decided']} group verdict(s) due; "
            f"{swept['closed_out']} closed out"
        )
        return released

    def advance(self, minutes: float) -> None:
        self.scratch.move_clock(minutes)
        self.clock_minutes += minutes
        self.log(f"the clock moves {minutes:g} min (+{self.clock_minutes:g} min in all)")

    async def staff_preview(self) -> None:
        """A researcher signs in and previews the study to the end: recorded, and counted nowhere."""
        behaviour = Behaviour(name="staff_preview", p_gold=0.5)
        browser = Browser(self.scratch.port, self.recorder)
        staff = self.design["staff"]
        worker = self.worker(
            behaviour,
            "staff",
            slug=self.study.slug,
            leave=False,
            browser=browser,
            entry_path=f"/work/preview/{self.study.slug}/",
        )
        try:
            await staff_login(browser, username=staff["username"], password=staff["password"])
        except ProtocolError as exc:
            worker.outcome.errors.append(str(exc))
            outcome = worker.outcome
        else:
            outcome = await worker.run()
        self.crowd.add(behaviour, outcome)
        self.log(f"  staff preview: {outcome.state}")

    async def fill(self) -> bool:
        """Fresh careful, average and guessing workers, a few at a time, until the study answers "full". One of
        each comes first, so that each behaviour takes part even where only a few slots are left."""
        kinds = ["careful", "average", "careful", "guessing"]
        # The first wave fills every slot at once: one guessing worker in it, the rest careful, so that no
        # group the relative training filter judges is all guessers (beside them, the worker who answers every
        # training example wrong would pass); later waves draw from all kinds.
        first = ["average", "guessing"] + ["careful"] * max(1, self.wave - 2)
        limit = 4 * len(self.design["shots"]) * self.design["workers_per_condition"] + 20
        for _ in range(limit):
            names = [first.pop(0) if first else kinds[self.rng.randrange(len(kinds))] for _ in range(self.wave)]
            wave = [self.take_part(name) for name in names]
            outcomes = await asyncio.gather(*wave)
            # Full only when a whole wave is turned away: a slot freed while the wave worked (a worker
            # excluded, or judged with their group) is taken by the next one.
            if all(o.refused == 409 for o in outcomes):
                return True
        return False

    async def crowd_run(self) -> None:
        slug = self.study.slug
        # One at a time, those who free their slot (or take none) first, so that each finds a place.
        specials = []
        if self.study.consent_required and (self.study.consent_text or "").strip():
            specials.append("declines")
        if self.study.filter_rule != Study.FilterRule.NONE:
            specials.append("fails_training")
        if self.checks:
            specials.append("fails_attention")
        specials += ["leaves", "returns", "skipper"]
        self.log("specials: " + ", ".join(specials))
        self.swept = 0
        for name in specials:
            await self.take_part(name)
            if name == "leaves":  # the abandonment sweep, as the Celery beat runs it, frees the slot at once
                # Not past the filter's group timeout: the training failer's group is judged whole, once its
                # condition has trained, not against whoever trains next (a guesser, by chance, whose mean
                # the failer's 0 is within the threshold of).
                self.swept += self.sweep(filter_timeout=False)
        self.log("filling the conditions")
        full = await self.fill()
        if self.sweep():  # anyone else who left: released, and refilled
            full = await self.fill()
        self.full = full
        first = next(
            (o for b, o in self.crowd.outcomes if o.state == "completed" and o.study == slug and not o.errors), None
        )
        await self.staff_preview()
        if first is not None:  # the same person tries a second condition of the task (another study of it)
            await self.take_part("second_condition", slug=self.design["second"], worker_id=first.worker_id)
        closed = self.scratch.step("close", slug)
        self.advance(closed["grace_minutes"] + 1)  # the grace period over: the beat's close-out, then a late worker
        self.sweep()
        await self.take_part("late")

    # --- the run -------------------------------------------------------------------------------------

    def prolific(self) -> dict[str, Any]:
        return self.scratch.step("prolific", self.study.slug)

    def standin_facts(self) -> dict[str, Any]:
        participants = {s["participant"] for s in self.standin.submissions.values()}
        return {
            "submissions": {s["participant"]: s["status"] for s in self.standin.submissions.values()},
            "bonus_paid": {pid: str(self.standin.paid_to(pid)) for pid in sorted(participants)},
            "bonus_payments": {
                pid: sum(bulk["paid"] for bulk in self.standin.bulks.values() for p, _ in bulk["lines"] if p == pid)
                for pid in sorted(participants)
            },
            "group_members": sorted({m for g in self.standin.groups.values() for m in g["members"]}),
            "writes": len(self.standin.writes()),
        }

    @property
    def wave(self) -> int:
        """Simulated workers at a time: as given, or every slot of the design at once (at least 3, at most
        MAX_WAVE), so that one wave fills the study and the next finds it full."""
        if self.concurrency:
            return self.concurrency
        slots = len(self.design["shots"]) * self.design["workers_per_condition"]
        return max(3, min(MAX_WAVE, slots))

    def run(self) -> Report:
        started = time.perf_counter()
        seconds: dict[str, float] = {}
        mark = started

        def lap(phase: str) -> None:
            nonlocal mark
            now = time.perf_counter()
            seconds[phase] = round(seconds.get(phase, 0.0) + now - mark, 2)
            mark = now

        # Up front, once: what blocks the real study's launch (a missing posted reward among them).
        launch_check = launch.launch_check(self.study)
        for line in launch_check.lines():
            self.log(f"launch check: {line}")
        self.standin = StandIn().start()
        self.clock_minutes = 0.0
        try:
            db = scratch_db.create_scratch(engine=self.engine, migrate=migrate)  # a copy of the migrated template
        except BaseException:
            self.standin.stop()
            raise
        self.log(f"scratch database: {db.engine} {db.name}")
        self.scratch = Scratch(db=db, standin=self.standin)
        try:
            # Both boot Django while this process writes the design out.
            self.scratch.launch_server()
            self.scratch.start_steps()
            fixture = db.directory / "design.json"
            fixture.write_text(scratch_db.design_json(self.study), encoding="utf-8")
            options: dict[str, Any] = {"fixture": str(fixture), "second_slug": f"{self.study.slug}-second"[:50]}
            if self.workers_per_condition:
                options["workers_per_condition"] = self.workers_per_condition
            self.design = self.scratch.step("prepare", self.study.slug, **options)
            lap("copy")
            self.scratch.wait_for_server()
            lap("server_start")
            self.log(f"gunicorn on 127.0.0.1:{self.scratch.port}; the crowd starts, {self.wave} at a time")
            _run_coroutine(self.crowd_run)
            lap("crowd")
            crowd_seconds = seconds["crowd"]
            self.scratch.stop_server()
            lap("server_stop")
            self.log(f"the crowd is done ({crowd_seconds:.1f} s); Prolific operations against the stand-in")
            prolific = self.prolific()
            lap("prolific")
            facts = {
                "design": self.design,
                "seed": self.seed,
                "crowd": self.crowd.facts(),
                "full": self.full,
                "swept": self.swept,
                "standin": self.standin_facts(),
                "prolific": prolific,
                "requests": {
                    kind: {"statuses": {str(k): v for k, v in statuses.items()}}
                    for kind, statuses in self.recorder.statuses.items()
                },
            }
            if self.tamper is not None:
                self.tamper(facts)
            path = db.directory / "facts.json"
            path.write_text(json.dumps(facts, default=str), encoding="utf-8")
            self.log("checking the invariants")
            checked = self.scratch.step("check", self.study.slug, facts=str(path))
            results = checked["invariants"]
            for worker in facts["crowd"]:
                key = end_state_key(worker["study"], worker["worker_id"])
                worker["end_state"] = checked["end_states"].get(key)
                worker["measured"] = checked.get("measured", {}).get(key)
            lap("checks")
        finally:
            self.log.close()
            self.scratch.stop_server()
            self.scratch.stop_steps()
            self.standin.stop()
            db.drop(keep_files=self.keep)
        lap("cleanup")
        report = Report.build(
            study=self.study.slug,
            scratch=asdict(db) | {"directory": str(db.directory), "kept": self.keep, "server": self.scratch.described},
            design=self.design,
            seed=self.seed,
            invariants=results,
            recorder=self.recorder,
            wall_seconds=time.perf_counter() - started,
            crowd_seconds=seconds["crowd"],
            crowd=facts["crowd"],
            prolific=prolific,
            launch=launch_check,
            seconds=seconds,
            clock_minutes=self.clock_minutes,
        )
        self.log(report.time_line())
        return report


def rehearse(*, study: Study, **options: Any) -> Report:
    return Rehearsal(study=study, **options).run()
