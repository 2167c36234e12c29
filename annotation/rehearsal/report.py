"""The rehearsal's report: each invariant (name, passed, detail), the crowd, the Prolific runs, wall time and
per-request latency; as Markdown for people and JSON for machines."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from annotation.rehearsal.client import Recorder
from annotation.reporting import planning


@dataclass(frozen=True)
class Invariant:
    name: str
    passed: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


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
    ) -> Report:
        checks = [Invariant(i["name"], bool(i["passed"]), i["detail"]) for i in invariants]
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
        return cls(
            study=study,
            seed=seed,
            scratch={k: v for k, v in scratch.items() if k != "url"},
            design={k: v for k, v in design.items() if k != "staff"},  # the scratch account's password stays out
            invariants=checks,
            wall_seconds=round(wall_seconds, 1),
            crowd_seconds=round(crowd_seconds, 1),
            latency=timings,
            crowd=crowd,
            prolific=prolific,
            planning=planning_section(study),
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
            "latency": self.latency,
            "crowd": self.crowd,
            "prolific": {k: {kk: vv for kk, vv in v.items() if kk != "rows"} for k, v in self.prolific.items()},
            "planning": self.planning,
        }

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
            f"{self.seed}); the real study's rows were not touched. Wall time {self.wall_seconds} s "
            f"(the crowd: {self.crowd_seconds} s).",
            "",
            "## Invariants",
            "",
            "| | invariant | detail |",
            "|---|---|---|",
        ]
        for i in self.invariants:
            detail = i.detail.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {'ok' if i.passed else '**FAIL**'} | {i.name} | {detail} |")
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
