"""The demo: bundled demo data, then one open standard-design study per task (``demo-<task slug>``).

Idempotent: running it again imports nothing twice and leaves existing studies alone. It refuses a
database that holds other studies: the demo's invented sentences would replace a real release's data
and its studies would pool into the real tables (scripts/run_demo.sh gives the demo its own file).
"""

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.db import connection

from annotation.models import Study
from annotation.services.studies import studies
from tasks_app.catalog import CLUES_TASKS
from tasks_app.management.base import ProjectCommand
from tasks_app.models import Task

DEMO_SPLIT = 1
# What a demo study "posts" per participant: the demo is ready to rehearse (rehearse_study demo-sst2) and its
# start page states a pay; the bonus tops it up to the hourly rate.
DEMO_POSTED_REWARD = Decimal("1.00")
WHO = "manage.py load_demo"  # the audit trail's name for what the command does


def demo_slug(task_slug: str) -> str:
    return f"demo-{task_slug}"


class Command(ProjectCommand):
    help = "Import the bundled demo data and open one demo study per task (/join/demo-<task>/?worker_id=...)."

    def handle(self, *args: Any, **options: Any) -> None:
        others = list(Study.objects.exclude(slug__startswith="demo-").values_list("slug", flat=True)[:5])
        if others:
            raise CommandError(
                f"this database ({connection.settings_dict['NAME']}) holds studies that are not the demo's "
                f"({', '.join(others)}); the demo keeps to its own database: run scripts/run_demo.sh "
                "(demo.sqlite3) or set DATABASE_URL to an empty database"
            )
        from tasks_app.demo import import_demo_data
        from tasks_app.importing.layout import LayoutError
        from tasks_app.importing.loading import SetInUse
        from tasks_app.importing.service import ImportRejected

        try:
            result = import_demo_data()
        except (ImportRejected, LayoutError, SetInUse) as exc:
            # e.g. the real release was imported and annotated in this database: keep it, say so, go on.
            self.stderr.write(f"Demo data not imported ({exc}); the studies use the data already in the database.")
        else:
            self.stdout.write(f"Demo data in place for: {', '.join(t.slug for t in result.tasks) or 'no task'}.")
        for definition in CLUES_TASKS:
            task = Task.objects.filter(slug=definition.slug).first()
            if task is None:
                self.stderr.write(f"{definition.slug}: not in the catalog, no demo study")
                continue
            slug = demo_slug(task.slug)
            try:
                study = Study.objects.filter(slug=slug).first()
                if study is None:
                    study = studies.create_standard_design(
                        task=task,
                        split_number=DEMO_SPLIT,
                        slug=slug,
                        name=f"Demo: {task.name}",
                        outcome_codes={"completed": {"code": f"DEMO-{task.slug.upper()}", "url": ""}},
                        actor=WHO,
                    )
                if study.base_reward is None:  # a demo made before it posted a reward, too
                    study = studies.study_update(study=study, base_reward=DEMO_POSTED_REWARD, actor=WHO)
                if study.status in (Study.Status.DRAFT, Study.Status.PAUSED):
                    studies.change_status(study=study, to_status=Study.Status.OPEN, actor=WHO)
            except ValidationError as exc:
                self.stderr.write(f"{slug}: {'; '.join(exc.messages)}")
                continue
            self.stdout.write(f"{slug}: {study.status} -> /join/{slug}/?worker_id=alice")
