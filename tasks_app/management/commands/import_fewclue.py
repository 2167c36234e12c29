"""python manage.py import_fewclue DIR: import FewCLUE's datasets/ folder (all nine tasks, or some)."""

from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from tasks_app.importing.fewclue.service import import_fewclue
from tasks_app.importing.fewclue.tasks import BY_FOLDER
from tasks_app.management.base import ProjectCommand
from tasks_app.management.commands._importing import run_import


class Command(ProjectCommand):
    help = (
        "Import FewCLUE's datasets/ folder (one folder per task: train_0..4, dev_0..4, train_few_all, dev_few_all, "
        "test_public and the label files). Prints every finding; any error aborts the whole run and writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The datasets/ folder of a FewCLUE checkout (see docs/importing.md).")
        parser.add_argument(
            "--task",
            action="append",
            dest="folders",
            choices=list(BY_FOLDER),
            metavar="TASK",
            help=f"Import only this task (repeatable): {', '.join(BY_FOLDER)}.",
        )
        parser.add_argument(
            "--details", action="store_true", help="After the summary by kind, list every finding, one per line."
        )
        parser.add_argument(
            "--json", action="store_true", help="Print the findings as a JSON list instead of the report."
        )
        parser.add_argument("--dry-run", action="store_true", help="Read and check everything, write nothing.")
        parser.add_argument(
            "--tnews-keywords",
            action="store_true",
            help="Show TNEWS's keywords beside its headline (default: the headline alone, as the paper's example).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        run_import(
            self,
            options,
            lambda: import_fewclue(
                path=Path(options["path"]),
                folders=options["folders"],
                dry_run=options["dry_run"],
                tnews_keywords=options["tnews_keywords"],
            ),
        )
