"""Prolific operations on a study: a dry run by default, --run to do it (docs/prolific.md).

manage.py prolific review --study sst2-split1            # who is approved (dry run)
manage.py prolific bonus --study sst2-split1 --run       # pay the pay table's bonuses
manage.py prolific group --study sst2-split1 --json      # add the task's participants to its group
"""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from annotation.services.prolific import operations


class Command(BaseCommand):
    help = "Approve, pay bonuses or fill the participant group on Prolific for a study (dry run unless --run)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("operation", choices=operations.OPERATIONS)
        parser.add_argument("--study", required=True, help="Study slug.")
        parser.add_argument("--run", action="store_true", help="Do it (default: only show the plan).")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, operation: str, study: str, run: bool, **options: Any) -> None:
        found = Study.objects.select_related("task").filter(slug=study).first()
        if found is None:
            raise CommandError(f"No study with slug {study!r}.")
        if run:
            try:
                report = operations.run(operation=operation, study=found)
            except operations.ProlificDisabled as exc:
                raise CommandError(str(exc)) from None
        else:
            report = operations.plan(operation=operation, study=found)
        if options["json"]:
            self.stdout.write(_dumps(report.as_dict()))
        else:
            self._table(report)
        if any(row.state in (operations.FAILED, operations.UNCERTAIN) for row in report.rows):
            raise CommandError("Some participants failed or are uncertain: see the report above.")

    def _table(self, report: operations.Report) -> None:
        head = "Dry run (nothing sent; add --run to do it)" if report.dry_run else "Run"
        self.stdout.write(f"{head}: {report.operation} for {report.study}")
        for note in report.notes:
            self.stdout.write(f"  note: {note}")
        self.stdout.write(f"{'participant':<26} {'study':<16} {'action':<10} {'amount':>10}  {'state':<15} note")
        for r in report.rows:
            amount = f"{r.amount:.2f} {r.currency}" if r.amount is not None else ""
            line = f"{r.participant:<26} {r.study:<16} {r.action:<10} {amount:>10}  {r.state:<15} {r.note}"
            self.stdout.write(line)
        counts = ", ".join(f"{n} {state}" for state, n in sorted(report.counts.items())) or "nobody"
        total = f"; bonuses {report.total:.2f}" if report.operation == "bonus" else ""
        self.stdout.write(f"{counts}{total}")


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2)
