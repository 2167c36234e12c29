"""The rehearsal's clock: the time its server and steps read is the real time plus what the rehearsal moved,
and no settings but the rehearsal's can turn it on (production reads the real time whatever the environment
says)."""

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from annotation.rehearsal import clock

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"
FIXED = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

# What a process reports: whether the setting exists, and the gap between timezone.now() and datetime.now().
PROBE = """
import json, django
from datetime import UTC, datetime
django.setup()
from django.conf import settings
from django.utils import timezone
gap = (timezone.now() - datetime.now(UTC)).total_seconds()
print(json.dumps({"setting": hasattr(settings, "REHEARSAL_CLOCK_FILE"), "gap_minutes": round(gap / 60)}))
"""


def probe(settings_module: str, clock_file: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "DJANGO_SETTINGS_MODULE")}
    env.update(DJANGO_SETTINGS_MODULE=settings_module, REHEARSAL_CLOCK_FILE=str(clock_file), **extra)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, cwd=MANAGE.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_clock_is_the_real_time_plus_what_was_moved(tmp_path):
    path = tmp_path / "clock"
    moved = clock.FileClock(path, real=lambda: FIXED)
    assert moved.now() == FIXED  # no file yet: not moved
    assert clock.move(path, 120 * 60) == 7200
    assert moved.now() == FIXED + timedelta(minutes=120)
    clock.move(path, 61 * 60)
    assert moved.now() == FIXED + timedelta(minutes=181) and clock.offset(path) == 181 * 60


def test_the_clock_never_moves_back(tmp_path):
    with pytest.raises(ValueError, match="only moves forward"):
        clock.move(tmp_path / "clock", -1)


def test_production_settings_cannot_move_the_time(tmp_path):
    """REHEARSAL_CLOCK_FILE in the environment of a production (or development) process, naming a clock moved
    by ten hours: the setting does not exist there and timezone.now() is the real time."""
    path = tmp_path / "clock"
    clock.move(path, 10 * 3600)
    production = probe("annotation.settings.production", path, SECRET_KEY="x" * 50)
    assert production == {"setting": False, "gap_minutes": 0}
    assert probe("annotation.settings.base", path, DEBUG="1") == {"setting": False, "gap_minutes": 0}


def test_the_rehearsal_settings_read_the_moved_clock(tmp_path):
    path = tmp_path / "clock"
    clock.move(path, 10 * 3600)
    assert probe("annotation.settings.rehearsal", path, SECRET_KEY="x" * 50) == {"setting": True, "gap_minutes": 600}


def test_the_rehearsal_settings_need_a_clock_file():
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "REHEARSAL_CLOCK_FILE")}
    env.update(DJANGO_SETTINGS_MODULE="annotation.settings.rehearsal", SECRET_KEY="x" * 50)
    done = subprocess.run([sys.executable, str(MANAGE), "check"], env=env, capture_output=True, text=True)
    assert done.returncode != 0 and "REHEARSAL_CLOCK_FILE is required" in done.stderr
