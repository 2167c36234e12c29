"""The six CLUES studies at once: ``create_clues_studies --split 1 [--open]``.

One standard-design study per CLUES task present in the catalog (slug
``clues-<task>-split<N>``). Idempotent: an existing study is left as it is
(and opened with --open if it is still a draft).
"""

from typing import Any

from django.core.management.base import CommandParser

from annotation.management.commands._study_designs import Wanted, add_open_and_reward, check_language, ensure_studies
from annotation.models import Study
from annotation.services.studies import studies
from tasks_app.catalog import CLUES_TASKS
from tasks_app.management.base import ProjectCommand
from tasks_app.models import Task


def clues_slug(task_slug: str, split: int) -> str:
    return f"clues-{task_slug}-split{split}"


class Command(ProjectCommand):
    help = "Create the standard 0/10/20/30-shot study for each of the six CLUES tasks on one training split."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--split", type=int, required=True, choices=range(1, 6), metavar="N")
        add_open_and_reward(parser)
        parser.add_argument("--workers", type=int, default=studies.STANDARD_WORKERS, help="Workers per condition.")
        parser.add_argument(
            "--filter-rule",
            choices=Study.FilterRule.values,
            default=Study.FilterRule.NONE,
            help="The training filter: none (default), absolute (training S1 at least --filter-threshold) or "
            "relative (at most --filter-threshold below the others of the condition's group).",
        )
        parser.add_argument("--filter-threshold", type=float, default=0.0, help="0..1; see --filter-rule.")
        parser.add_argument(
            "--language",
            default=None,
            help="The worker pages' language, e.g. de (default: the worker's browser language); an existing "
            "study nobody has joined takes it too.",
        )
        parser.add_argument(
            "--filter-reference",
            choices=Study.FilterReference.values,
            default=Study.FilterReference.MEAN,
            help="Relative rule: the others' mean (default) or median.",
        )

    def handle(
        self,
        *args: Any,
        split: int,
        open: bool,
        workers: int,
        filter_rule: str,
        filter_threshold: float,
        filter_reference: str,
        language: str | None = None,
        **options: Any,
    ) -> None:
        check_language(language or "")

        def create(task: Task, slug: str) -> Study:
            return studies.create_standard_design(
                task=task,
                split_number=split,
                slug=slug,
                workers_per_condition=workers,
                name=f"CLUES {task.name}, split {split}",
                filter_rule=filter_rule,
                filter_threshold=filter_threshold,
                filter_reference=filter_reference,
                language=language or "",
                actor="manage.py create_clues_studies",
            )

        wanted = [Wanted(d.slug, d.slug, clues_slug(d.slug, split)) for d in CLUES_TASKS]
        ensure_studies(
            self,
            wanted,
            create,
            open_now=open,
            posted_reward=options.get("posted_reward"),
            language=language,
            none_ready="No CLUES study could be created: import the tasks first (import_clues).",
        )
