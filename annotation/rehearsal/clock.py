"""The rehearsal's clock: the time its server and its steps read, which the rehearsal moves instead of waiting.

A rehearsal must see a worker go idle past the study's inactivity limit, a closed study's grace period end
and a training-filter group time out, without waiting minutes for any of it. Every time the application reads
goes through ``django.utils.timezone.now`` (the services' ``timezone.now()`` and the models' ``auto_now``),
so that one function is the time source: in a process started with the rehearsal settings
(``annotation.settings.rehearsal``, the only module that defines ``REHEARSAL_CLOCK_FILE``), the app's
``ready()`` replaces it with ``FileClock.now``: the real time plus the offset written in the clock file. The
rehearsal (this process) moves the offset forward with ``move``; the server's and the steps' processes read it
on their next call. Production and the base settings have no such setting, so nothing there can move the time
(``tests/rehearsal/test_clock.py``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from django.utils import timezone


class FileClock:
    """The real time plus the offset (seconds) in ``path``; the file is read again only when it changed."""

    def __init__(self, path: str | Path, real: Callable[[], datetime]):
        self.path = Path(path)
        self.real = real
        self.stamp: tuple[int, int, int] | None = None
        self.offset = timedelta(0)

    def read(self) -> timedelta:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return timedelta(0)  # not written yet: no move so far
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self.stamp:
            self.offset = timedelta(seconds=float(self.path.read_text(encoding="ascii").strip() or 0))
            self.stamp = stamp
        return self.offset

    def now(self) -> datetime:
        return self.real() + self.read()


def install(path: str | Path) -> FileClock:
    """Make ``timezone.now`` this process's rehearsal clock (called by ``AnnotationConfig.ready`` only when
    the settings name a clock file)."""
    real = getattr(timezone.now, "__self__", None)
    clock = FileClock(path, real.real if isinstance(real, FileClock) else timezone.now)
    timezone.now = clock.now  # Django's own function, replaced for this process
    return clock


def offset(path: str | Path) -> float:
    """The seconds the clock in ``path`` has been moved so far."""
    try:
        return float(Path(path).read_text(encoding="ascii").strip() or 0)
    except FileNotFoundError:
        return 0.0


def move(path: str | Path, seconds: float) -> float:
    """Move the clock in ``path`` forward by ``seconds`` (never back); the new offset. Written to a new file
    that replaces the old one, so that a reader never sees half a number."""
    if seconds < 0:
        raise ValueError("the rehearsal clock only moves forward")
    path = Path(path)
    new = offset(path) + seconds
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".clock-")
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(repr(new))
    os.replace(tmp, path)
    return new
