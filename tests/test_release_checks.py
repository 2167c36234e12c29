"""scripts/release_checks.sh, the long runs before a release that CI leaves out (docs/development.md)."""

import importlib.util
import os
import subprocess
import sys
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
def test_the_lifecycle_check_runs_the_model(tmp_path):
    # Two short examples through the long profile: the check's wiring, not its length.
    done = _run("lifecycle", RELEASE_CHECKS_DIR=str(tmp_path), LIFECYCLE_EXAMPLES="2", LIFECYCLE_STEPS="10")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "passed" in done.stdout and "-- lifecycle: ok in" in done.stdout


def test_the_mutation_check_runs_scripts_mutation_sh_and_fails_with_it(tmp_path):
    # An area that does not exist: scripts/mutation.sh refuses it before mutmut starts (a real run takes
    # minutes an area; docs/development.md#mutation-testing has the figures).
    done = _run("mutation", RELEASE_CHECKS_DIR=str(tmp_path), MUTATION_AREAS="nonsense")
    assert done.returncode == 1
    assert "usage: mutation.py AREA" in done.stderr and "failed: mutation" in done.stderr


def _mutation_script():
    spec = importlib.util.spec_from_file_location("mutation_script", REPO / "scripts" / "mutation.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_mutation_area_map_names_existing_modules_and_tests():
    script = _mutation_script()
    assert {"pay", "majority", "training", "attention", "integrity", "slots", "webhooks", "places", "bonus"} <= set(
        script.AREAS
    )
    for name, area in script.AREAS.items():
        assert area.modules and area.tests, name
        for module in area.modules:
            assert module.startswith("annotation/") and (REPO / module).is_file(), (name, module)
        for test in area.tests:
            assert test.startswith("tests/") and (REPO / test).is_file(), (name, test)
    # Each survivor argued equivalent names a mutant of an area's module.
    dotted = [m.removesuffix(".py").replace("/", ".") + "." for a in script.AREAS.values() for m in a.modules]
    for mutant, why in script.EQUIVALENT.items():
        assert why and any(mutant.startswith(prefix) for prefix in dotted), mutant


def test_the_mutation_script_lists_its_areas():
    done = subprocess.run(
        [".venv/bin/python", "scripts/mutation.py", "--list"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == list(_mutation_script().AREAS)


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
