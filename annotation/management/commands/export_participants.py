"""Every worker who took part in a task, for the platform's blocklist or qualification.

manage.py export_participants --task sst2 --format prolific > blocklist.txt
manage.py export_participants --task sst2 --format mturk --qualification took-part-sst2 -o workers.csv
"""

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from annotation.services.admission import blocklist
from tasks_app.management.base import ProjectCommand
from tasks_app.models import Task


class Command(ProjectCommand):
    help = "Export the ids of a task's past participants as a Prolific blocklist or an MTurk qualification CSV."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--task", required=True, help="Task slug, e.g. sst2.")
        parser.add_argument("--format", required=True, choices=blocklist.FORMATS, dest="fmt")
        parser.add_argument("--qualification", default="", help="MTurk qualification name (default took-part-<task>).")
        parser.add_argument("-o", "--output", help="Write to this file instead of standard output.")

    def handle(self, *args: Any, task: str, fmt: str, qualification: str, output: str | None, **options: Any) -> None:
        found = Task.objects.filter(slug=task).first()
        if found is None:
            known = ", ".join(Task.objects.order_by("slug").values_list("slug", flat=True)) or "none"
            raise CommandError(f"No task with slug {task!r} (known: {known}).")
        try:
            content, _, _ = blocklist.export_participants(
                task=found, fmt=fmt, qualification_name=qualification, actor="manage.py export_participants"
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        if output:
            Path(output).write_text(content, encoding="utf-8", newline="")
            self.stderr.write(f"Wrote {output}")
        else:
            self.stdout.write(content, ending="")
