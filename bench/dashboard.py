"""Benchmark: the staff dashboard's pages over a whole replication, server time and queries per page.

    .venv/bin/python bench/dashboard.py [--benchmark clues|fewclue] [--data real|demo] \
        [--code before=DIR --code after=.] [--rounds 3] [--requests 10]

Builds a SQLite database once (not timed, with this checkout's code): the
release imported as the README imports it (``--data real``: ../shared/clues,
or ../shared/fewclue/datasets; ``--data demo``: the bundled demo release, a
few items per task, to try the harness quickly), the studies created as the
README creates them (CLUES: the six studies of split 1; FewCLUE: the nine,
``create_fewclue_studies``) and opened (with the README's posted reward:
the launch check opens no study without one), and every slot of every condition
filled with a completed worker (CLUES: 6 × 4 × 3 = 72; FewCLUE: 9 × 1 × 3 =
27): bulk-created participations with their events and locked responses on
the condition's real training and test items, each answered the way a worker
answers (right with a per-worker skill of 0.6-0.95, else a wrong label or a
wrong span of the text, 4 % skipped; the score the scorer gives).

Then each checkout named with ``--code`` (a ``git worktree`` or an unpacked
``git archive`` of another commit, run on this ``.venv``) is measured in a
process of its own on a copy of that file, alternately, round by round:
with ``annotation.settings.production`` (DEBUG off, the local-memory cache),
a staff user logged in with Django's test ``Client``, it requests the
overview (``/dashboard/``) and every study page (``/dashboard/study/<slug>/``),
once to warm up, then ``--requests`` times each, in turn; each request's
wall time inside the process (no network: the server's time) and its SQL
statements (``CaptureQueriesContext``) are recorded. Nothing is written
between them, so a checkout that keeps its figures serves them kept. Each
page is then requested once after a running worker's write (``after_write_ms``:
the activity a heartbeat records, on one participation of its study), once
after staff exclude one of its completed workers (``after_exclusion_ms``:
the completed workers' analyses change, as after a completion), once after
another exclusion with the study's figures computed first as a Celery
worker computes them after the change (``warm_ms``, the worker's time;
``after_exclusion_warmed_ms``, the view's), and once
with the cache emptied (``computed_ms``: the view that computes every
figure, as the first one after a restart of a server whose cache is its own
memory). Prints one JSON object: per checkout and page, p50/p95/max
milliseconds and the query count, and those views' milliseconds (one
a round) and the computing view's queries.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent.parent / "shared" if (REPO.parent.parent / "shared").is_dir() else REPO.parent / "shared"
# The reward a study posts (the README's walk-through's): without one the launch check keeps it a draft.
REWARD = "1.50"
ENV = {
    "DJANGO_SETTINGS_MODULE": "annotation.settings.production",
    "DEBUG": "0",  # production's settings refuse DEBUG, which a researcher's shell may export (the README's first step)
    "SECRET_KEY": "bench-dashboard-not-secret",
    "SECURE_SSL_REDIRECT": "0",
    "SECURE_COOKIES": "0",
    "SECURE_HSTS_SECONDS": "0",
    "ALLOWED_HOSTS": "testserver,localhost,127.0.0.1",
    "CACHE_URL": "",
    "CELERY_TASK_ALWAYS_EAGER": "1",
}


def _setup(repo: Path, database: Path) -> None:
    os.environ.update(ENV)
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    sys.path.insert(0, str(repo))
    import django

    django.setup()


# --- Building the replication ------------------------------------------------------


def _answer(example, task, rng: random.Random, skill: float):
    """(status, answer strings, spans) as a worker of this skill answers the item."""
    from annotation.models import Response

    gold = list(example.gold_answers)
    if rng.random() < 0.04:
        return Response.Status.SKIPPED, [], []
    right = rng.random() < skill
    if task.is_classification:
        labels = list(task._bench_labels)
        if right and gold:
            return Response.Status.ANSWERED, [gold[0]], []
        others = [label for label in labels if label not in gold] or labels
        return Response.Status.ANSWERED, [rng.choice(others)], []
    text = example.context_text
    if right and gold and gold[0] and gold[0] in text:
        start = text.index(gold[0])
        return Response.Status.ANSWERED, [gold[0]], [(start, start + len(gold[0]), gold[0])]
    if right and (not gold or not gold[0]):  # an unanswerable item: right is the empty set
        return Response.Status.NO_ANSWER, [], []
    words = list(re.finditer(r"\S+", text))
    if not words:
        return Response.Status.NO_ANSWER, [], []
    i = rng.randrange(len(words))
    start, end = words[i].start(), words[min(len(words) - 1, i + rng.randint(0, 2))].end()
    return Response.Status.ANSWERED, [text[start:end]], [(start, end, text[start:end])]


def build(database: Path, *, benchmark: str, data: str, seed: int) -> dict:
    _setup(REPO, database)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from annotation.models import AnswerSpan, Participation, ParticipationEvent, Response, Study, Worker
    from annotation.services.session import samples
    from tasks_app.scoring import s1, stored_skip_score

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    quiet = {"stdout": io.StringIO()}
    if benchmark == "clues":
        source = SHARED / "clues" if data == "real" else REPO / "tasks_app" / "demo_data"
        call_command("import_clues", str(source), build_nested=True, **quiet)
        call_command("create_clues_studies", split=1, open=True, posted_reward=REWARD, **quiet)
    else:
        source = SHARED / "fewclue" / "datasets" if data == "real" else REPO / "tests" / "fixtures" / "fewclue"
        call_command("import_fewclue", str(source), **quiet)
        small = {} if data == "real" else {"training_items": 2, "test_sample": 3}  # the fixture: 10 training, 3 test
        call_command("create_fewclue_studies", open=True, posted_reward=REWARD, seed=seed, **small, **quiet)
    closed = list(Study.objects.exclude(status=Study.Status.OPEN).values_list("slug", flat=True))
    if closed:  # the launch check refused them: a dashboard of drafts is not the one measured
        raise SystemExit(f"not opened: {', '.join(closed)}")
    setup_seconds = time.perf_counter() - started

    started = time.perf_counter()
    rng = random.Random(seed)
    now = timezone.now().replace(microsecond=0)
    counts = {"participations": 0, "responses": 0}
    for study in Study.objects.select_related("task").order_by("pk"):
        task = study.task
        task._bench_labels = list(task.labels.values_list("name", flat=True))
        for condition in study.conditions.order_by("shots"):
            steps = [
                ("training", samples.training_ids(condition)),
                ("test", samples.test_ids(condition, task_id=task.pk)),
            ]
            examples = {e.pk: e for e in task.examples.filter(pk__in=[i for _, ids in steps for i in ids])}
            for slot in range(study.workers_per_condition):
                worker = Worker.objects.create(
                    platform="prolific", external_id=f"{study.slug}-{condition.shots}-{slot}"
                )
                begun = now - timedelta(hours=2, minutes=rng.randint(0, 600))
                ended = begun + timedelta(minutes=rng.randint(15, 60))
                p = Participation.objects.create(
                    study=study,
                    condition=condition,
                    task=task,
                    worker=worker,
                    slot_index=slot,
                    state=Participation.State.COMPLETED,
                    consented_at=begun,
                    finished_at=ended,
                    completion_code="C0MPL3TE",
                )
                Participation.objects.filter(pk=p.pk).update(created_at=begun, last_activity_at=ended)
                path = ["claimed", "consented"] + (["training"] if condition.shots else []) + ["test", "completed"]
                ParticipationEvent.objects.bulk_create(
                    ParticipationEvent(participation=p, from_state=a if i else "", to_state=b, at=begun)
                    for i, (a, b) in enumerate(zip([""] + path, path, strict=False))
                )
                skill = rng.uniform(0.6, 0.95)
                rows, spans = [], []
                clock = begun
                for phase, ids in steps:
                    for position, example_id in enumerate(ids):
                        example = examples[example_id]
                        status, strings, found = _answer(example, task, rng, skill)
                        active = rng.randint(2_000, 25_000)
                        shown, clock = clock, clock + timedelta(milliseconds=active + 400)
                        skipped = status == Response.Status.SKIPPED
                        rows.append(
                            Response(
                                participation=p,
                                example=example,
                                phase=phase,
                                position=position,
                                status=status,
                                answer=strings,
                                label=strings[0] if strings and task.is_classification else "",
                                score=stored_skip_score(example.gold_answers)
                                if skipped
                                else s1(strings, example.gold_answers),
                                confidence=None if skipped else rng.randint(2, 5),
                                shown_at=shown,
                                submitted_at=clock,
                                active_ms=active,
                                blur_count=rng.choice((0, 0, 0, 1)),
                            )
                        )
                        spans.append(found)
                created = Response.all_objects.bulk_create(rows)
                AnswerSpan.objects.bulk_create(
                    AnswerSpan(response=r, start=a, end=b, text=t)
                    for r, found in zip(created, spans, strict=True)
                    for a, b, t in found
                )
                counts["participations"] += 1
                counts["responses"] += len(rows)
    get_user_model().objects.create_superuser("bench", "bench@example.org", "bench")
    connection.close()  # SQLite: the last connection's close folds the write-ahead log into the file copied
    return {
        **counts,
        "studies": Study.objects.count(),
        "setup_seconds": round(setup_seconds, 1),
        "fill_seconds": round(time.perf_counter() - started, 1),
    }


# --- Measuring ---------------------------------------------------------------------


def measure(repo: Path, database: Path, *, requests: int) -> dict:
    """One checkout: every page once to warm up, then ``requests`` times each, in turn."""
    _setup(repo, database)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, override_settings, setup_test_environment
    from django.utils import timezone

    from annotation.models import Participation, Study

    setup_test_environment()  # the test Client's hooks, nothing else (the database is the bench file)
    # Static URLs without collectstatic's manifest (the hashed name is a dictionary lookup in production).
    storages = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    override_settings(STORAGES=storages).enable()
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    pages = {"overview": "/dashboard/"}
    pages.update({s.slug: f"/dashboard/study/{s.slug}/" for s in Study.objects.order_by("pk")})
    times: dict[str, list[float]] = {name: [] for name in pages}
    queries: dict[str, int] = {}
    for round_ in range(requests + 1):
        for name, url in pages.items():
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                response = client.get(url)
                elapsed = time.perf_counter() - started
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}")
            queries[name] = len(captured.captured_queries)
            if round_:  # the first is the warm-up
                times[name].append(elapsed * 1000)
    # Each page once more after a running worker's write: the activity a heartbeat or an answer records
    # (lifecycle.touch's UPDATE) on one participation of the page's study, the overview's on the last study.
    after_write: dict[str, float] = {}
    for name, url in pages.items():
        rows = Participation.objects.all() if name == "overview" else Participation.objects.filter(study__slug=name)
        worker = rows.order_by("-pk" if name == "overview" else "pk").first()
        Participation.objects.filter(pk=worker.pk).update(last_activity_at=timezone.now())
        started = time.perf_counter()
        response = client.get(url)
        after_write[name] = (time.perf_counter() - started) * 1000
    # Each page once more after a completed worker's verdict changes: staff exclude one (the service an
    # admin's action calls), which changes the completed workers' analyses as a completion does.
    from annotation.services.verdicts import overrides

    after_exclusion: dict[str, float] = {}
    for name, url in pages.items():
        rows = Participation.objects.filter(state=Participation.State.COMPLETED)
        rows = rows if name == "overview" else rows.filter(study__slug=name)
        overrides.override(rows.order_by("-pk").first(), admit=False, reason="bench", actor=None)
        started = time.perf_counter()
        response = client.get(url)
        after_exclusion[name] = (time.perf_counter() - started) * 1000
    # Each page once more after another such exclusion, the study's figures computed first as a Celery worker
    # computes them once the change commits (annotation.reporting.warming: with a worker and a shared cache);
    # ``warm_ms`` is the worker's time, ``after_exclusion_warmed_ms`` the view's. A checkout without it: none.
    try:
        from annotation.reporting import warming
    except ImportError:
        warming = None
    warm: dict[str, float] = {}
    after_exclusion_warmed: dict[str, float] = {}
    for name, url in pages.items() if warming else ():
        rows = Participation.objects.filter(state=Participation.State.COMPLETED)
        rows = rows if name == "overview" else rows.filter(study__slug=name)
        excluded = rows.order_by("-pk").first()
        overrides.override(excluded, admit=False, reason="bench", actor=None)
        started = time.perf_counter()
        warming.warm(excluded.study_id)
        warm[name] = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        response = client.get(url)
        after_exclusion_warmed[name] = (time.perf_counter() - started) * 1000
    # Each page once more with the cache emptied: the view that computes every figure (the first view after
    # a restart of a server whose cache is its own memory), in the same warm process.
    computed: dict[str, float] = {}
    computed_queries: dict[str, int] = {}
    for name, url in pages.items():
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            computed[name] = (time.perf_counter() - started) * 1000
        computed_queries[name] = len(captured.captured_queries)
    return {
        "times": times,
        "queries": queries,
        "after_write": after_write,
        "after_exclusion": after_exclusion,
        "warm": warm,
        "after_exclusion_warmed": after_exclusion_warmed,
        "computed": computed,
        "computed_queries": computed_queries,
    }


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", choices=("clues", "fewclue"), default="clues")
    parser.add_argument("--data", choices=("real", "demo"), default="real")
    parser.add_argument("--code", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=10, help="Requests per page and round (after one warm-up).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", metavar="FILE", help="Keep the built database in FILE (reused if it exists).")
    parser.add_argument("--measure", nargs=2, metavar=("REPO", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        result = measure(Path(args.measure[0]).resolve(), Path(args.measure[1]), requests=args.requests)
        print(json.dumps(result))
        return
    codes = dict(c.split("=", 1) for c in args.code) or {"after": "."}
    workdir = Path(tempfile.mkdtemp(prefix="bench-dashboard-"))
    try:
        database = Path(args.keep).resolve() if args.keep else workdir / "built.sqlite3"
        built = {}
        if not database.exists():
            built = build(database, benchmark=args.benchmark, data=args.data, seed=args.seed)
        runs: dict[str, list[dict]] = {name: [] for name in codes}
        for _ in range(args.rounds):
            for name, directory in codes.items():
                copy = workdir / f"{name}.sqlite3"
                shutil.copyfile(database, copy)
                env = {**os.environ, **ENV}
                out = subprocess.run(
                    [
                        sys.executable,
                        str(Path(__file__).resolve()),
                        "--requests",
                        str(args.requests),
                        "--measure",
                        str(Path(directory).resolve()),
                        str(copy),
                    ],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=directory,
                )
                if out.returncode:
                    raise SystemExit(f"{name}: {out.stderr[-3000:]}")
                runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        report: dict = {
            "benchmark": args.benchmark,
            "data": args.data,
            "built": built,
            "rounds": args.rounds,
            "requests": args.requests,
            "pages": {},
        }
        for name, rounds in runs.items():
            for page in rounds[0]["times"]:
                every = [t for r in rounds for t in r["times"][page]]
                report["pages"].setdefault(page, {})[name] = {
                    "p50_ms": round(statistics.median(every), 1),
                    "p95_ms": round(_quantile(every, 0.95), 1),
                    "max_ms": round(max(every), 1),
                    "queries": rounds[-1]["queries"][page],
                    "p95_by_round": [round(_quantile(r["times"][page], 0.95), 1) for r in rounds],
                    # The first view after a running worker's write, after a completed worker's exclusion, and
                    # the page computing every figure (the cache emptied), once a round each.
                    "after_write_ms": [round(r["after_write"][page], 1) for r in rounds],
                    "after_exclusion_ms": [round(r["after_exclusion"][page], 1) for r in rounds],
                    # The same with the figures a Celery worker computed first (none where the checkout has none).
                    "warm_ms": [round(r["warm"][page], 1) for r in rounds if page in r["warm"]],
                    "after_exclusion_warmed_ms": [
                        round(r["after_exclusion_warmed"][page], 1)
                        for r in rounds
                        if page in r["after_exclusion_warmed"]
                    ],
                    "computed_ms": [round(r["computed"][page], 1) for r in rounds],
                    "computed_queries": rounds[-1]["computed_queries"][page],
                }
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
