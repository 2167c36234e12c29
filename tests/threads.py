"""Threads in tests: every wait is bounded, so a lock that is never released fails the test instead of hanging it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

# Generous for a loaded 2-core CI host; far below the suite's per-test limit (pytest-timeout, pyproject.toml).
WAIT_SECONDS = 120.0


def bounded_barrier(parties: int, seconds: float = WAIT_SECONDS) -> threading.Barrier:
    """A barrier whose wait() raises BrokenBarrierError after ``seconds`` (a thread that never arrived)."""
    return threading.Barrier(parties, timeout=seconds)


def start_threads(target: Callable[..., Any], args: Iterable[tuple[Any, ...]]) -> list[threading.Thread]:
    """One started daemon thread per argument tuple (a stuck thread cannot keep the test process alive)."""
    threads = [threading.Thread(target=target, args=a, daemon=True) for a in args]
    for t in threads:
        t.start()
    return threads


def join_all(threads: Iterable[threading.Thread], seconds: float = WAIT_SECONDS) -> None:
    """Join every thread within ``seconds`` in all; fail the test when one is still running."""
    deadline = time.monotonic() + seconds
    threads = list(threads)
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"{len(stuck)} thread(s) still running after {seconds:g} s (a lock never released?): {stuck}"
