"""The nine FewCLUE studies at once: ``create_fewclue_studies [--protocol paper|readme]``.

One study per FewCLUE task present in the catalog (slug ``fewclue-<folder>-<protocol>``), each one
condition of workers (three by default: the platform's choice, neither source gives a number) who train on
N items and then all answer one sample of K items. The paper: N of the development set (``dev_few_all``),
K of the public test set (``test_public``). The README: N of the training set (``train_few_all``), K of the
validation set (验证集: ``dev_few_all``, the README's "merged validation set"). Both drawn with one seed
and recorded (docs/studies.md, "FewCLUE studies"). Drafts, as
``create_clues_studies`` makes them; idempotent: an existing study is left as it is. The worker pages
are in Simplified Chinese (``--language zh-hans``), as the items are; ``--language ""`` follows the browser.
"""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.management.commands._study_designs import Wanted, add_open_and_reward, check_language, ensure_studies
from annotation.models import Study
from annotation.services.session import samples
from annotation.services.studies import studies
from tasks_app.importing.fewclue.tasks import TASKS
from tasks_app.management.base import ProjectCommand
from tasks_app.models import Task

# protocol option -> (the study's protocol, the named set of its training items, the named set of its
# test items: "" for the task's test set, test_public)
PROTOCOLS = {
    "paper": (Study.Protocol.FEWCLUE_PAPER, "dev_few_all", ""),
    "readme": (Study.Protocol.FEWCLUE_README, "train_few_all", "dev_few_all"),
}


CHINESE = "zh-hans"


def fewclue_slug(folder: str, protocol: str) -> str:
    return f"fewclue-{folder}-{protocol}"


class Command(ProjectCommand):
    help = "Create one FewCLUE study per task: N training items, then a seeded sample of K test items."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--protocol",
            choices=sorted(PROTOCOLS),
            default="paper",
            help="paper (default): train on development items (dev_few_all), test on test_public; readme: train "
            "on training items (train_few_all), label validation items (dev_few_all).",
        )
        parser.add_argument("--training-items", type=int, default=30, metavar="N", help="Training items (30).")
        parser.add_argument("--test-sample", type=int, default=100, metavar="K", help="Test items per condition.")
        parser.add_argument("--seed", type=int, default=None, help="The samples' seed (default: a new one, printed).")
        parser.add_argument("--workers", type=int, default=studies.STANDARD_WORKERS, help="Workers per condition.")
        parser.add_argument(
            "--tasks", nargs="+", metavar="FOLDER", help="Only these tasks (folder names, e.g. eprstmt chid)."
        )
        add_open_and_reward(parser)
        parser.add_argument(
            "--language",
            default=CHINESE,
            help='The worker pages\' language (default: zh-hans, as the items are; "" follows the browser).',
        )

    def handle(
        self,
        *args: Any,
        protocol: str,
        training_items: int,
        test_sample: int,
        seed: int | None,
        workers: int,
        tasks: list[str] | None,
        open: bool,
        language: str = CHINESE,
        **options: Any,
    ) -> None:
        check_language(language)
        known = [t.folder for t in TASKS]
        unknown = sorted(set(tasks or ()) - set(known))
        if unknown:
            raise CommandError(f"--tasks: unknown {unknown}; FewCLUE's tasks are {known}")
        seed = samples.new_seed() if seed is None else seed
        study_protocol, source, tested = PROTOCOLS[protocol]

        def create(task: Task, slug: str) -> Study:
            return studies.create_sampled_design(
                task=task,
                protocol=study_protocol,
                training_set_name=source,
                training_items=training_items,
                test_sample_size=test_sample,
                test_set_name=tested,
                seed=seed,
                slug=slug,
                name=f"FewCLUE {task.name} ({protocol}): {training_items} of {source}, "
                f"{test_sample} of {tested or 'test_public'}",
                workers_per_condition=workers,
                language=language,
                actor="manage.py create_fewclue_studies",
            )

        chosen = [d for d in TASKS if not tasks or d.folder in tasks]
        wanted = [Wanted(d.folder, d.slug, fewclue_slug(d.folder, protocol)) for d in chosen]
        ensure_studies(
            self,
            wanted,
            create,
            open_now=open,
            posted_reward=options.get("posted_reward"),
            none_ready="No FewCLUE study could be created: import the tasks first (import_fewclue).",
        )
        self.stdout.write(
            f"seed {seed}: training items from {source}, {test_sample} test items from {tested or 'test_public'} "
            "per condition"
        )
