"""bench/request_cpu.py end to end with tiny counts (SQLite, about 30 s): skipped unless BENCH_SMOKE=1."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("BENCH_SMOKE") != "1", reason="set BENCH_SMOKE=1 to run")


def test_request_cpu_reports_each_kind_and_its_floors(tmp_path):
    out = tmp_path / "cpu.json"
    command = [sys.executable, "bench/request_cpu.py", "--code", "this=.", "--db", "sqlite", "--rounds", "1"]
    command += ["--workers", "10", "--requests", "200", "--items", "50", "--warmup-workers", "2"]
    command += ["--warmup-requests", "4", "--output", str(out)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    medians = json.loads(out.read_text())["median_server_cpu_ms"]["sqlite"]
    assert set(medians) == {"start", "current", "submit", "skip", "refused", "redirect", "bare"}
    # CPU time comes in clock ticks (10 ms): a floor over a few requests can round to nothing
    assert all(medians[kind]["this"] is not None and medians[kind]["this"] >= 0 for kind in medians)
    assert medians["start"]["this"] > 0
