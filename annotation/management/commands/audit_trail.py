"""``manage.py audit_trail``: the audit trail (every staff action, before and after) as CSV or JSON."""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import AuditEntry
from annotation.services import audit
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Write the audit trail (one study's with --study) as CSV or JSON, oldest entry first."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", help="Only this study's entries (its slug; a deleted study's too).")
        parser.add_argument("--format", choices=["csv", "json"], default="csv")
        parser.add_argument("--output", help="Write to this file (default: standard output).")

    def handle(self, *args: object, **options: Any) -> None:
        slug = options["study"]
        if slug and not AuditEntry.objects.filter(study_slug=slug).exists():
            raise CommandError(f"The audit trail has no entry for a study {slug!r}.")
        text = audit.export(audit.trail(study_slug=slug), fmt=options["format"])
        if options["output"]:
            try:
                with open(options["output"], "w", encoding="utf-8", newline="") as f:
                    f.write(text)
            except OSError as exc:
                raise CommandError(f"cannot write {options['output']}: {exc.strerror}") from None
        else:
            self.stdout.write(text, ending="")
