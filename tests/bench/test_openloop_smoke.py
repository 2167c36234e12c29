"""bench/openloop.py end to end with tiny parameters (SQLite, about 20 s): skipped unless BENCH_SMOKE=1."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("BENCH_SMOKE") != "1", reason="set BENCH_SMOKE=1 to run")


def test_openloop_reports_percentiles_per_rate_and_the_floor(tmp_path):
    out = tmp_path / "ol.json"
    command = [sys.executable, "bench/openloop.py", "--db", "sqlite", "--rates", "10,20", "--duration", "2"]
    command += ["--warmup", "0.5", "--sessions", "10", "--floor-seconds", "1", "--output", str(out)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert [r["rate_per_s"] for r in result["rates"]] == [10.0, 20.0]
    assert all(r["latency"]["p99_ms"] > 0 and r["unanswered"] == 0 for r in result["rates"])
    assert set(result["rates"][0]["statuses"]) == {"200"}
    assert result["floor"]["pooled_per_s"] > 0
