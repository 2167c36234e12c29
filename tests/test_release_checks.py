"""scripts/release_checks.sh, the long runs before a release that CI leaves out (docs/development.md)."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(*checks: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "DJANGO_SETTINGS"))}
    return subprocess.run(
        ["bash", "scripts/release_checks.sh", *checks],
        cwd=REPO,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_an_unknown_check_is_refused():
    done = _run("nonsense")
    assert done.returncode == 2 and "unknown check: nonsense" in done.stderr


@pytest.mark.timeout(600)
def test_the_lifecycle_check_runs_the_model_and_mutation_says_it_is_not_set_up(tmp_path):
    # Two examples of the long profile's shape: the check's wiring, not its length.
    done = _run("lifecycle", "mutation", RELEASE_CHECKS_DIR=str(tmp_path), LIFECYCLE_EXAMPLES="2")
    assert done.returncode == 1
    assert "passed" in done.stdout and "failed: mutation" in done.stderr
    assert "mutation: not set up yet" in done.stderr


@pytest.mark.timeout(600)
def test_the_rehearsals_set_the_release_up_as_the_readme_does(tmp_path):
    # No study rehearsed (RELEASE_STUDIES empty): the set-up only, on the bundled demo release (a whole
    # rehearsal takes minutes; tests/rehearsal covers rehearse_study itself).
    database = tmp_path / "release.sqlite3"
    done = _run(
        "rehearsals",
        CLUES_DIR=str(REPO / "tasks_app" / "demo_data"),
        RELEASE_STUDIES="",
        RELEASE_DATABASE_URL=f"sqlite:///{database}",
        RELEASE_CHECKS_DIR=str(tmp_path / "reports"),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "clues-sst2-split1: created (draft)" in done.stdout
    assert "-- rehearsals: ok in" in done.stdout and database.exists()
