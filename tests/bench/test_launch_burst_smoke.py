"""bench/launch_burst.py end to end with tiny parameters (SQLite, about 40 s): skipped unless BENCH_SMOKE=1."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("BENCH_SMOKE") != "1", reason="set BENCH_SMOKE=1 to run")


def test_launch_burst_fills_the_design_and_tells_the_rest_it_is_full(tmp_path):
    out = tmp_path / "burst.json"
    command = [sys.executable, "bench/launch_burst.py", "--db", "sqlite", "--arrivals", "30", "--window", "2"]
    command += ["--consenting", "20", "--slots", "12", "--think", "0.5", "--output", str(out)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["ok"] and result["server_errors"] == 0
    assert (result["slots_held"], result["admitted"], result["told_full"]) == (12, 12, 8)
    assert result["latency"]["join"]["n"] == 30 and result["latency"]["consent"]["n"] == 20
    assert result["latency"]["first_submit"]["p99_ms"] > 0
