"""Replay a whole CLUES human study over HTTP against the production stack.

    .venv/bin/python bench/replay.py --concurrency 16 [--clues ../shared/clues] [--p-gold 0.8] [--seed 1]

Starts PostgreSQL and Redis if they are down, a fresh database, a Celery
worker and gunicorn with the benchmark's settings
(annotation.settings.bench: production's, DEBUG off, plus the reference
endpoints and per-request instrumentation) on 127.0.0.1; imports the
release, opens the six CLUES studies (0/10/20/30 shots, three workers each,
split 1) with a short abandonment timeout and an absolute training filter,
and drives simulated workers (annotation/rehearsal/crowd.py) through the whole protocol,
``--concurrency`` at a time. Some workers fail the training filter or
abandon (their slot is released by the Celery task) so that replacements
happen. Then the same server answers a do-nothing endpoint under the same
load, the resulting tables are checked against the S1 the harness expects
from the answers it gave, everything it started is stopped, and one JSON
object is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from annotation.rehearsal.client import Browser, Recorder  # noqa: E402
from annotation.rehearsal.crowd import SimulatedWorker, read_gold  # noqa: E402
from bench import report  # noqa: E402
from bench.stack import Stack  # noqa: E402

TASKS = ("sst2", "mnli", "conll03", "wikiann", "squad2", "record")
SPLIT = 1


@dataclass
class Job:
    study: str
    task: str
    kind: str  # normal, fails_training, abandons
    attempt: int = 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=16, help="simultaneous simulated workers (1..64)")
    parser.add_argument("--clues", type=Path, default=REPO.parent / "shared" / "clues", help="the CLUES release")
    parser.add_argument("--p-gold", type=float, default=0.8, help="probability of answering with the gold")
    parser.add_argument("--p-skip", type=float, default=0.02, help="probability of skipping a test item")
    parser.add_argument(
        "--p-reload",
        type=float,
        default=0.25,
        help="probability of reloading a revealed training item (GETs the item and its reveal)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--abandon-per-study", type=int, default=1, help="workers per study who walk away")
    parser.add_argument(
        "--fail-per-study",
        type=int,
        default=1,
        help="workers per study who answer training wrong (excluded in few-shot conditions)",
    )
    parser.add_argument("--filter-threshold", type=float, default=0.5, help="absolute minimum training S1")
    parser.add_argument(
        "--noop-requests",
        type=int,
        default=12000,
        help="requests to each reference endpoint (do-nothing, one write): half before the replay, half after",
    )
    parser.add_argument("--timeout", type=float, default=900, help="give up the replay after this many seconds")
    parser.add_argument("--gunicorn-workers", type=int, default=4)
    parser.add_argument("--gunicorn-threads", type=int, default=4)
    parser.add_argument("--gunicorn-worker-class", choices=["gthread", "sync"], default="gthread")
    parser.add_argument("--database", default="bench_replay")
    parser.add_argument(
        "--tasks", default=",".join(TASKS), help="comma-separated subset of the six tasks, for quicker experiments"
    )
    args = parser.parse_args(argv)
    problems = []
    if not 1 <= args.concurrency <= 64:
        problems.append("--concurrency must be 1..64")
    for name in ("p_gold", "p_skip", "p_reload"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            problems.append(f"--{name.replace('_', '-')} must be within 0..1")
    if not 0.0 <= args.filter_threshold <= 1.0:
        problems.append("--filter-threshold must be within 0..1")
    if args.abandon_per_study < 0 or args.fail_per_study < 0 or args.abandon_per_study + args.fail_per_study > 6:
        problems.append("--abandon-per-study and --fail-per-study must be >= 0 and add up to at most 6")
    if not 1 <= args.gunicorn_workers <= 16 or not 1 <= args.gunicorn_threads <= 32:
        problems.append("--gunicorn-workers must be 1..16 and --gunicorn-threads 1..32")
    if args.noop_requests < 0 or args.timeout <= 0:
        problems.append("--noop-requests must be >= 0 and --timeout > 0")
    args.tasks = tuple(t for t in args.tasks.split(",") if t)
    if not args.tasks or set(args.tasks) - set(TASKS):
        problems.append(f"--tasks must name some of {', '.join(TASKS)}")
    if not (args.clues / "SST-2").is_dir():
        problems.append(f"no CLUES release at {args.clues} (give --clues PATH)")
    if problems:
        parser.error("; ".join(problems))
    return args


# --- setting up ---------------------------------------------------------------------


def set_up(stack: Stack, args: argparse.Namespace) -> dict:
    """Database, import, studies and static files, in this process with the servers' settings."""
    started = time.perf_counter()
    setup_notes: list[str] = []
    stack.start_services()
    stack.create_database()
    os.environ.update(stack.environment())
    os.environ["STATIC_ROOT"] = str(stack.log_dir / "static")
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.models import Study
    from annotation.services.studies import studies
    from tasks_app.importing.service import import_clues
    from tasks_app.models import ExampleSet, ExampleSetItem

    call_command("migrate", verbosity=0)
    from annotation.settings.bench_server import create_floor_table

    create_floor_table()
    call_command("collectstatic", verbosity=0, interactive=False)
    from tasks_app.models import Task

    # The release's 10/20-shot files are not all subsets of the 30-shot file: build the nested sets.
    import_clues(path=args.clues, build_nested=True)
    with open(os.devnull, "w") as quiet:
        # A posted reward, as the README's walk-through gives: without one the launch check keeps a study a draft.
        call_command("create_clues_studies", split=SPLIT, open=True, posted_reward="1.50", stdout=quiet, stderr=quiet)
    info = {}
    for task in args.tasks:
        slug = f"clues-{task}-split{SPLIT}"
        study = Study.objects.filter(slug=slug).first()
        if study is None:  # the standard design refused the split: the same four conditions, made directly
            study = studies.study_create(
                task=Task.objects.get(slug=task), slug=slug, split_number=SPLIT, name=f"CLUES {task}, split {SPLIT}"
            )
            studies.change_status(study=study, to_status=Study.Status.OPEN)
            setup_notes.append(f"{task}: create_clues_studies refused split {SPLIT}; study_create used")
        if study.status != Study.Status.OPEN:
            raise SystemExit(f"{slug} is {study.status}, not open: manage.py check_study {slug} says why")
        # The shortest timeout the model allows; the harness ages an abandoner's last activity past it.
        studies.study_update(
            study=study,
            abandon_after_minutes=1,
            filter_rule=Study.FilterRule.ABSOLUTE,
            filter_threshold=args.filter_threshold,
        )
        test_set = ExampleSet.objects.get(task=study.task, role=ExampleSet.Role.TEST)
        info[task] = {
            "study": study.slug,
            "test_items": ExampleSetItem.objects.filter(example_set=test_set).count(),
            "slots": study.conditions.count() * study.workers_per_condition,
        }
    from django.db import connection, connections

    with connection.cursor() as cursor:  # write out the import's pages now, not while anything is measured
        cursor.execute("CHECKPOINT")
    connections.close_all()
    stack.start_celery()
    stack.start_gunicorn()
    stack.wait_for_celery(celery_app(stack))  # its start-up would otherwise share the cores with the first round
    return {"seconds": round(time.perf_counter() - started, 2), "studies": info, "notes": setup_notes}


