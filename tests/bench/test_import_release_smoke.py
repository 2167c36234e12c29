"""bench/import_release.py end to end on the bundled demo release (SQLite, about 20 s): skipped unless BENCH_SMOKE=1."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("BENCH_SMOKE") != "1", reason="set BENCH_SMOKE=1 to run")
DEMO = REPO_ROOT / "tasks_app" / "demo_data"


def test_import_release_imports_the_demo_release_and_counts_what_its_files_hold():
    done = subprocess.run(
        [sys.executable, "bench/import_release.py", "tasks_app/demo_data"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    files = sorted(DEMO.glob("*/*.jsonl"))  # one set a file (a test set, a split's shot level), one item a line
    lines = sum(1 for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
    assert (result["tasks"], result["example_sets"], result["set_items"]) == (6, len(files), lines)
    assert result["import_seconds"] > 0 and result["reimport_seconds"] > 0
