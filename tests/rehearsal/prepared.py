"""A rehearsed study kept as a fixture: one real rehearsal (the smallest design that meets every behaviour)
runs once per test session on a SQLite scratch database; its rows are dumped and its facts kept, and each
fault-injection test loads them into its own database and runs the invariants in-process on them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.apps import apps
from django.core.management import call_command
from django.db import connection, transaction

from annotation.models import Study
from annotation.rehearsal import runner
from tasks_app.models import Task
from tests.rehearsal.demo_study import demo_study

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"
SLUG = "demo-sst2"
APPS = ["tasks_app", "annotation", "auth.user"]  # what the invariants read; no content types or permissions


@dataclass(frozen=True)
class Rehearsed:
    fixture: Path
    facts: dict[str, Any]
    slug: str


def rehearse_once(directory: Path) -> Rehearsed:
    """Rehearse the demo study (one 10-shot condition: the training filter is met; 5 workers per condition:
    room for every special behaviour) and keep its rows and facts in ``directory``; the demo study itself
    is rolled back. With REHEARSED_DIR set to the directory of an earlier run, that run is reused (while
    working on the invariants; never in CI)."""
    kept = Path(os.environ.get("REHEARSED_DIR") or directory)
    return rehearse_design(kept, lambda: demo_study(shots=(10,)), workers_per_condition=5)


def rehearse_design(directory: Path, make: Callable[[], Study], *, workers_per_condition: int | None) -> Rehearsed:
    """Rehearse the study ``make`` creates (rolled back afterwards) and keep its rows and facts in
    ``directory`` (reused when a run already left them there)."""
    kept = directory
    if (kept / "facts.json").exists():
        facts = json.loads((kept / "facts.json").read_text())
        # A run kept before its slug was written down is the demo's.
        slug = (kept / "slug").read_text() if (kept / "slug").exists() else SLUG
        return Rehearsed(kept / "rehearsed.json", facts, slug)
    with transaction.atomic():
        study = make()
        slug = study.slug
        report = runner.rehearse(study=study, workers_per_condition=workers_per_condition, engine="sqlite", keep=True)
        transaction.set_rollback(True)
    assert report.passed, [i for i in report.invariants if not i.passed]
    scratch = Path(report.scratch["directory"])
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.base",
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{scratch / 'rehearsal.sqlite3'}",
    }
    subprocess.run(
        [sys.executable, str(MANAGE), "dumpdata", "--all", *APPS, "-o", str(kept / "rehearsed.json")],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (kept / "facts.json").write_text((scratch / "facts.json").read_text(encoding="utf-8"), encoding="utf-8")
    (kept / "slug").write_text(slug)
    shutil.rmtree(scratch, ignore_errors=True)
    return Rehearsed(kept / "rehearsed.json", json.loads((kept / "facts.json").read_text()), slug)


def load(rehearsed: Rehearsed) -> Study:
    """The rehearsed rows in this test's database (the migrations' own catalog rows make way, as the
    rehearsal's ``prepare`` step does)."""
    tables = [
        m._meta.db_table for app in ("tasks_app", "annotation", "auth") for m in apps.get_app_config(app).get_models()
    ]
    before = _sequence_values(tables)
    Task.objects.all().delete()
    call_command("loaddata", str(rehearsed.fixture), verbosity=0)
    _never_behind(before)
    return Study.objects.select_related("task").get(slug=rehearsed.slug)


# loaddata sets each PostgreSQL sequence to the largest id it loaded. Sequences are not transactional: the
# test's rollback brings the migrations' rows back (ids up to the old value) but leaves the sequence behind
# them, and the next test on this database to insert a row would collide. So a sequence only moves forward.


def _sequence_values(tables: list[str]) -> dict[str, int]:
    if connection.vendor != "postgresql":
        return {}
    values = {}
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
            (sequence,) = cursor.fetchone()
            if sequence:
                cursor.execute(f"SELECT last_value FROM {sequence}")
                values[sequence] = cursor.fetchone()[0]
    return values


def _never_behind(before: dict[str, int]) -> None:
    with connection.cursor() as cursor:
        for sequence, value in before.items():
            cursor.execute(
                "SELECT setval(%s, GREATEST(%s, (SELECT last_value FROM " + sequence + ")))", [sequence, value]
            )
