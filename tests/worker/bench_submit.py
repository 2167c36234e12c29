"""Benchmark (not part of the suite): the submit request in-process, figures printed.

    .venv/bin/python -m pytest -q -s -p no:cacheprovider tests/worker/bench_submit.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python -m pytest -q -s tests/worker/bench_submit.py

It drives one worker through a 400-item classification test step with
Django's test client (no network, no server) and prints the latency
percentiles and the queries per submission. Issue 6's harness measures the
production stack over HTTP; this isolates the app's own share.
"""

import json
import statistics
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Participation
from tests.factories import make_classification_task
from tests.worker.conftest import make_participation

N_ITEMS = 400


@pytest.mark.django_db
def test_bench_submit(worker):
    task = make_classification_task(slug="bench", n_test=N_ITEMS, n_train=30)
    client = worker(make_participation(task, state=Participation.State.TEST))
    timings, queries = [], []
    item = client.get("/api/session/current/").json()["item"]
    ids = list(range(item["item"], item["item"] + N_ITEMS))
    for item_id in ids:
        body = json.dumps({"item": item_id, "label": "positive", "confidence": 3})
        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            response = client.post("/api/session/submit/", data=body, content_type="application/json")
            timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.content
        queries.append(len([q for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]))
    timings.sort()
    figures = {
        "database": connection.vendor,
        "submissions": len(timings),
        "p50_ms": round(statistics.median(timings), 2),
        "p99_ms": round(timings[int(len(timings) * 0.99) - 1], 2),
        "per_second_one_client": round(1000 / statistics.mean(timings)),
        "queries_per_submit": sorted(set(queries)),
    }
    print("\n" + json.dumps(figures))
