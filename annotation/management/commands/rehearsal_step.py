"""One step of a rehearsal inside its scratch database (annotation.rehearsal.steps); ``rehearse_study`` runs
these with DATABASE_URL set to the scratch database. Not for direct use: it refuses any other database."""

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.rehearsal import steps


class Command(BaseCommand):
    help = "Internal: one step of manage.py rehearse_study, run on its scratch database only."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("step", choices=["prepare", "sweep", "close", "prolific", "check"])
        parser.add_argument("--slug", required=True)
        parser.add_argument("--fixture", default="")
        parser.add_argument("--workers-per-condition", type=int, default=None)
        parser.add_argument("--second-slug", default="")
        parser.add_argument("--facts", default="", help="JSON file of what the crowd and the stand-in saw.")

    def handle(self, *args: Any, step: str, slug: str, **options: Any) -> None:
        try:
            steps.check_scratch()
        except steps.NotScratch as exc:
            raise CommandError(str(exc)) from None
        result: Any
        if step == "prepare":
            result = steps.prepare(
                fixture=options["fixture"],
                slug=slug,
                workers_per_condition=options["workers_per_condition"],
                second_slug=options["second_slug"],
            )
        elif step == "sweep":
            result = steps.sweep(slug=slug)
        elif step == "close":
            result = steps.close(slug=slug)
        elif step == "prolific":
            result = steps.prolific(slug=slug)
        else:
            facts = json.loads(Path(options["facts"]).read_text(encoding="utf-8"))
            result = steps.check(slug=slug, facts=facts)
        self.stdout.write(json.dumps(result, default=str))
