"""Turning what a user typed (slugs, ids, --all) into studies, with clear errors."""

from __future__ import annotations

from collections.abc import Iterable

from annotation.models import Study
from annotation.reporting.options import ReportError
from tasks_app.models import Task
from tasks_app.paper import FEWCLUE_HUMAN

BENCHMARKS = ("clues", "fewclue")
# FewCLUE's nine tasks, as import_fewclue names them (fewclue-<dataset folder>); every other task is reported
# in the CLUES table's shape (the six CLUES tasks and any task imported in the unified format).
FEWCLUE_TASK_SLUGS = frozenset(f"fewclue-{folder}" for folder in FEWCLUE_HUMAN)


def benchmark_of(task: Task) -> str:
    """The benchmark whose table a task belongs in: each table holds only its own benchmark's tasks."""
    return "fewclue" if task.slug in FEWCLUE_TASK_SLUGS else "clues"


def of_benchmark(studies: Iterable[Study], benchmark: str) -> list[Study]:
    return [s for s in studies if benchmark_of(s.task) == benchmark]


def select_studies(
    *, refs: Iterable[str | int] = (), all_studies: bool = False, benchmark: str | None = None
) -> list[Study]:
    """Studies by slug or numeric id, in the order given; with ``all_studies``, every study of ``benchmark``
    (every study at all when it is None)."""
    if all_studies:
        studies = list(Study.objects.select_related("task").order_by("task__display_order", "slug"))
        if benchmark is not None:
            if benchmark not in BENCHMARKS:
                raise ReportError(f"benchmark must be clues or fewclue, not {benchmark!r}")
            if studies and not of_benchmark(studies, benchmark):
                raise ReportError(f"there are no studies of {benchmark} tasks yet")
            studies = of_benchmark(studies, benchmark)
        if not studies:
            raise ReportError("there are no studies yet")
        return studies
    names = [str(r).strip() for r in refs if str(r).strip()]
    if not names:
        raise ReportError("name at least one study (slug or id), or ask for all studies")
    found: list[Study] = []
    for ref in names:
        query = Study.objects.select_related("task")
        study = query.filter(slug=ref).first()
        # ASCII digits only: str.isdigit() accepts "²", which int() refuses; ids beyond a bigint name nothing.
        if study is None and ref.isascii() and ref.isdigit() and len(ref) <= 18:
            study = query.filter(pk=int(ref)).first()
        if study is None:
            raise ReportError(f"unknown study: {ref!r}")
        if study not in found:
            found.append(study)
    return found
