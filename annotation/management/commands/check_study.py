"""What blocks a study's launch and what deserves a look first (annotation.services.studies.launch).

manage.py check_study clues-sst2-split1                    # the list; exit 0 (--strict: exit 1 on a blocker)
manage.py check_study clues-sst2-split1 --format json
manage.py check_study clues-sst2-split1 --open             # open it, refused while something blocks
manage.py check_study clues-sst2-split1 --open --override-blockers --by "A. Researcher"   # recorded
manage.py check_study clues-sst2-split1 --open --pilot     # launch as a pilot: its pilot share of the slots
manage.py check_study clues-sst2-split1 --open-rest        # after the pilot: open the remaining slots
"""

from __future__ import annotations

import getpass
import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.services.studies import launch
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "List what blocks a study's launch and what deserves a look; --open opens it (blockers need an override)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The study's slug.")
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument("--strict", action="store_true", help="Exit 1 while something blocks the launch.")
        parser.add_argument("--open", action="store_true", help="Open the study (refused while something blocks).")
        parser.add_argument(
            "--override-blockers",
            action="store_true",
            help="With --open: open despite the blockers; who, when and which blockers are recorded.",
        )
        parser.add_argument("--by", default="", help="Who overrides (default: the shell's user).")
        parser.add_argument(
            "--pilot",
            action="store_true",
            help="With --open: launch as a pilot, with the study's pilot share of each condition's slots.",
        )
        parser.add_argument(
            "--open-rest", action="store_true", help="Open the rest of a pilot's slots (the study opens if paused)."
        )

    def handle(self, *args: Any, slug: str, **options: Any) -> None:
        study = Study.objects.select_related("task").filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        if options["override_blockers"] and not options["open"]:
            raise CommandError("--override-blockers goes with --open.")
        if options["pilot"] and not options["open"]:
            raise CommandError("--pilot goes with --open.")
        if options["open_rest"] and options["open"]:
            raise CommandError("Give --open (the launch) or --open-rest (after the pilot), not both.")
        if options["open_rest"]:
            try:
                opened = launch.open_rest(study=study)
            except ValidationError as exc:
                raise CommandError(f"Rest not opened: {' '.join(exc.messages)}") from None
            self.stderr.write(
                f"{slug} is {opened.status}: the rest is open, {opened.workers_per_condition} workers per condition."
            )
            return
        check = launch.launch_check(study)
        if options["format"] == "json":
            self.stdout.write(json.dumps(check.as_dict(), ensure_ascii=False, indent=2))
        else:
            phase = f", pilot: {study.pilot_workers_per_condition} per condition" if study.in_pilot else ""
            self.stdout.write(f"Launch check of {slug} ({study.status}{phase}):")
            self.stdout.write("\n".join(check.lines()))
        if options["open"]:
            who = options["by"] or f"{getpass.getuser()} (manage.py check_study)"
            try:
                opened = launch.open_study(
                    study=study, override=options["override_blockers"], by_name=who, pilot=options["pilot"]
                )
            except launch.LaunchBlocked:
                raise CommandError(
                    f"Not opened: {len(check.blockers)} blocker(s) above. Fix them, or open anyway with "
                    "--open --override-blockers (recorded)."
                ) from None
            except ValidationError as exc:
                raise CommandError(f"Not opened: {' '.join(exc.messages)}") from None
            overridden = f" over {len(check.blockers)} blocker(s), recorded as {who}" if check.blockers else ""
            pilot = f" as a pilot ({opened.pilot_workers_per_condition} per condition)" if options["pilot"] else ""
            self.stderr.write(f"{slug} is {opened.status}{pilot}{overridden}.")
        elif options["strict"] and check.blockers:
            raise CommandError(f"{len(check.blockers)} blocker(s) before {slug} can open.")
