"""The replay's one JSON object: throughput, latencies, memory, queries and the check."""

from __future__ import annotations

import json
import os
import platform
import threading
from collections import Counter

from bench import verify
from bench.stats import count_summary, cpu_summary, gc_summary, latency_summary, pooled_rate

LATENCY_KINDS = ("entry", "page", "static", "start", "item", "submit", "skip", "reveal")


class RssSampler(threading.Thread):
    """Samples the servers' total resident memory every 0.2 s, keeping the peak of the sum."""

    def __init__(self, stack):
        super().__init__(daemon=True)
        self.stack = stack
        self.peak_total_kb: dict[str, int] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.2):
            for name, kb in self.stack.current_rss_kb().items():
                self.peak_total_kb[name] = max(self.peak_total_kb.get(name, 0), kb)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=2)


def cpu_seconds(stack) -> dict[str, float]:
    """CPU time so far of the harness itself, each server, and every postgres process on the machine."""
    from bench.stack import cpu_seconds as processes_cpu
    from bench.stack import descendants, postgres_cpu_seconds

    usage = os.times()
    result = {"client (this process)": usage.user + usage.system}
    for name, process in stack.processes.items():
        result[name] = sum(processes_cpu(descendants(process.pid)))
    result["postgres (all backends)"] = postgres_cpu_seconds()
    return result


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: round(after[name] - before.get(name, 0.0), 1) for name in after}


def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
        with open("/proc/meminfo") as f:
            mem_kb = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
    except OSError:
        mem_kb = 0
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "ram_gb": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
    }


def build(*, args, stack, setup, result, recorder, references, reference_recorder, sampler) -> dict:
    outcomes = result["outcomes"]
    wall = result["wall_seconds"]
    submissions = sum(len(recorder.latencies.get(kind, [])) for kind in ("submit", "skip"))
    requests = sum(len(v) for v in recorder.latencies.values())
    # Both reference endpoints are measured, or neither (--noop-requests 0).
    rates = {kind: pooled_rate(rounds) for kind, rounds in references.items() if rounds}
    noop_rate = rates.get("noop")
    submit_rate = submissions / wall
    check = verify.check(outcomes=outcomes, study_slugs=[s["study"] for s in setup["studies"].values()])
    errors = [f"{o.worker_id}: {e}" for o in outcomes for e in o.errors]
    unknown_gold = sum(o.unknown_gold for o in outcomes)
    if unknown_gold:
        errors.append(f"{unknown_gold} items whose gold the harness could not find in the release")
    statuses = {kind: dict(sorted(by.items())) for kind, by in recorder.statuses.items()}
    hwm = stack.peak_rss_kb()
    return {
        "command": "bench/replay.py "
        + " ".join(
            f"--{k.replace('_', '-')} {v}"
            for k, v in sorted(vars(args).items())
            if k in ("concurrency", "p_gold", "seed")
        ),
        "machine": machine(),
        "server": {
            "gunicorn": f"gthread, {stack.gunicorn_workers} workers x {stack.gunicorn_threads} threads"
            if stack.gunicorn_worker_class == "gthread"
            else f"sync, {stack.gunicorn_workers} workers",
            "database": "PostgreSQL (fresh database)",
            "celery": "solo pool on Redis",
            "settings": "annotation.settings.bench, DEBUG=0, DB_CONN_MAX_AGE=600",
        },
        "setup_seconds": setup["seconds"],
        "setup_notes": setup["notes"],
        "concurrency": args.concurrency,
        "replay": {
            "wall_seconds": round(wall, 2),
            "submissions": submissions,
            "test_annotations": sum(len(o.test) for o in outcomes),
            "training_annotations": sum(len(o.training) for o in outcomes),
            "http_requests": requests,
            "submissions_per_second": round(submit_rate, 1),
            "requests_per_second": round(requests / wall, 1),
            "workers": dict(Counter(o.state for o in outcomes)),
            "replacements": sum(1 for o in outcomes if o.state in ("excluded", "abandoned")),
            "abandon_releases": result["releases"],
            "cpu_seconds": result["cpu_seconds"],
        },
        "latency": {
            kind: latency_summary(recorder.latencies.get(kind, []))
            for kind in LATENCY_KINDS
            if kind in recorder.latencies
        },
        **{
            kind: None
            if kind not in rates
            else {
                "requests": sum(r["requests"] for r in rounds),
                "requests_per_second": round(rates[kind], 1),
                "before_and_after_the_replay": [round(r["requests"] / r["seconds"], 1) for r in rounds],
                "latency": latency_summary(reference_recorder.latencies.get(kind, [])),
                "queries": count_summary(reference_recorder.queries.get(kind, [])),
            }
            for kind, rounds in references.items()
        },
        "submit_vs_noop": None
        if noop_rate is None
        else {
            "submissions_per_second_over_noop": round(submit_rate / noop_rate, 3),
            "replay_requests_per_second_over_noop": round(requests / wall / noop_rate, 3),
            # the most any submission could reach: the cheapest durable write over doing nothing
            "one_write_over_noop": round(rates["one_write"] / noop_rate, 3),
            "submissions_per_second_over_one_write": round(submit_rate / rates["one_write"], 3),
        },
        "db_queries_per_request": {kind: count_summary(v) for kind, v in sorted(recorder.queries.items())},
        "server_cpu_ms_per_request": {kind: cpu_summary(v) for kind, v in sorted(recorder.server_cpu_us.items())},
        "garbage_collection": gc_summary(recorder.gc_us),  # in the replay's requests (X-GC-us)
        "peak_rss_mb": {
            "sum_of_process_peaks": {k: round(v / 1024, 1) for k, v in hwm.items()},
            "peak_of_sampled_total": {k: round(v / 1024, 1) for k, v in sampler.peak_total_kb.items()},
        },
        "http_statuses": statuses,
        "check": check,
        "errors": errors[:20],
    }


def dumps(figures: dict) -> str:
    return json.dumps(figures, indent=2, default=str)