def celery_app(stack: Stack):
    from celery import Celery

    return Celery("bench", broker=stack.broker_url, backend=stack.broker_url)


def release_abandoned(worker_id: str, app, stack: Stack) -> str:
    """Age the abandoner's last activity past the study's timeout, then run the release task on Celery."""
    from datetime import timedelta

    from django.db import close_old_connections
    from django.utils import timezone

    from annotation.models import Participation

    close_old_connections()
    participation = Participation.objects.select_related("study").get(worker__external_id=worker_id)
    idle = timedelta(minutes=participation.study.abandon_after_minutes, seconds=5)
    Participation.objects.filter(pk=participation.pk).update(last_activity_at=timezone.now() - idle)
    app.send_task("annotation.release_abandoned_slots", queue=stack.queue).get(timeout=60)
    return Participation.objects.values_list("state", flat=True).get(pk=participation.pk)


# --- the replay ------------------------------------------------------------------------


def initial_jobs(info: dict, args: argparse.Namespace) -> list[Job]:
    """Every slot of every study, longest test sets first (so the tail is short); roles early."""
    jobs = []
    for task, study in info.items():
        kinds = ["abandons"] * args.abandon_per_study + ["fails_training"] * args.fail_per_study
        kinds += ["normal"] * (study["slots"] - len(kinds))
        jobs += [(-study["test_items"], i, Job(study["study"], task, kind)) for i, kind in enumerate(kinds)]
    return [job for *_, job in sorted(jobs, key=lambda t: (t[0], t[1]))]


