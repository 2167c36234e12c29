"""bench/peers.py's CPU per submission phase, timed from the harness's progress lines."""

import io
import os

from bench.peers import PhaseCPU


def test_each_submission_phase_gets_its_cpu_per_submission_and_the_rate_it_allows():
    meter = PhaseCPU(os.getpid(), [os.getpid()])
    progress = io.BytesIO(
        b"[human-perf r1] setup A: 120 items\n"
        b"[human-perf r1] (a) sequential x100\n"
        b"[human-perf r1]     -> 250.0/s p50 3.9 ms\n"
        b"[human-perf r1] (b) concurrent x200 on 16 threads\n"
        b"[human-perf r1]     -> 300.0/s p50 40.0 ms errors {}\n"
        b"[human-perf r2] (a) sequential x100\n"  # a phase that never ends (the run was cut short)
    )
    meter.follow(progress)
    assert set(meter.phases) == {(1, "sequential"), (1, "concurrent")}
    result = {"runs": [{"sequential": {"per_s": 250.0}, "concurrent": {"per_s": 300.0}}]}
    meter.add_to(result)
    sequential = result["runs"][0]["sequential"]
    assert sequential["per_s"] == 250.0 and sequential["client_cpu_ms"] >= 0
    assert set(sequential) >= {"server_cpu_ms", "database_cpu_ms", "server_database_cpu_ms", "cpu_ceiling_per_s"}


def test_the_ceiling_is_one_core_in_turn_sequentially_and_every_core_concurrently():
    # 2 ms of client, server and database CPU per submission
    sequential = PhaseCPU.per_submission("sequential", 1000, 0.5, 1.0, 0.5)
    assert sequential["cpu_ms"] == 2.0 and sequential["cpu_ceiling_per_s"] == 500.0
    concurrent = PhaseCPU.per_submission("concurrent", 1000, 0.5, 1.0, 0.5)
    assert concurrent["cpu_ceiling_per_s"] == 500.0 * (os.cpu_count() or 1)
    assert concurrent["server_database_cpu_ms"] == 1.5
