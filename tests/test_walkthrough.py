"""The README's two paths in one checkout: the demo, then "A study from start to finish" as written.

Runs the real scripts and commands in subprocesses (each its own database file under tmp_path, where the
README's defaults would put demo.sqlite3 and db.sqlite3).
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "DJANGO_SETTINGS"))}
    return {**env, "DEBUG": "1", **extra}


def _manage(env, *args) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.clues
@pytest.mark.timeout(900)
def test_the_walkthrough_works_as_written_after_the_demo(tmp_path, clues_dir):
    demo = subprocess.run(
        ["bash", "scripts/run_demo.sh", "--setup-only"],
        cwd=REPO,
        env=_env(DEMO_DB=str(tmp_path / "demo.sqlite3"), ADMIN_PASSWORD="pw"),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert (tmp_path / "demo.sqlite3").exists() and "the demo's own" in demo.stdout

    # The walk-through, on the database manage.py uses (db.sqlite3 by default; here in tmp_path).
    env = _env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    _manage(env, "migrate", "-v0")
    _manage(env, "import_clues", str(clues_dir), "--build-nested")
    created = _manage(env, "create_clues_studies", "--split", "1", "--open", "--posted-reward", "1.50")
    assert "clues-sst2-split1: created (open)" in created
    table = _manage(env, "human_performance", "--all", "--format", "markdown")
    assert "demo" not in table.lower()  # the demo's six studies are not pooled in

    # And the demo is still the demo, untouched.
    demo_env = _env(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}")
    demo_table = _manage(demo_env, "human_performance", "--all", "--format", "json")
    assert "demo-sst2" in demo_table and "clues-sst2" not in demo_table


def _walkthrough_commands() -> list[list[str]]:
    """The manage.py commands of the README's "A study from start to finish", as written there."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## A study from start to finish", 1)[1].split("\n1. ", 1)[0]
    joined = block.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith(".venv/bin/python manage.py "):
            commands.append(shlex.split(line)[2:])
    return commands


@pytest.mark.timeout(900)
def test_the_walkthrough_commands_run_as_written_on_the_bundled_release(tmp_path):
    """Every command of the walk-through, on a fresh database, with the bundled demo release in place of
    the CLUES release (the same format) and the example consent and survey files the README names."""
    commands = _walkthrough_commands()
    names = [c[0] for c in commands]
    assert names[:4] == ["migrate", "import_clues", "create_clues_studies", "configure_study"], names
    env = _env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    for args in commands:
        if args[0] == "runserver":
            continue  # serves until stopped: `check` stands in for it
        args = [a.replace("../shared/clues", "tasks_app/demo_data").replace("…", "a-long-password-1") for a in args]
        if args[0] == "attention_checks":  # the demo's test sets have 8 items, the release's hundreds
            args = ["4" if a == "40" else a for a in args]
        _manage(env, *args)
    _manage(env, "check")
    shown = _manage(env, "configure_study", "clues-sst2-split1", "--show")
    assert "What we record" in shown and "C0MPL3TE" in shown and "native" in shown


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_example_consent_and_survey_files_are_valid(language, db):
    from annotation.protocol.survey import validate_definition

    survey = json.loads((REPO / "docs" / "examples" / f"survey.{language}.json").read_text(encoding="utf-8"))
    validate_definition(survey)
    consent = (REPO / "docs" / "examples" / f"consent.{language}.md").read_text(encoding="utf-8")
    assert consent.startswith("# ") and len(consent) > 500
