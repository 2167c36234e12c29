"""Benchmark: the human-performance table and the raw-annotations export at 1,000,000 annotations.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_table .venv/bin/python bench/table_scale.py

Creates the (throwaway) PostgreSQL database named in DATABASE_URL (default
postgres://postgres@127.0.0.1:5432/bench_table), dropping it first if it
exists, migrates it and generates six studies (one per CLUES task) with four
conditions (0/10/20/30 shots) of completed workers, whose stored test
annotations add up to --annotations rows (COPY, not the ORM). Span tasks also
get one AnswerSpan per answered item. Then it times the full table over all
six studies (the same build_table the app uses), and streams the raw
annotations JSONL export to a file, sampling the process RSS at intervals.
Prints one JSON object; drops the database at the end unless --keep.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_table"


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def recreate_database(url: str, *, drop_only: bool = False) -> None:
    import psycopg
    from psycopg import sql

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    if not name or parsed.scheme not in ("postgres", "postgresql", "pgsql"):
        raise SystemExit(f"DATABASE_URL must be a PostgreSQL URL with a database name, not {url!r}")
    admin = psycopg.connect(
        host=parsed.hostname,
        port=parsed.port or 5432,
        user=parsed.username,
        password=parsed.password,
        dbname="postgres",
        autocommit=True,
    )
    with admin.cursor() as cursor:
        cursor.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if not drop_only:
            cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    admin.close()


def generate(*, annotations: int, workers: int, seed: int) -> dict:
    """Six studies x 4 conditions x `workers` completed participations; `annotations` test rows in all."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from annotation.models import Condition, Participation, ParticipationEvent, Study, Worker
    from annotation.services.studies import studies
    from tasks_app.models import Example, ExampleSet, ExampleSetItem, Task, TrainingSplit

    rng = random.Random(seed)
    tasks = list(Task.objects.order_by("display_order"))
    shots_levels = (0, 10, 20, 30)
    n_participations = len(tasks) * len(shots_levels) * workers
    per, extra = divmod(annotations, n_participations)
    n_test = per + (1 if extra else 0)
    now = timezone.now()

    gold_of: dict[int, list[tuple[int, str]]] = {}
    participations: list[tuple[int, int]] = []  # (participation id, task index)
    for t_index, task in enumerate(tasks):
        labels = list(task.labels.values_list("name", flat=True)) or ["Alpha", "Beta"]
        examples = Example.objects.bulk_create(
            Example(
                task=task,
                source_id=f"b{i}",
                fingerprint=f"{task.slug}-{i:064d}"[-64:],
                context=f"{labels[i % len(labels)]} and {labels[(i + 1) % len(labels)]} here ({i})",
                question="q",
                gold_answers=[labels[i % len(labels)]],
            )
            for i in range(n_test + 30)
        )
        test_set = ExampleSet.objects.create(task=task, role="test")
        ExampleSetItem.objects.bulk_create(
            ExampleSetItem(example_set=test_set, example=e, position=i) for i, e in enumerate(examples[:n_test])
        )
        gold_of[t_index] = [(e.pk, e.gold_answers[0]) for e in examples[:n_test]]
        split = TrainingSplit.objects.create(task=task, number=1, is_nested=True)
        training_sets = {}
        for shots in (10, 20, 30):
            es = ExampleSet.objects.create(task=task, role="train", split=split, shots=shots)
            ExampleSetItem.objects.bulk_create(
                ExampleSetItem(example_set=es, example=e, position=i)
                for i, e in enumerate(examples[n_test : n_test + shots])
            )
            training_sets[shots] = es
        study = Study(
            slug=f"bench-{task.slug}",
            name=f"Bench {task.name}",
            task=task,
            workers_per_condition=workers,
            status="closed",
        )
        studies.study_save(study=study)
        for shots in shots_levels:
            condition = Condition.objects.create(study=study, shots=shots, training_set=training_sets.get(shots))
            for slot in range(workers):
                worker = Worker.objects.create(platform="prolific", external_id=f"{task.slug}-{shots}-{slot}")
                p = Participation.objects.create(
                    study=study, condition=condition, task=task, worker=worker, slot_index=slot, state="completed"
                )
                ParticipationEvent.objects.bulk_create(
                    [
                        ParticipationEvent(
                            participation=p, from_state="", to_state="claimed", at=now - timedelta(hours=1)
                        ),
                        ParticipationEvent(participation=p, from_state="test", to_state="completed", at=now),
                    ]
                )
                participations.append((p.pk, t_index))

    columns = (
        "participation_id",
        "example_id",
        "phase",
        "position",
        "status",
        "label",
        "answer",
        "confidence",
        "score",
        "shown_at",
        "submitted_at",
        "active_ms",
        "blur_count",
    )
    stamp = now.isoformat()
    started = time.perf_counter()
    written = 0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        for index, (pid, t_index) in enumerate(participations):
            items = per + (1 if index < extra else 0)
            skill = rng.uniform(0.6, 0.95)
            buffer = io.StringIO()
            for position, (example_id, gold) in enumerate(gold_of[t_index][:items]):
                roll = rng.random()
                if roll < 0.04:
                    status, answer, label, score, confidence = "skipped", "[]", "", 0.0, "\\N"
                elif roll < skill:
                    status, answer, label, score, confidence = "answered", json.dumps([gold]), gold, 1.0, "5"
                else:
                    status, answer, label, score, confidence = "answered", '["wrong"]', "wrong", 0.0, "2"
                buffer.write(
                    f"{pid}\t{example_id}\ttest\t{position}\t{status}\t{label}\t{answer}\t{confidence}\t"
                    f"{score}\t{stamp}\t{stamp}\t{rng.randint(800, 9000)}\t0\n"
                )
            # psycopg 3's COPY (the driver requirements.txt pins); the text format, as written above
            with raw.copy(f"COPY annotation_response ({', '.join(columns)}) FROM STDIN") as copy:
                copy.write(buffer.getvalue())
            written += items
        copy_seconds = time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute("""
            INSERT INTO annotation_answerspan (response_id, start, "end", text)
            SELECT r.id, 0, char_length(r.answer->>0), r.answer->>0
            FROM annotation_response r
            JOIN annotation_participation p ON p.id = r.participation_id
            JOIN tasks_app_task t ON t.id = p.task_id
            WHERE r.status = 'answered' AND t.kind = 'span'
        """)
        spans = cursor.rowcount
        span_seconds = time.perf_counter() - started
        cursor.execute("ANALYZE")
    return {
        "participations": len(participations),
        "annotations": written,
        "spans": spans,
        "test_items_per_task": n_test,
        "copy_seconds": round(copy_seconds, 2),
        "span_insert_seconds": round(span_seconds, 2),
    }


