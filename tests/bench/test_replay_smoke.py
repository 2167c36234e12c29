"""bench/replay.py end to end on the demo's SST-2 study, two workers at a time (the production stack: PostgreSQL,
Redis, Celery, gunicorn; about 90 s): skipped unless BENCH_SMOKE=1."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("BENCH_SMOKE") != "1", reason="set BENCH_SMOKE=1 to run")


def test_replay_fills_the_study_and_its_table_agrees_with_the_answers_given():
    command = [sys.executable, "bench/replay.py", "--clues", "tasks_app/demo_data", "--tasks", "sst2"]
    command += ["--concurrency", "2", "--noop-requests", "20", "--timeout", "300"]
    command += ["--gunicorn-workers", "1", "--gunicorn-threads", "4", "--database", f"bench_replay_smoke_{os.getpid()}"]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["errors"] == [] and result["check"]["match"], result["check"]
    # four conditions (0/10/20/30 shots) of three workers; by default one abandons and one fails training
    workers = result["replay"]["workers"]
    assert (workers["completed"], workers["abandoned"]) == (4 * 3, 1)
    statuses = {code for by_kind in result["http_statuses"].values() for code in by_kind}
    assert not any(code.startswith("5") for code in statuses), result["http_statuses"]
