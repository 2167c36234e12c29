"""Plan a study's sample size before paying anyone (annotation.reporting.planning, docs/studies.md).

manage.py plan_study sst2-split1                              # from the pilot's completed workers
manage.py plan_study sst2-split1 --accuracy 0.85 --workers 3,5,10 --seed 7 --format json
manage.py plan_study sst2-split1 --model-score 0.80 --gap 0.05   # the gap detectable, the workers for 5 points
"""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.reporting import planning
from annotation.reporting.options import ReportError
from tasks_app.management.base import ProjectCommand


def _workers(raw: str) -> list[int]:
    try:
        return [int(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--workers takes numbers separated by commas, e.g. 3,5,10; not {raw!r}") from None


class Command(ProjectCommand):
    help = "How wide each cell's 95% interval will be with 3, 5, 10 workers per condition, the cost and the time."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The study (its pilot's completed workers give the accuracy).")
        parser.add_argument("--accuracy", type=float, default=None, help="Plan with this accuracy (0..1) instead.")
        parser.add_argument("--workers", default="3,5,10", help="Workers per condition to plan for (default 3,5,10).")
        parser.add_argument(
            "--model-score",
            type=float,
            default=None,
            help="The model's score (0..1) the human cell is compared with; default: each cell's own accuracy.",
        )
        parser.add_argument(
            "--gap", type=float, default=None, help="A gap (0..1, e.g. 0.05) to detect: how many workers it needs."
        )
        parser.add_argument("--seed", type=int, default=planning.DEFAULT_SEED)
        parser.add_argument("--simulations", type=int, default=planning.DEFAULT_SIMULATIONS)
        parser.add_argument("--resamples", type=int, default=planning.DEFAULT_RESAMPLES)
        parser.add_argument("--format", choices=planning.FORMATS, default="markdown")

    def handle(self, *args: Any, slug: str, **opts: Any) -> None:
        study = Study.objects.select_related("task").filter(slug=slug).first()
        if study is None:
            raise CommandError(f"no study {slug!r}")
        try:
            plan = planning.plan_for_study(
                study,
                accuracy=opts["accuracy"],
                workers=_workers(opts["workers"]),
                seed=opts["seed"],
                simulations=opts["simulations"],
                resamples=opts["resamples"],
                model_score=opts["model_score"],
                gap=opts["gap"],
            )
        except ReportError as exc:  # a PlanningError, or bad bootstrap options
            raise CommandError(str(exc)) from None
        self.stdout.write(planning.render(plan, opts["format"]), ending="")
