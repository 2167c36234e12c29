"""bench/table_scale.py end to end with 2,000 annotations (PostgreSQL at 127.0.0.1:5432, about 30 s): skipped
unless BENCH_SMOKE=1."""

import json
import os
import subprocess
import sys

import psycopg
import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("BENCH_SMOKE") != "1", reason="set BENCH_SMOKE=1 to run")


def test_table_scale_stores_the_annotations_builds_the_table_streams_the_export_and_drops_its_database():
    name = f"bench_table_smoke_{os.getpid()}"  # a database of its own: the benchmark drops it first and last
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}"}
    command = [sys.executable, "bench/table_scale.py", "--annotations", "2000", "--workers", "2", "--repeats", "1"]
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    # six tasks x four conditions x two workers; the export is a header line and one line an annotation
    assert (result["participations"], result["annotations"], result["export_lines"]) == (6 * 4 * 2, 2000, 2001)
    assert len(result["zero_shot_cells"]) == 6 and result["table_seconds_max"] > 0
    with psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres") as admin:
        assert admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None
