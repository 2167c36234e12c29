"""The suite's xdist groups hold: tests marked ``xdist_group(name)`` run on one worker (scripts/test.sh runs
``--dist loadgroup``). The groups share a resource (a Redis database, the multi-node stack) or a fixture built
once (a rehearsal, the README's walk-through); a pytest release where pytest-xdist's grouping silently stops
(pytest 9.2 with pytest-xdist 3.8, pytest-xdist#1386) would run them on any worker, so this test runs a
grouped pair on two workers, as the suite does, and finds them on one."""

import re
import subprocess
import sys

GROUPED = """
import pytest

@pytest.mark.xdist_group("shared")
def test_first_of_the_group(): pass

@pytest.mark.xdist_group("shared")
def test_second_of_the_group(): pass

def test_alone_one(): pass

def test_alone_two(): pass
"""


def test_a_group_runs_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:django", "-n", "2"]
        + ["--dist", "loadgroup", "-v", "-o", "addopts=", "test_grouped.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran_on = {
        name: worker for worker, name in re.findall(r"\[(gw\d)\].*?PASSED test_grouped\.py::(test_\w+)", done.stdout)
    }
    assert set(ran_on) == {"test_first_of_the_group", "test_second_of_the_group", "test_alone_one", "test_alone_two"}
    assert ran_on["test_first_of_the_group"] == ran_on["test_second_of_the_group"], done.stdout
