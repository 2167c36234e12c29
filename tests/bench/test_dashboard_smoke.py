"""bench/dashboard.py end to end on the demo release, one request a page (SQLite, about a minute): skipped unless
BENCH_SMOKE=1."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("BENCH_SMOKE") != "1", reason="set BENCH_SMOKE=1 to run")
TASKS = ("sst2", "mnli", "conll03", "wikiann", "squad2", "record")


def test_dashboard_fills_every_slot_and_times_the_overview_and_each_study_page():
    command = [sys.executable, "bench/dashboard.py", "--data", "demo", "--rounds", "1", "--requests", "1"]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    # six studies of split 1, four conditions (0/10/20/30 shots), three workers each: every slot filled
    assert (result["built"]["studies"], result["built"]["participations"]) == (6, 6 * 4 * 3)
    assert set(result["pages"]) == {"overview"} | {f"clues-{task}-split1" for task in TASKS}
    for page, by_code in result["pages"].items():
        assert by_code["after"]["p50_ms"] > 0 and by_code["after"]["queries"] > 0, page
        assert len(by_code["after"]["warm_ms"]) == len(by_code["after"]["after_exclusion_warmed_ms"]) == 1, page
