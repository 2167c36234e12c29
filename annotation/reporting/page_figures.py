"""The dashboard's figures, kept between requests under keys that change with the data (``figure_keys``).

A page computes a figure once, then serves it until a write changes what it was computed from: the
tables, the pay and the per-worker lines under the studies' ``recorded`` keys; the analyses of the
completed workers (agreement, alpha, overlaps, hardest items, confidence, time) under the study's
``finished`` key, so that they are not recomputed while other workers are still answering. What
depends on the clock (the notices) or is one cheap query (progress) is read on every request.

Workers' platform identifiers are never kept: they are blanked before a figure is stored and read
again (one query) each time it is served, so a withdrawal or a pseudonymisation leaves no copy behind
in a shared cache, and every page shows the identifiers as they are now.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from annotation.models import Condition, Participation, Study
from annotation.reporting.alpha import study_ratings, task_alpha
from annotation.reporting.analyses import (
    confidence_vs_correctness,
    item_difficulty,
    majority_and_agreement,
    time_per_item,
    training_overlaps,
)
from annotation.reporting.fewclue_table import FewClueTable, build_fewclue_table
from annotation.reporting.figure_cache import digest, remembered
from annotation.reporting.figure_keys import StudyKeys, study_keys
from annotation.reporting.item_scores import cell_item_scores
from annotation.reporting.majority import MajorityResult, condition_majority
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.pay import condition_pay
from annotation.reporting.tables import Table, TableParts, build_table, table_parts
from annotation.services.verdicts import attention, integrity

HARDEST = 10  # the hardest items a study page lists
T = TypeVar("T")
Identities = Callable[[int], tuple[str, str]]  # participation id -> (platform, worker id)


def _kept(kind: str, key: str, compute: Callable[[], T], strip: Callable[[T], T], fill: Callable[[T], T]) -> T:
    """``remembered``, the identifiers blanked (``strip``) in what is stored and filled in (``fill``) in what
    is served."""
    return fill(remembered(kind, key, lambda: strip(compute())))


def _identities(participation_ids: Iterable[int]) -> Identities:
    rows = Participation.all_objects.filter(pk__in=list(participation_ids)).values_list(
        "pk", "worker__platform", "worker__external_id"
    )
    found = {pk: (platform, worker_id) for pk, platform, worker_id in rows}
    return lambda pk: found.get(pk, ("", ""))


def _table_rows(table: Table, who: Identities | None) -> Table:
    """The table's per-worker rows (the summaries hold the same rows) with their identifiers blanked (no
    ``who``) or filled in."""
    for row in table.annotators:
        row.platform, row.worker_id = who(row.participation_id) if who else ("", "")
    return table


def _study_parts(study: Study, keys: dict[int, StudyKeys], options: MetricOptions) -> TableParts:
    """What the table reads from one study, kept per study: after a write, a table of several studies
    reads again only the study written to (the item scores, which only completions change, not even that).
    The rows are stored without identifiers (the table is filled in as a whole)."""

    def rows() -> TableParts:
        parts = table_parts([study], options, item_scores=False)
        for row in parts.rows:
            row.platform, row.worker_id = "", ""
        return parts

    kept = remembered("table-rows", digest(keys[study.pk].recorded, options), rows)
    item_scores = remembered(
        "table-item-scores",
        digest(keys[study.pk].finished, options),
        lambda: cell_item_scores(studies=[study], options=options),
    )
    return TableParts(kept.rows, item_scores, kept.human_items)


def table(studies: Sequence[Study], keys: dict[int, StudyKeys], options: MetricOptions) -> Table:
    """``build_table`` of the studies (with its default intervals), kept."""

    def build() -> Table:
        parts = TableParts.merged([_study_parts(s, keys, options) for s in studies])
        return build_table(studies=list(studies), options=options, parts=parts)

    return _kept(
        "table",
        digest([keys[s.pk].recorded for s in studies], options),
        build,
        strip=lambda t: _table_rows(t, None),
        fill=lambda t: _table_rows(t, _identities(r.participation_id for r in t.annotators)),
    )


def fewclue_table(studies: Sequence[Study], keys: dict[int, StudyKeys], options: MetricOptions) -> FewClueTable | str:
    """``build_fewclue_table`` of the studies (figures only: no worker in it), kept; the reason as text where
    it cannot be built."""

    def majority(condition: Condition) -> MajorityResult:
        # The completed workers' votes: kept until their answers change (the study's finished key).
        key = digest(keys[condition.study_id].finished, condition.pk, options)
        return remembered("majority", key, lambda: condition_majority(condition=condition, options=options))

    def build() -> FewClueTable | str:
        annotators = TableParts.merged([_study_parts(s, keys, options) for s in studies]).rows
        try:
            return build_fewclue_table(studies=list(studies), options=options, annotators=annotators, votes_of=majority)
        except ReportError as exc:  # several protocols at once: the page says so where the table would be
            return str(exc)

    return remembered("fewclue-table", digest([keys[s.pk].recorded for s in studies], options), build)


ANALYSES = "study-analyses"  # the kind the study analyses are kept under (figure_cache)


def study_analyses(study: Study, keys: dict[int, StudyKeys], options: MetricOptions) -> dict[str, Any]:
    """A study page's analyses of its completed workers (figures only), kept until their data changes."""

    def compute() -> dict[str, Any]:
        ratings = study_ratings(study)  # alpha's units, read once for the conditions and the whole study
        return {
            "aggregation": majority_and_agreement(study=study, options=options, ratings=ratings),
            "task_alpha": task_alpha(study, ratings=ratings),
            "overlaps": training_overlaps(study=study, options=options),
            "hardest": item_difficulty(study=study, limit=HARDEST),
            "confidence": confidence_vs_correctness(study=study),
            "timing": time_per_item(study=study),
        }

    return remembered(ANALYSES, analyses_key(study, keys, options), compute)


