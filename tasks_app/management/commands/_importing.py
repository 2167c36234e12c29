"""What import_clues and import_tasks share: options, error handling, output."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from tasks_app.importing.findings import findings_to_json
from tasks_app.importing.layout import SPLITS, LayoutError
from tasks_app.importing.loading import SetInUse
from tasks_app.importing.report import render_report
from tasks_app.importing.service import ImportRejected, ImportResult, TaskDefinitionError


def add_common_arguments(parser: CommandParser) -> None:
    parser.add_argument(
        "--split", type=split_number, metavar="N", help="Import only training split N (1-5) and the test set."
    )
    parser.add_argument(
        "--build-nested",
        action="store_true",
        help="When a split's files are not nested, build its 10/20 sets as prefixes "
        "(per question type) of the 30-shot file, and say so in the report.",
    )
    parser.add_argument(
        "--details", action="store_true", help="After the summary by kind, list every finding, one per line."
    )
    parser.add_argument("--json", action="store_true", help="Print the findings as a JSON list instead of the report.")
    parser.add_argument("--dry-run", action="store_true", help="Read and check everything, write nothing.")


def split_number(text: str) -> int:
    """argparse type for --split: a training split number 1..5."""
    if text.strip().isdigit() and int(text) in SPLITS:
        return int(text)
    raise argparse.ArgumentTypeError(f"a split is a number from {SPLITS[0]} to {SPLITS[-1]}, got {text!r}")


def run_import(command: BaseCommand, options: dict[str, Any], do_import: Callable[[], ImportResult]) -> None:
    """Run ``do_import()``, print its report, and turn failures into one-line CommandErrors."""
    try:
        result = do_import()
    except (LayoutError, TaskDefinitionError, SetInUse) as exc:
        raise CommandError(str(exc)) from None
    except DatabaseError as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CommandError(f"database error ({first_line}); has `manage.py migrate` been run?") from None
    except ImportRejected as exc:
        _print(command, exc.result, options)
        raise CommandError(f"import failed: {exc}") from None
    _print(command, result, options)


def _print(command: BaseCommand, result: ImportResult, options: dict[str, Any]) -> None:
    if options["json"]:
        command.stdout.write(findings_to_json(result.findings))
    else:
        command.stdout.write(render_report(result, dry_run=options["dry_run"], details=options.get("details", False)))
