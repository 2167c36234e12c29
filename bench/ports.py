"""A free TCP port on 127.0.0.1 for a server that the tests or the benchmarks start later.

Binding port 0 and closing the socket hands out a port from the kernel's ephemeral range, the range
that outgoing connections take their source ports from: between the choice and the server's own
bind, a connection to PostgreSQL or Redis could take it ("Address already in use"). So the port is
chosen below that range, where only a server binding it on purpose can be, and is checked free by
binding it; a port that is taken is replaced by another. Every server the tests and benchmarks start
on a port they chose takes it from here (servers that bind port 0 themselves and report it, as
Django's live server, need no choice). Under pytest-xdist each worker (and the servers its tests
start, which inherit its environment) chooses from a share of its own, so two workers never race for
one port.
"""

from __future__ import annotations

import os
import random
import socket
from collections.abc import Mapping
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
DEFAULT_EPHEMERAL = (32768, 60999)  # Linux's default, when the file cannot be read
SPAN = 10_000  # how many ports below the ephemeral range to choose from
LOWEST = 1024  # no privileged port
ATTEMPTS = 50


def ephemeral_range(path: Path = EPHEMERAL_RANGE) -> tuple[int, int]:
    """The kernel's range of source ports for outgoing connections (first, last)."""
    try:
        first, last = (int(part) for part in path.read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL
    return first, last


def candidate_range(ephemeral: tuple[int, int] | None = None) -> range:
    """The ports to choose from: up to SPAN ports just below the ephemeral range, none privileged."""
    first, _ = ephemeral or ephemeral_range()
    if first <= LOWEST + 1:
        raise RuntimeError(f"no room for a server port below the ephemeral range (it starts at {first})")
    return range(max(LOWEST, first - SPAN), first)


def worker_share(ports: range, environ: Mapping[str, str] = os.environ) -> range:
    """The ports of this pytest-xdist worker (gwN of M: every M-th port from the N-th); all outside xdist."""
    worker, count = environ.get("PYTEST_XDIST_WORKER", ""), environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not (worker.startswith("gw") and worker[2:].isdigit() and count.isdigit() and int(count) > 1):
        return ports
    return ports[int(worker[2:]) % int(count) :: int(count)]


def is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could bind ``port`` now (nothing listens or lingers on it)."""
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(*, host: str = "127.0.0.1", choose: random.Random | None = None) -> int:
    """A port below the ephemeral range that nothing holds now; a taken one is replaced by another."""
    ports = worker_share(candidate_range())
    pick = choose or random.SystemRandom()
    for _ in range(ATTEMPTS):
        port = pick.choice(ports)
        if is_free(port, host):
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1} after {ATTEMPTS} tries")
