"""python manage.py human_performance: the human-performance exports for scripts and papers.

human_performance --study sst2-a --study mnli-a --format latex --output table.tex
human_performance --all --format markdown --skip-policy exclude --ddof 1
human_performance --all --training --format latex   (training analyses in the appendix's shape)
human_performance --study sst2-a --per-annotator --output annotators.csv
human_performance --study sst2-a --annotations --output raw.jsonl
human_performance --study sst2-a --payments --output pay.csv
human_performance --study sst2-a --analyses --output analyses.json
human_performance --all --plots figures/          (per-task and all-task PNG + SVG)
human_performance --all --recompute               (re-derive every item score and report mismatches)
human_performance --all --format latex --intervals --seed 7 --resamples 5000   (95% bootstrap CIs in the cells)
human_performance --all --benchmark fewclue --format markdown   (FewCLUE's shape: per worker, majority vote, paper)
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.reporting.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, IntervalOptions
from annotation.reporting.exports import (
    CSV_KINDS,
    export_with_provenance,
    iter_annotation_lines,
    provenance_json,
    provenance_sidecar_name,
    record_export,
    write_export,
)
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.plots import plot_files
from annotation.reporting.provenance import reproducibility_header
from annotation.reporting.recompute import recompute_item_scores
from annotation.reporting.selection import BENCHMARKS, select_studies
from annotation.reporting.tables import build_table
from tasks_app.management.base import ProjectCommand
from tasks_app.scoring import SKIP_POLICIES

FORMATS = ("csv", "json", "markdown", "latex")


class Command(ProjectCommand):
    help = "Human-performance table (CSV/JSON/Markdown/LaTeX), raw annotations, payments, analyses and plots."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--study",
            action="append",
            default=[],
            metavar="SLUG",
            help="A study slug or id; repeat to combine studies into one table.",
        )
        parser.add_argument(
            "--all", action="store_true", help="Every study of --benchmark's tasks (CLUES's by default)."
        )
        parser.add_argument(
            "--format", choices=FORMATS, default="markdown", help="Format of the table (and of --training)."
        )
        parser.add_argument(
            "--benchmark",
            choices=BENCHMARKS,
            default="clues",
            help="The table's shape: clues (default; shot levels x tasks) or fewclue (a Human row per worker and "
            "by majority vote, the nine tasks and their mean, and the paper's row).",
        )
        what = parser.add_mutually_exclusive_group()
        what.add_argument(
            "--training",
            action="store_true",
            help="The training analyses (shared and extra training examples) as a table in --format.",
        )
        what.add_argument(
            "--per-annotator",
            action="store_true",
            help="Per-annotator CSV: test and training S1, items, skips, time, pay (every state).",
        )
        what.add_argument("--annotations", action="store_true", help="Raw annotations as JSONL instead of the table.")
        what.add_argument("--payments", action="store_true", help="Payments CSV instead of the table.")
        what.add_argument("--analyses", action="store_true", help="Training analyses etc. as JSON.")
        what.add_argument("--plots", metavar="DIR", help="Write per-task and all-task plots (PNG and SVG) to DIR.")
        what.add_argument(
            "--recompute",
            action="store_true",
            help="Re-derive every item score from the stored answers and report mismatches.",
        )
        parser.add_argument("--fix", action="store_true", help="With --recompute: store the recomputed scores.")
        parser.add_argument(
            "--skip-policy",
            choices=SKIP_POLICIES,
            default=None,
            help="How a skipped test item is scored: zero (default), empty (as the empty answer) or exclude "
            "(left out, coverage reported).",
        )
        parser.add_argument(
            "--exclude-skips",
            action="store_true",
            help="The same as --skip-policy exclude (kept for old scripts).",
        )
        parser.add_argument(
            "--ddof", type=int, choices=(0, 1), default=0, help="0: population std (the paper's), 1: sample std."
        )
        parser.add_argument(
            "--intervals",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="Markdown/LaTeX: print each cell's 95%% bootstrap interval (the default; --no-intervals leaves "
            "them out; JSON and CSV always carry them).",
        )
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"Bootstrap seed (default {DEFAULT_SEED}).")
        parser.add_argument(
            "--resamples",
            type=int,
            default=DEFAULT_RESAMPLES,
            help=f"Bootstrap resamples (default {DEFAULT_RESAMPLES}).",
        )
        parser.add_argument("--output", "-o", metavar="FILE", help="Write to FILE instead of standard output.")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            studies = select_studies(refs=opts["study"], all_studies=opts["all"], benchmark=opts["benchmark"])
            options = MetricOptions.from_params(
                {"skip_policy": opts["skip_policy"], "exclude_skips": opts["exclude_skips"], "ddof": opts["ddof"]}
            )
            intervals = IntervalOptions(resamples=opts["resamples"], seed=opts["seed"], in_text=opts["intervals"])
            if opts["recompute"]:
                return self._recompute(studies, fix=opts["fix"])
            if opts["plots"]:
                return self._plots(studies, options, intervals, Path(opts["plots"]))
            if opts["training"]:
                kind = f"training-{opts['format']}"
            elif opts["per_annotator"]:
                kind = "annotators-csv"
            elif opts["annotations"]:
                kind = "annotations-jsonl"
            elif opts["payments"]:
                kind = "payments-csv"
            elif opts["analyses"]:
                kind = "analyses-json"
            elif opts["benchmark"] == "fewclue":
                kind = f"fewclue-{opts['format']}"
            else:
                kind = f"table-{opts['format']}"
            self._write(kind, studies, options, intervals, opts["output"])
        except ReportError as exc:
            raise CommandError(str(exc)) from None

    def _write(
        self, kind: str, studies: list[Study], options: MetricOptions, intervals: IntervalOptions, output: str | None
    ) -> None:
        record_export(actor="manage.py human_performance", kind=kind, studies=studies, options=options)
        if output:
            path = Path(output)
            if not path.parent.is_dir():
                raise CommandError(f"the folder of {output} does not exist")
            # Write next to the target and rename at the end: a failure leaves any earlier file as it was.
            handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
            try:
                with os.fdopen(handle, "wb") as out:
                    provenance = write_export(kind=kind, studies=studies, options=options, out=out, intervals=intervals)
                if kind in CSV_KINDS:  # the CSV stays a plain table: its provenance goes beside it
                    sidecar = path.with_name(provenance_sidecar_name(path.name))
                    sidecar.write_text(provenance_json(provenance), encoding="utf-8")
                os.replace(partial, path)
            except BaseException:
                Path(partial).unlink(missing_ok=True)
                raise
            self.stderr.write(f"wrote {kind} to {path}")
            if kind in CSV_KINDS:
                self.stderr.write(f"wrote its provenance to {sidecar}")
        elif kind == "annotations-jsonl":
            for line in iter_annotation_lines(studies=studies, options=options):
                self.stdout.write(line, ending="")
        else:
            content, provenance = export_with_provenance(
                kind=kind, studies=studies, options=options, intervals=intervals
            )
            self.stdout.write(content.decode(), ending="")
            if kind in CSV_KINDS:  # standard output gets the plain table; say where the provenance is
                self.stderr.write("the CSV's provenance (study configuration, data hashes, metric notes) is written")
                self.stderr.write("beside it as FILE.provenance.json when you pass --output FILE")

    def _plots(self, studies: list[Study], options: MetricOptions, intervals: IntervalOptions, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        table = build_table(studies=studies, options=options, intervals=intervals)
        header = {
            **reproducibility_header(studies=studies, options=options, export="plots"),
            "intervals": intervals.as_dict(),
        }
        for name, content in plot_files(table, header):
            path = folder / name
            path.write_bytes(content)
            self.stdout.write(str(path))
        record_export(actor="manage.py human_performance", kind="plots", studies=studies, options=options)

    def _recompute(self, studies: list[Study], *, fix: bool) -> None:
        result = recompute_item_scores(study_ids=[s.pk for s in studies], fix=fix)
        for m in result.mismatches[:20]:
            self.stdout.write(f"response {m['response']}: stored {m['stored']}, recomputed {m['recomputed']}")
        verb = "fixed" if fix else "found"
        self.stdout.write(f"checked {result.checked} item scores; {verb} {len(result.mismatches)} mismatches")
        if result.mismatches and not fix:
            raise CommandError("stored scores differ from the recomputation (run with --fix to store them)")