def analyses_key(study: Study, keys: dict[int, StudyKeys], options: MetricOptions) -> str:
    """What ``study_analyses`` are kept under: the study's completed workers' data, and the options."""
    return digest(keys[study.pk].finished, options)


def _lines(lines: dict[str, Any], who: Identities | None) -> dict[str, Any]:
    def identity(pk: int) -> tuple[str, str]:
        return who(pk) if who else ("", "")

    return {
        "pay": lines["pay"],
        "attention": [
            dataclasses.replace(r, platform=identity(r.participation_id)[0], worker=identity(r.participation_id)[1])
            for r in lines["attention"]
        ],
        "integrity": [
            {**r, "platform": identity(r["participation"])[0], "worker": identity(r["participation"])[1]}
            for r in lines["integrity"]
        ],
    }


def study_lines(study: Study, keys: dict[int, StudyKeys]) -> dict[str, Any]:
    """A study page's pay per condition and its per-worker attention and integrity lines, kept until any
    recorded row of the study changes."""

    def compute() -> dict[str, Any]:
        return {
            "pay": condition_pay(study=study),
            "attention": attention.reports.report(study),
            "integrity": [r.as_dict() for r in integrity.report(study)],
        }

    def fill(lines: dict[str, Any]) -> dict[str, Any]:
        ids = [r.participation_id for r in lines["attention"]] + [r["participation"] for r in lines["integrity"]]
        return _lines(lines, _identities(ids))

    return _kept("study-lines", keys[study.pk].recorded, compute, strip=lambda lines: _lines(lines, None), fill=fill)


@dataclasses.dataclass(frozen=True)
class StudyPage:
    """What a study page keeps: its table, the analyses of its completed workers, its pay and per-worker lines."""

    table: Table
    analyses: dict[str, Any]
    lines: dict[str, Any]


def study_page(study: Study, options: MetricOptions) -> StudyPage:
    """A study page's kept figures (the view, and the worker that computes them after a completion:
    ``warming``)."""
    keys = study_keys([study])
    return StudyPage(table([study], keys, options), study_analyses(study, keys, options), study_lines(study, keys))
