"""Write a study's human data release: answers under pseudonyms, items, design, texts, data card, checksums.

manage.py release_study clues-sst2-split1 -o release/sst2/
manage.py release_study clues-sst2-split1 -o release/sst2/ --force   # overwrite an earlier release

What is in it and what never is: annotation/reporting/release.py and docs/reports.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.reporting.release import ReleaseError, write_release
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Write a study's human data release (no platform ids) into a folder, with a data card and checksums."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="The study's slug.")
        parser.add_argument("-o", "--output", required=True, help="The folder to write (created; must be empty).")
        parser.add_argument("--force", action="store_true", help="Write into a folder that is not empty.")

    def handle(self, *args: Any, study: str, output: str, force: bool, **options: Any) -> None:
        found = Study.objects.select_related("task").filter(slug=study).first()
        if found is None:
            raise CommandError(f"No study with slug {study!r}.")
        try:
            written = write_release(found, Path(output), force=force, actor="manage.py release_study")
        except ReleaseError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Wrote the release of {found.slug} to {output}: {', '.join(p.name for p in written)}")
