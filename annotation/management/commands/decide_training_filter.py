"""Give the relative training filter's group verdicts that are due, as Celery beat does.

manage.py decide_training_filter [--study SLUG] [--now]

A group is due once all its condition's slots have finished training, or the study's
filter_group_timeout_minutes after its oldest pending worker finished training. ``--now`` judges
every pending group at once with the group so far (e.g. before closing a study); a worker who is the
only one of their condition to have trained is never judged alone (filter_groups). Useful where no
beat runs, e.g. from cron.
"""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.services.verdicts import filter_groups
from tasks_app.management.base import ProjectCommand


class Command(ProjectCommand):
    help = "Judge the relative training filter's groups that have trained (or waited past the timeout)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", metavar="SLUG", help="Only this study.")
        parser.add_argument("--now", action="store_true", help="Judge every pending group now, as it is.")

    def handle(self, *args: Any, study: str | None, now: bool, **options: Any) -> None:
        chosen = None
        if study:
            chosen = Study.objects.filter(slug=study).first()
            if chosen is None:
                raise CommandError(f"no study {study!r}")
        decisions = filter_groups.decide_due(study=chosen, force=now, actor="manage.py decide_training_filter")
        for d in decisions:
            verdict = "passed" if d.passed else "excluded"
            self.stdout.write(f"participation {d.participation_id}: {verdict}: {d.reason}")
        self.stdout.write(f"{len(decisions)} verdict(s), {sum(not d.passed for d in decisions)} excluded")
