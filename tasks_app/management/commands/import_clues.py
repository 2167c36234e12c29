"""python manage.py import_clues PATH: import the CLUES release (all six tasks, or some)."""

from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from tasks_app.catalog import BY_SLUG
from tasks_app.importing.service import import_clues
from tasks_app.management.base import ProjectCommand
from tasks_app.management.commands._importing import add_common_arguments, run_import


class Command(ProjectCommand):
    help = (
        "Import the CLUES release layout (six task folders, <prefix>_test.jsonl and <prefix>_train_<k>_<split>.jsonl), "
        "or one task folder of it. Prints every finding; any error aborts the whole run and writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The release folder, or one task folder (e.g. .../clues/SST-2).")
        parser.add_argument(
            "--task",
            action="append",
            dest="slugs",
            choices=list(BY_SLUG),
            metavar="SLUG",
            help=f"Import only this task (repeatable): {', '.join(BY_SLUG)}.",
        )
        add_common_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        run_import(
            self,
            options,
            lambda: import_clues(
                path=Path(options["path"]),
                slugs=options["slugs"],
                split=options["split"],
                build_nested=options["build_nested"],
                dry_run=options["dry_run"],
            ),
        )
