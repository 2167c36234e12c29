"""Profile the worker's hot path (GET current, POST submit) in-process with cProfile.

    .venv/bin/python bench/profile_session.py [--task conll03] [--items 300] [--timed 50]
        [--sort cumulative] [--clock cpu]

Creates a fresh PostgreSQL database (bench_profile, dropped at the end),
imports the task from the CLUES release, opens one study, lets one worker in
through the entry link with Django's test client under production settings
(DEBUG off, without the replay's instrumentation), and profiles ``--items``
rounds of what the page does per test item: POST /api/session/submit/, whose
response carries the next item. Prints the SQL of a round, the top of the
profile, and the milliseconds (wall and this process's CPU) per round.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from annotation.rehearsal.crowd import FOLDERS, Policy, read_gold, shown_key  # noqa: E402
from bench.stack import Stack  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="conll03", choices=sorted(FOLDERS))
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--clues", type=Path, default=REPO.parent / "shared" / "clues")
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--timed", type=int, default=50, help="rounds timed without the profiler")
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="cpu: attribute this thread's CPU time only (waits on the database count as nothing)",
    )
    args = parser.parse_args()
    stack = Stack(database="bench_profile")
    try:
        stack.start_services()
        stack.create_database()
        os.environ.update(stack.environment())
        os.environ["ALLOWED_HOSTS"] = "testserver"
        os.environ["DJANGO_SETTINGS_MODULE"] = "annotation.settings.production"  # without the replay's instrumentation
        os.environ["STATIC_MANIFEST"] = "0"  # no collectstatic needed; static files are not profiled
        import django

        django.setup()
        import random

        from django.core.management import call_command
        from django.test import Client

        from annotation.models import Study
        from annotation.services.studies import studies
        from tasks_app.importing.service import import_clues
        from tasks_app.models import Task

        call_command("migrate", verbosity=0)
        import_clues(path=args.clues, slugs=[args.task], build_nested=True)
        study = studies.study_create(task=Task.objects.get(slug=args.task), slug="profile", shots=[0])
        studies.change_status(study=study, to_status=Study.Status.OPEN)
        gold = read_gold(args.clues, task=args.task)
        policy = Policy(random.Random(1), p_gold=0.8)
        client = Client(enforce_csrf_checks=True)
        assert client.post("/join/profile/?worker_id=profiler", {"choice": "start"}).status_code == 302
        assert client.get("/work/").status_code == 200
        token = client.cookies["csrftoken"].value
        headers = {"HTTP_X_CSRFTOKEN": token}
        assert client.post("/api/session/start/", "{}", content_type="application/json", **headers).status_code == 200

        session = client.get("/api/session/current/", HTTP_ACCEPT="application/json").json()
        labels = [label["name"] for label in session["task"]["labels"]]
        state = {"item": session["item"]}

        def round_trip() -> None:
            """What the page does per test item: POST the answer, whose response carries the next item."""
            item = state["item"]
            answer = policy.answer(item, labels, gold.get(shown_key(item), frozenset()))
            body = {"item": item["item"], "confidence": 3, **answer.body} if not answer.skipped else {}
            reply = client.post("/api/session/submit/", body, content_type="application/json", **headers)
            assert reply.status_code == 200, reply.content
            state["item"] = reply.json()["next"]["item"]

        for _ in range(10):  # warm up
            round_trip()
        from collections import defaultdict

        from django.db import connection

        per_sql: dict[str, list[float]] = defaultdict(list)

        def timed(execute, sql, params, many, context):
            started = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                per_sql[sql[:150]].append((time.perf_counter() - started) * 1000)

        with connection.execute_wrapper(timed):
            for _ in range(50):
                round_trip()
        print("SQL per round (count, mean ms in execute):")
        for sql, times in sorted(per_sql.items(), key=lambda kv: -sum(kv[1])):
            print(f"  {len(times) / 50:4.1f} x {sum(times) / len(times):6.3f} ms  {sql}")
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(args.timed):
            round_trip()
        print(
            f"{(time.perf_counter() - started) / args.timed * 1000:.2f} ms wall, "
            f"{(time.process_time() - cpu) / args.timed * 1000:.2f} ms CPU of this process per round"
            f" over {args.timed} (no profiler)"
        )
        profiler = cProfile.Profile(time.thread_time) if args.clock == "cpu" else cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        for _ in range(args.items):
            round_trip()
        profiler.disable()
        if os.environ.get("PROFILE_OUT"):
            profiler.dump_stats(os.environ["PROFILE_OUT"])
        elapsed = time.perf_counter() - started
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
        print(out.getvalue())
        print(f"{elapsed / args.items * 1000:.2f} ms per round (POST submit) under cProfile")
        from django.db import connections

        connections.close_all()
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