async def replay(stack: Stack, info: dict, args: argparse.Namespace, recorder: Recorder) -> dict:
    gold = {task: read_gold(args.clues, task=task, split=SPLIT) for task in info}
    rng = random.Random(args.seed)
    queue: deque[Job] = deque(initial_jobs(info, args))
    outstanding = len(queue)
    done = asyncio.Event()
    outcomes, releases = [], []
    release_lock = asyncio.Lock()
    app = celery_app(stack)
    max_jobs = {task: study["slots"] * 2 + 6 for task, study in info.items()}
    started_jobs = {task: 0 for task in info}
    counter = 0
    wakeup = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def run_job(job: Job) -> Job | None:
        nonlocal counter
        counter += 1
        worker_id = f"sim-{job.task}-{counter:04d}"
        worker = SimulatedWorker(
            port=stack.port,
            recorder=recorder,
            study=job.study,
            worker_id=worker_id,
            kind=job.kind,
            gold=gold[job.task],
            rng=random.Random(rng.random()),
            p_gold=args.p_gold,
            p_skip=args.p_skip,
            p_reload=args.p_reload,
            abandon_after=5,
            max_requests=5000,
        )
        outcome = await worker.run()
        outcome.task = job.task
        outcomes.append(outcome)
        if outcome.state == "abandoning":
            async with release_lock:
                released = time.perf_counter()
                state = await loop.run_in_executor(None, release_abandoned, worker_id, app, stack)
                releases.append(
                    {"worker": worker_id, "state": state, "ms": round((time.perf_counter() - released) * 1000, 1)}
                )
            outcome.state = state
            return Job(job.study, job.task, "normal") if state == "abandoned" else None
        if outcome.state == "excluded":
            return Job(job.study, job.task, "normal")
        if outcome.state == "refused" and job.attempt < 3:  # not expected: the harness only sends needed workers
            await asyncio.sleep(0.2)
            return Job(job.study, job.task, job.kind, job.attempt + 1)
        return None

    async def simulated_browser_tab() -> None:
        nonlocal outstanding
        while True:
            while not queue:
                if outstanding == 0:
                    return
                wakeup.clear()
                await wakeup.wait()
            job = queue.popleft()
            started_jobs[job.task] += 1
            follow_up = await run_job(job)
            if follow_up is not None and started_jobs[job.task] < max_jobs[job.task]:
                queue.appendleft(follow_up)
                outstanding += 1
            outstanding -= 1
            wakeup.set()
            if outstanding == 0:
                done.set()

    started = time.perf_counter()
    tabs = [asyncio.create_task(simulated_browser_tab()) for _ in range(args.concurrency)]
    try:
        await asyncio.wait_for(asyncio.gather(*tabs), timeout=args.timeout)
    except TimeoutError:
        for tab in tabs:
            tab.cancel()
        raise RuntimeError(f"the replay did not finish within --timeout {args.timeout} s") from None
    wall = time.perf_counter() - started
    return {"wall_seconds": wall, "outcomes": outcomes, "releases": releases}


REFERENCES = ("noop", "one_write")


async def hammer(stack: Stack, args: argparse.Namespace, recorder: Recorder, kind: str, requests: int) -> dict:
    """A reference endpoint (``noop`` or ``one_write``) under the same server and the same number of
    keep-alive connections as the replay; each connection its own row for ``one_write``."""
    per_connection = max(1, requests // args.concurrency)

    async def client(index: int) -> None:
        browser = Browser(stack.port, recorder)
        try:
            for _ in range(per_connection):
                if kind == "noop":
                    reply = await browser.request(kind, "GET", "/bench/noop/", accept="text/plain")
                else:
                    reply = await browser.api(kind, "POST", f"/bench/write/{index}/", {})
                if reply.status != 200:
                    raise RuntimeError(f"the {kind} endpoint answered {reply.status}")
        finally:
            browser.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(args.concurrency)))
    wall = time.perf_counter() - started
    return {"requests": per_connection * args.concurrency, "seconds": wall}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    stack = Stack(
        database=args.database,
        gunicorn_workers=args.gunicorn_workers,
        gunicorn_threads=args.gunicorn_threads,
        gunicorn_worker_class=args.gunicorn_worker_class,
    )

    def terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    try:
        setup = set_up(stack, args)
        recorder = Recorder()
        sampler = report.RssSampler(stack)
        sampler.start()
        # The reference endpoints are measured in two rounds, just before and just after the replay: the
        # host's speed drifts from minute to minute, and one round after the replay alone made the same
        # code's submit/do-nothing ratio anything from 0.14 to 0.31.
        references, reference_recorder = {kind: [] for kind in REFERENCES}, Recorder()

        def measure_references() -> None:
            if not args.noop_requests:
                return
            if not references["noop"]:  # the first round: a warm-up, not recorded, with every process up
                asyncio.run(hammer(stack, args, Recorder(), "noop", 1000))
            for kind in REFERENCES:
                references[kind].append(
                    asyncio.run(hammer(stack, args, reference_recorder, kind, args.noop_requests // 2))
                )

        measure_references()
        cpu_before = report.cpu_seconds(stack)
        result = asyncio.run(replay(stack, setup["studies"], args, recorder))
        result["cpu_seconds"] = report.cpu_delta(cpu_before, report.cpu_seconds(stack))
        measure_references()
        sampler.stop()
        figures = report.build(
            args=args,
            stack=stack,
            setup=setup,
            result=result,
            recorder=recorder,
            references=references,
            reference_recorder=reference_recorder,
            sampler=sampler,
        )
    except KeyboardInterrupt:
        print("interrupted: stopping the stack", file=sys.stderr)
        return 130
    finally:
        stack.stop()
    print(report.dumps(figures))
    return 0 if figures["check"]["match"] and not figures["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
