"""One step of a rehearsal inside its scratch database (annotation.rehearsal.steps); ``rehearse_study`` runs
these with DATABASE_URL set to the scratch database. Not for direct use: it refuses any other database.

``serve`` keeps one process for all of a rehearsal's steps (Django starts once): each line on stdin is a
JSON request ``{"step": ..., "slug": ..., ...options}``, each answer one line on stdout after ``REPLY``.
"""

import json
import sys
import traceback
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.rehearsal import steps
from tasks_app.management.base import ProjectCommand

STEPS = ["prepare", "sweep", "close", "prolific", "check"]


def run_step(step: str, slug: str, options: dict[str, Any]) -> Any:
    if step == "prepare":
        return steps.prepare(
            fixture=options["fixture"],
            slug=slug,
            workers_per_condition=options.get("workers_per_condition"),
            second_slug=options["second_slug"],
        )
    if step == "sweep":
        return steps.sweep(slug=slug)
    if step == "close":
        return steps.close(slug=slug)
    if step == "prolific":
        return steps.prolific(slug=slug)
    if step == "check":
        facts = json.loads(Path(options["facts"]).read_text(encoding="utf-8"))
        return steps.check(slug=slug, facts=facts)
    raise CommandError(f"unknown step {step!r}; one of {', '.join(STEPS)}")


class Command(ProjectCommand):
    help = "Internal: one step of manage.py rehearse_study, run on its scratch database only."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("step", choices=[*STEPS, "serve"])
        parser.add_argument("--slug", default="")
        parser.add_argument("--fixture", default="")
        parser.add_argument("--workers-per-condition", type=int, default=None)
        parser.add_argument("--second-slug", default="")
        parser.add_argument("--facts", default="", help="JSON file of what the crowd and the stand-in saw.")

    def handle(self, *args: Any, step: str, slug: str, **options: Any) -> None:
        try:
            steps.check_scratch()
        except steps.NotScratch as exc:
            raise CommandError(str(exc)) from None
        if step != "serve":
            if not slug:
                raise CommandError("--slug is required")
            self.stdout.write(json.dumps(run_step(step, slug, options), default=str))
            return
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            try:
                reply = {"result": run_step(request.pop("step"), request.pop("slug"), request)}
            except Exception:  # the rehearsal reports it and stops; this process carries on until told
                reply = {"error": traceback.format_exc()[-4000:]}
            sys.stdout.write(steps.REPLY + json.dumps(reply, default=str) + "\n")
            sys.stdout.flush()
