"""bench/ports.py: the port of every server the tests and benchmarks start on a port they chose."""

from __future__ import annotations

import random
import socket
from collections.abc import Sequence
from pathlib import Path

import pytest

from bench import ports


def test_the_port_is_below_the_ephemeral_range_and_not_privileged():
    first, _ = ports.ephemeral_range()
    for _ in range(20):
        port = ports.free_port()
        assert ports.LOWEST <= port < first


def test_the_port_can_be_bound():
    port = ports.free_port()
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen()


class Scripted(random.Random):
    """Chooses the given ports in order."""

    def __init__(self, picks: list[int]) -> None:
        super().__init__()
        self.picks = picks

    def choice(self, seq: Sequence[int]) -> int:
        return self.picks.pop(0)


def test_a_taken_port_is_replaced_by_another():
    port = ports.free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        assert not ports.is_free(port)
        fallback = ports.free_port()  # free now, and not the held one
        assert ports.free_port(choose=Scripted([port, port, fallback])) == fallback


def test_no_free_port_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(ports, "is_free", lambda port, host="127.0.0.1": False)
    with pytest.raises(RuntimeError, match="no free port"):
        ports.free_port()


def test_the_range_comes_from_the_kernel_setting(tmp_path: Path):
    setting = tmp_path / "ip_local_port_range"
    setting.write_text("40000\t50000\n")
    assert ports.ephemeral_range(setting) == (40000, 50000)
    assert ports.candidate_range((40000, 50000)) == range(30000, 40000)
    assert ports.candidate_range((5000, 60999)) == range(1024, 5000)  # never a privileged port
    assert ports.ephemeral_range(tmp_path / "missing") == ports.DEFAULT_EPHEMERAL
    with pytest.raises(RuntimeError, match="no room"):
        ports.candidate_range((1025, 60999))


def test_each_xdist_worker_chooses_from_a_share_of_its_own():
    ports_ = range(30000, 30010)
    shares = [
        ports.worker_share(ports_, {"PYTEST_XDIST_WORKER": f"gw{n}", "PYTEST_XDIST_WORKER_COUNT": "3"})
        for n in range(3)
    ]
    assert [list(share) for share in shares] == [
        [30000, 30003, 30006, 30009],
        [30001, 30004, 30007],
        [30002, 30005, 30008],
    ]
    assert ports.worker_share(ports_, {}) == ports_  # outside xdist: the whole range
    assert ports.worker_share(ports_, {"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "1"}) == ports_


def test_under_xdist_the_port_is_this_workers(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    for _ in range(20):
        assert (ports.free_port() - ports.candidate_range().start) % 2 == 1
