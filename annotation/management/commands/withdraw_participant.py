"""``manage.py withdraw_participant``: a participant withdraws (annotation.services.rights.withdrawal)."""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Worker
from annotation.services.rights import withdrawal
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Withdraw a participant: erase their answers and consent records, pseudonymise their identifier."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--platform", required=True, choices=[p.value for p in Worker.Platform])
        parser.add_argument("--id", required=True, dest="external_id", help="The platform's participant id.")
        parser.add_argument("--study", help="The study's slug: refuse unless they took part in it.")
        parser.add_argument("--run", action="store_true", help="Do it (without: a dry run, nothing changes).")
        parser.add_argument("--by", default="manage.py withdraw_participant", help="Who runs it (recorded).")

    def handle(self, *args: object, **options: Any) -> None:
        kwargs = {
            "platform": options["platform"],
            "external_id": options["external_id"],
            "study_slug": options["study"],
        }
        try:
            run = withdrawal.withdraw if options["run"] else withdrawal.plan_only
            done = run(**kwargs, run_by=options["by"])
        except withdrawal.WithdrawalError as exc:
            raise CommandError(f"{exc}; nothing changed") from exc
        for line in done.lines():
            self.stdout.write(line)
        self.stdout.write("withdrawn." if options["run"] else "dry run: nothing changed (add --run to do it).")
