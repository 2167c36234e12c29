"""``manage.py participant_data``: everything stored about one participant, as JSON (subject access)."""

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.core.serializers.json import DjangoJSONEncoder

from annotation.models import Worker
from annotation.services.rights import access
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Write everything stored about one participant as JSON (a subject access request)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--platform", required=True, choices=[p.value for p in Worker.Platform])
        parser.add_argument("--id", required=True, dest="external_id", help="The platform's participant id.")
        parser.add_argument("--output", help="Write to this file (default: standard output).")

    def handle(self, *args: object, **options: Any) -> None:
        try:
            data = access.participant_data(platform=options["platform"], external_id=options["external_id"])
        except access.UnknownParticipant as exc:
            raise CommandError(str(exc)) from exc
        text = json.dumps(data, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False)
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8") as f:
                f.write(text + "\n")
        else:
            self.stdout.write(text)
