"""Rehearse a study before launch: a copy of its design on a scratch database, a simulated crowd through the
real HTTP flow, every invariant across features checked (annotation.rehearsal, docs/studies.md).

manage.py rehearse_study sst2-split1                          # Markdown report; exit 1 if an invariant fails
manage.py rehearse_study sst2-split1 --workers-per-condition 2 --seed 7 --format json -o report.json
"""

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.rehearsal.runner import RehearsalError, rehearse
from annotation.rehearsal.scratch import ScratchUnavailable
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Run a copy of a study on a scratch database with a simulated crowd and check every invariant."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The study to rehearse (its rows are only read).")
        parser.add_argument(
            "--workers-per-condition", type=int, default=None, help="Instead of the study's own number (e.g. 2)."
        )
        parser.add_argument("--seed", type=int, default=0, help="Fixes every simulated worker's draws.")
        parser.add_argument(
            "--concurrency",
            type=int,
            default=None,
            help="Simulated workers at a time (default: every slot of the design at once, 3 to 32).",
        )
        parser.add_argument(
            "--scratch",
            choices=["sqlite", "postgresql"],
            default=None,
            help="The scratch database's kind (default: like the real database).",
        )
        parser.add_argument(
            "--keep", action="store_true", help="Keep the run's files (SQLite scratch file, server log, facts)."
        )
        parser.add_argument("--format", choices=["markdown", "json"], default="markdown")
        parser.add_argument("-o", "--output", default="", help="Write the report to this file (default: stdout).")

    def handle(self, *args: Any, slug: str, **options: Any) -> None:
        study = Study.objects.select_related("task").filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        if options["workers_per_condition"] is not None and options["workers_per_condition"] < 1:
            raise CommandError("--workers-per-condition must be at least 1.")
        try:
            report = rehearse(
                study=study,
                workers_per_condition=options["workers_per_condition"],
                seed=options["seed"],
                concurrency=None if options["concurrency"] is None else max(1, options["concurrency"]),
                engine=options["scratch"],
                keep=options["keep"],
                log=lambda line: self.stderr.write(line),
            )
        except (RehearsalError, ScratchUnavailable) as exc:
            raise CommandError(f"The rehearsal could not run: {exc}") from None
        text = report.json() if options["format"] == "json" else report.markdown()
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"Report written to {options['output']}.")
        else:
            self.stdout.write(text)
        if not report.passed:
            failed = ", ".join(i.name for i in report.invariants if not i.passed)
            raise CommandError(f"Invariants failed: {failed}")