def time_table(repeats: int) -> dict:
    from annotation.models import Study
    from annotation.reporting.tables import build_table

    studies = list(Study.objects.select_related("task").order_by("task__display_order"))
    timings, table = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        table = build_table(studies=studies)
        timings.append(time.perf_counter() - started)
    cells = {t.slug: table.rows[0].cells[i].text() for i, t in enumerate(table.tasks)}
    return {
        "table_seconds_runs": [round(t, 3) for t in timings],
        "table_seconds_median": round(statistics.median(timings), 3),
        "table_seconds_max": round(max(timings), 3),
        "zero_shot_cells": cells,
    }


def stream_export(sample_every: int) -> dict:
    from annotation.models import Study
    from annotation.reporting.exports import iter_annotation_lines
    from annotation.reporting.options import MetricOptions

    studies = list(Study.objects.select_related("task"))
    samples = [rss_kb()]
    lines = 0
    size = 0
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+b") as out:
        for line in iter_annotation_lines(studies=studies, options=MetricOptions()):
            out.write(line.encode())
            lines += 1
            size += len(line)
            if lines % sample_every == 0:
                samples.append(rss_kb())
    samples.append(rss_kb())
    after_warmup = samples[2:] or samples
    return {
        "export_lines": lines,
        "export_bytes": size,
        "export_seconds": round(time.perf_counter() - started, 2),
        "rss_kb_samples": samples,
        "rss_kb_before": samples[0],
        "rss_kb_max": max(samples),
        "rss_kb_growth_after_first_samples": max(after_warmup) - min(after_warmup),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotations", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=35, help="Completed workers per condition.")
    parser.add_argument("--repeats", type=int, default=5, help="Timed runs of the table.")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--keep", action="store_true", help="Keep the database afterwards.")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL") or DEFAULT_URL
    recreate_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ["DEBUG"] = "0"  # no query log growing in memory
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use-0123456789")
    os.environ["DJANGO_SETTINGS_MODULE"] = "annotation.settings.production"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    try:
        call_command("migrate", verbosity=0)
        parsed = urlparse(url)
        result = {
            "database": f"{parsed.hostname}:{parsed.port or 5432}{parsed.path}",
            **generate(annotations=args.annotations, workers=args.workers, seed=args.seed),
        }
        result.update(time_table(args.repeats))
        result.update(stream_export(sample_every=max(1, args.annotations // 20)))
        result["table_target_met"] = result["table_seconds_max"] < 2.0
    finally:
        connection.close()
        if not args.keep:
            recreate_database(url, drop_only=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
