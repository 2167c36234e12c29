"""python manage.py human_evaluation_statement: the paragraph and table a paper needs about its human evaluation.

human_evaluation_statement --study sst2-a
human_evaluation_statement --study sst2-a --study mnli-a --format latex --output human-eval.tex
human_evaluation_statement --study sst2-a --format json   # each field mapped to its HEDS 3.0 question
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.reporting.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, IntervalOptions
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.selection import select_studies
from annotation.reporting.statement import (
    STATEMENT_FORMATS,
    build_statement,
    render_statement,
    statement_datasheet,
)
from tasks_app.management.base import ProjectCommand
from tasks_app.scoring import SKIP_POLICIES


class Command(ProjectCommand):
    help = "Write the human-evaluation statement (paragraph + table) of each study: Markdown, LaTeX or JSON (HEDS)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--study", action="append", default=[], metavar="SLUG", required=True, help="A study slug or id; repeat."
        )
        parser.add_argument("--format", choices=STATEMENT_FORMATS, default="markdown")
        parser.add_argument(
            "--skip-policy",
            choices=SKIP_POLICIES,
            default=None,
            help="How a skipped test item is scored: zero (default), empty or exclude.",
        )
        parser.add_argument("--exclude-skips", action="store_true", help="The same as --skip-policy exclude.")
        parser.add_argument("--ddof", type=int, choices=(0, 1), default=0)
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="Bootstrap seed.")
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="Bootstrap resamples.")
        parser.add_argument("--output", "-o", metavar="FILE", help="Write to FILE instead of standard output.")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            studies = select_studies(refs=opts["study"])
            options = MetricOptions.from_params(
                {"skip_policy": opts["skip_policy"], "exclude_skips": opts["exclude_skips"], "ddof": opts["ddof"]}
            )
            intervals = IntervalOptions(resamples=opts["resamples"], seed=opts["seed"])
            statements = [build_statement(study=s, options=options, intervals=intervals) for s in studies]
            if opts["format"] == "json" and len(statements) > 1:  # one JSON document: a list of the forms
                text = json.dumps([statement_datasheet(s) for s in statements], ensure_ascii=False, indent=2) + "\n"
            else:
                text = "\n".join(render_statement(s, opts["format"]) for s in statements)
        except ReportError as exc:
            raise CommandError(str(exc)) from None
        if opts["output"]:
            path = Path(opts["output"])
            if not path.parent.is_dir():
                raise CommandError(f"the folder of {opts['output']} does not exist")
            path.write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote the statement to {path}")
        else:
            self.stdout.write(text, ending="")
