"""The rehearsal's report: each invariant (name, passed, detail), the crowd, the Prolific runs, wall time and
per-request latency; as Markdown for people and JSON for machines."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from annotation.rehearsal.client import Recorder
from annotation.reporting import planning
from annotation.services.studies.launch import LaunchCheck


@dataclass(frozen=True)
class Invariant:
    name: str
    passed: bool
    detail: str
    not_exercised: list[str] = field(default_factory=list)  # what the crowd never reached: not shown as "ok"

    @property
    def mark(self) -> str:
        if not self.passed:
            return "**FAIL**"
        return "ok, partly not exercised" if self.not_exercised else "ok"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail, "not_exercised": self.not_exercised}


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), nearest rank."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def latency(recorder: Recorder) -> dict[str, dict[str, Any]]:
    result = {}
    for kind, values in sorted(recorder.latencies.items()):
        result[kind] = {
            "requests": len(values),
            "p50_ms": round(percentile(values, 50), 1),
            "p99_ms": round(percentile(values, 99), 1),
            "statuses": {str(k): v for k, v in sorted(recorder.statuses.get(kind, {}).items())},
        }
    every = [v for values in recorder.latencies.values() for v in values]
    if every:
        result["all"] = {
            "requests": len(every),
            "p50_ms": round(percentile(every, 50), 1),
            "p99_ms": round(percentile(every, 99), 1),
        }
    return result


def planning_section(study_slug: str) -> dict[str, Any]:
    """Sample-size planning from the real study's pilot (annotation.reporting.planning): each cell's 95%
    interval width with 3, 5 and 10 workers per condition, the cost at the study's rate, the time a worker
    takes; or, before any pilot, why there is none (``error``)."""
    return planning.rehearsal_section(study_slug)


# The phases of a run, as the report names them.
PHASES = {
    "copy": "copy (scratch database from the template, design loaded)",
    "server_start": "server start (gunicorn, beyond the copy)",
    "crowd": "crowd",
    "server_stop": "server stop",
    "prolific": "Prolific operations",
    "checks": "checks",
    "cleanup": "cleanup",
    "planning": "planning",
}


@dataclass
class Report:
    study: str
    seed: int
    scratch: dict[str, Any]
    design: dict[str, Any]
    invariants: list[Invariant]
    wall_seconds: float
    crowd_seconds: float
    latency: dict[str, dict[str, Any]]
    crowd: list[dict[str, Any]] = field(default_factory=list)
    prolific: dict[str, Any] = field(default_factory=dict)
    planning: dict[str, Any] | None = None  # planning_section's
    launch: dict[str, Any] = field(default_factory=dict)  # the real study's launch check (services.studies.launch)
    launch_lines: list[str] = field(default_factory=list)
    assumed: dict[str, str] = field(default_factory=dict)  # what the copy set that the study lacks, e.g. base_reward
    # Where the wall time went, by phase (PHASES), and how far the rehearsal moved its clock.
    seconds: dict[str, float] = field(default_factory=dict)
    clock_minutes: float = 0.0

    @classmethod
    def build(
        cls,
        *,
        study: str,
        seed: int,
        scratch: dict[str, Any],
        design: dict[str, Any],
        invariants: list[dict[str, Any]],
        recorder: Recorder,
        wall_seconds: float,
        crowd_seconds: float,
        crowd: list[dict[str, Any]],
        prolific: dict[str, Any],
        launch: LaunchCheck | None = None,
        seconds: dict[str, float] | None = None,
        clock_minutes: float = 0.0,
    ) -> Report:
        checks = [
            Invariant(i["name"], bool(i["passed"]), i["detail"], list(i.get("not_exercised") or [])) for i in invariants
        ]
        timings = latency(recorder)
        server_errors = {
            kind: codes
            for kind, row in timings.items()
            for code, codes in row.get("statuses", {}).items()
            if code.startswith("5")
        }
        checks.append(
            Invariant(
                "no server error",
                not server_errors and bool(timings),
                f"{timings.get('all', {}).get('requests', 0)} requests, p50 {timings.get('all', {}).get('p50_ms')} ms, "
                f"p99 {timings.get('all', {}).get('p99_ms')} ms; 5xx by kind: {server_errors or 'none'}",
            )
        )
        planning_started = time.perf_counter()
        plan = planning_section(study)
        seconds = dict(seconds or {})
        seconds["planning"] = round(time.perf_counter() - planning_started, 2)
        return cls(
            study=study,
            seed=seed,
            scratch={k: v for k, v in scratch.items() if k != "url"},
            design={k: v for k, v in design.items() if k != "staff"},  # the scratch account's password stays out
            invariants=checks,
            wall_seconds=round(wall_seconds + seconds["planning"], 1),
            crowd_seconds=round(crowd_seconds, 1),
            latency=timings,
            crowd=crowd,
            prolific=prolific,
            planning=plan,
            launch=launch.as_dict() if launch else {},
            launch_lines=launch.lines() if launch else [],
            assumed=dict(design.get("assumed") or {}),
            seconds=seconds,
            clock_minutes=clock_minutes,
        )

    @property
    def passed(self) -> bool:
        return all(i.passed for i in self.invariants)

    def as_dict(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "passed": self.passed,
            "seed": self.seed,
            "scratch": self.scratch,
            "design": self.design,
            "invariants": [i.as_dict() for i in self.invariants],
            "wall_seconds": self.wall_seconds,
            "crowd_seconds": self.crowd_seconds,
            "seconds": self.seconds,
            "clock_minutes": self.clock_minutes,
            "latency": self.latency,
            "crowd": self.crowd,
            "prolific": {k: {kk: vv for kk, vv in v.items() if kk != "rows"} for k, v in self.prolific.items()},
            "planning": self.planning,
            "launch_check": self.launch,
            "assumed": self.assumed,
            "not_exercised": self.not_exercised,
        }

    @property
    def not_exercised(self) -> list[str]:
        return list(dict.fromkeys(name for i in self.invariants for name in i.not_exercised))

    def time_line(self) -> str:
        """Where the wall time went, in the order it was spent."""
        parts = [f"{PHASES.get(k, k)} {v:.1f} s" for k, v in self.seconds.items()]
        return (
            f"Wall time {self.wall_seconds} s: "
            + ", ".join(parts)
            + (f"; the clock moved {self.clock_minutes:g} min, nobody waited for it." if self.clock_minutes else ".")
        )

    def json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, default=str)

    def markdown(self) -> str:
        verdict = "every invariant holds" if self.passed else "SOME INVARIANTS FAIL"
        failed = sum(not i.passed for i in self.invariants)
        lines = [
            f"# Rehearsal of {self.study}: {verdict}",
            "",
            f"{len(self.invariants) - failed} of {len(self.invariants)} invariants hold. A copy of the design ran on "
            f"a scratch {self.scratch.get('engine')} database ({self.design.get('workers_per_condition')} workers "
            f"per condition, conditions {', '.join(f'{s}-shot' for s in self.design.get('shots', []))}; seed "
            f"{self.seed}); the real study's rows were not touched."
            + (f" Served by {self.scratch['server']}." if self.scratch.get("server") else ""),
            "",
            self.time_line()
            if self.seconds
            else f"Wall time {self.wall_seconds} s (the crowd: {self.crowd_seconds} s).",
        ]
        if self.not_exercised:
            lines += ["", f"Not exercised by the crowd, so not checked: {'; '.join(self.not_exercised)}."]
        if self.assumed:
            assumed = ", ".join(f"{k} = {v}" for k, v in self.assumed.items())
            lines += ["", f"The study lacks what a run needs; the copy assumed {assumed} (see the launch check)."]
        lines += [
            "",
            "## Launch check",
            "",
            *(self.launch_lines or ["Not computed."]),
            "",
            "## Invariants",
            "",
            "| | invariant | detail |",
            "|---|---|---|",
        ]
        for i in self.invariants:
            detail = i.detail.replace("|", "\\|").replace("\n", " ")
            if i.not_exercised:
                detail = detail.rstrip(".") + ". Not exercised: " + "; ".join(i.not_exercised) + "."
            lines.append(f"| {i.mark} | {i.name} | {detail} |")
        lines += ["", "## Requests", "", "| kind | requests | p50 ms | p99 ms |", "|---|---:|---:|---:|"]
        for kind, row in self.latency.items():
            lines.append(f"| {kind} | {row['requests']} | {row['p50_ms']} | {row['p99_ms']} |")
        lines += [
            "",
            "## The simulated crowd",
            "",
            "Accuracy is what the worker was simulated with (the chance of answering an item with its gold); "
            "measured is the test S1 the app scored for them (skips score 0), where they reached the test.",
            "",
            "| worker | behaviour | accuracy | measured | last seen by the worker | in the database | code |",
            "|---|---|---:|---:|---|---|---|",
        ]
        for w in self.crowd:
            seen = w["state"] + (f" ({w['refused']}: {w['page_title']})" if w["refused"] else "")
            end = w.get("end_state") or "-"  # none: the worker never took a slot
            measured = "-" if w.get("measured") is None else f"{w['measured']:.2f}"
            cells = [w["worker_id"], w["behaviour"], f"{w['p_gold']:.2f}", measured, seen, end, w["code"]]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "## Prolific (the stand-in)", ""]
        for name, run in self.prolific.items():
            counts = run.get("counts") or {}
            lines.append(f"- {name}: {run.get('error') or counts or 'nothing to do'}")
        lines += ["", "## Sample-size planning", ""]
        plan = self.planning or {}
        lines.append(plan.get("markdown") or plan.get("error") or "Not computed.")
        return "\n".join(lines) + "\n"
