"""Light stand-ins for the rehearsal engine, named by the REHEARSAL_ENGINE setting in the dashboard's tests
(the real one starts a server and a crowd: tests/rehearsal runs it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Report:
    study: str
    workers_per_condition: int | None
    seed: int
    passed: bool = True

    def markdown(self) -> str:
        return f"# Rehearsal of {self.study}: every invariant holds\n\nseed {self.seed}\n"

    def json(self) -> str:
        return json.dumps(
            {
                "study": self.study,
                "passed": self.passed,
                "seed": self.seed,
                "workers_per_condition": self.workers_per_condition,
            }
        )


def rehearse(*, study, workers_per_condition: int | None, seed: int, log: Callable[[str], None]) -> Report:
    log("scratch database: sqlite (stand-in)")
    log("filling the conditions")
    return Report(study=study.slug, workers_per_condition=workers_per_condition, seed=seed)


def failing(*, study, workers_per_condition: int | None, seed: int, log: Callable[[str], None]) -> Report:
    log("scratch database: sqlite (stand-in)")
    raise RuntimeError("the scratch server did not answer within 60 s")
