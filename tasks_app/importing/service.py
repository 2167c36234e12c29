"""The import use-cases the commands (and the demo loader) call.

A run reads and checks every file first. If any finding is an error, nothing
is written and ``ImportRejected`` is raised carrying the full report. Else all
tasks are written in one transaction, so a run imports everything or nothing.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from tasks_app.catalog import BY_SLUG, install_clues_tasks
from tasks_app.importing.findings import Finding
from tasks_app.importing.layout import LayoutError, TaskFiles, clues_task_files, task_files, task_files_for_file
from tasks_app.importing.loading import LoadStats, SetInUse, write_plan
from tasks_app.importing.paper_comparison import compare_with_paper
from tasks_app.importing.planning import TaskPlan, plan_task
from tasks_app.importing.validation import TaskSpec
from tasks_app.models import Label, Task

logger = logging.getLogger(__name__)


class TaskDefinitionError(ValueError):
    """A new task's definition is incomplete or invalid; the message is one line for the user."""


class ImportRejected(Exception):
    """The files have errors; nothing was written. ``result.findings`` says why."""

    def __init__(self, result: ImportResult):
        self.result = result
        errors = [f for f in result.findings if f.is_error]
        files = {f.file for f in errors}
        super().__init__(f"{len(errors)} error(s) in {len(files)} file(s); nothing was imported")


@dataclass
class TaskOutcome:
    slug: str
    set_sizes: dict[str, int]  # "test", "split 1 10-shot", ...
    nested: dict[int, str]  # split -> "nested" / "not nested" / "built from 30-shot"
    stats: LoadStats = field(default_factory=LoadStats)


@dataclass
class ImportResult:
    findings: list[Finding] = field(default_factory=list)
    tasks: list[TaskOutcome] = field(default_factory=list)
    written: bool = False
    paper: str = "the CLUES paper (Table 3; MNLI 7 genres x 30)"  # what the paper_comparison findings compare with


@dataclass(frozen=True)
class NewTask:
    """Catalog fields for a task that ``import_task_files`` creates on first import."""

    name: str
    kind: str
    labels: tuple[str, ...] = ()
    description: str = ""
    question_types: tuple[dict, ...] = ()
    multiple_spans: bool = True  # span tasks: several spans per answer (NER) or one (QA)


def import_clues(
    *,
    path: Path,
    slugs: list[str] | None = None,
    split: int | None = None,
    build_nested: bool = False,
    dry_run: bool = False,
) -> ImportResult:
    """Import the CLUES release (or one task folder of it). Raises LayoutError or ImportRejected."""
    all_files = clues_task_files(Path(path), slugs=slugs, split=split)
    plans = [
        (files, plan_task(files, spec=_clues_spec(files.slug), build_nested=build_nested, expect_release=True))
        for files in all_files
    ]

    def task_for(slug: str) -> Task:
        return install_clues_tasks(slugs=[slug])[0]

    return _finish(plans, task_for=task_for, dry_run=dry_run)


def import_task_files(
    *,
    path: Path,
    slug: str,
    new_task: NewTask | None = None,
    split: int | None = None,
    build_nested: bool = False,
    dry_run: bool = False,
) -> ImportResult:
    """Import any task in the unified JSONL format from a folder or a test file."""
    path = Path(path)
    if not path.exists():
        raise LayoutError(f"no such file or directory: {path}")
    existing = Task.objects.filter(slug=slug).first()
    target: Task | NewTask  # the task to import into, or the checked definition of the one to create
    if existing is None:
        target = _check_new_task(slug, new_task)
    else:
        target = existing
        if new_task is not None:
            _check_same_definition(existing, new_task)
    if path.is_file():
        files = task_files_for_file(path, slug=slug, split=split)
    else:
        files = task_files(path, slug=slug, split=split)
    spec = (
        _spec_of(target)
        if isinstance(target, Task)
        else TaskSpec(
            slug=slug,
            kind=target.kind,
            labels=tuple(target.labels),
            question_types={qt["question"]: qt["code"] for qt in target.question_types},
        )
    )
    plans = [(files, plan_task(files, spec=spec, build_nested=build_nested))]

    def task_for(_slug: str) -> Task:
        if isinstance(target, Task):
            return target
        task = Task.objects.create(
            slug=slug,
            name=target.name,
            kind=target.kind,
            description=target.description,
            multiple_spans=target.kind == Task.Kind.SPAN and target.multiple_spans,
            question_types=list(target.question_types),
        )
        Label.objects.bulk_create(
            Label(task=task, name=name, definition="", example="", position=i) for i, name in enumerate(target.labels)
        )
        return task

    return _finish(plans, task_for=task_for, dry_run=dry_run)


def _check_new_task(slug: str, new_task: NewTask | None) -> NewTask:
    """``new_task``, when it is a valid definition for a task ``slug`` that does not exist yet."""
    if new_task is None:
        raise TaskDefinitionError(f"task {slug!r} does not exist; give --name and --kind to create it")
    if not re.fullmatch(r"[-a-zA-Z0-9_]{1,50}", slug):
        raise TaskDefinitionError(f"task slug {slug!r} must be 1-50 letters, digits, hyphens or underscores")
    if new_task.kind not in Task.Kind.values:
        raise TaskDefinitionError(f"kind must be one of {', '.join(Task.Kind.values)}")
    if not 0 < len(new_task.name) <= 100:
        raise TaskDefinitionError("the task name must be 1-100 characters")
    if new_task.kind == Task.Kind.CLASSIFICATION and not new_task.labels:
        raise TaskDefinitionError("a new classification task needs its label set (--labels a,b,c)")
    if new_task.kind == Task.Kind.SPAN and new_task.labels:
        raise TaskDefinitionError("labels are for classification tasks; a span task's answers are spans")
    if len(set(new_task.labels)) != len(new_task.labels) or any(len(label) > 50 for label in new_task.labels):
        raise TaskDefinitionError("labels must be distinct and at most 50 characters each")
    codes = [qt["code"] for qt in new_task.question_types]
    if len(set(codes)) != len(codes) or any(len(code) > 20 for code in codes):
        raise TaskDefinitionError("question type codes must be distinct and at most 20 characters each")
    return new_task


def _check_same_definition(task: Task, new_task: NewTask) -> None:
    """Re-running a creating command is fine; a definition that contradicts the existing task is not."""
    if new_task.kind != task.kind:
        raise TaskDefinitionError(f"task {task.slug!r} exists as a {task.kind} task, not {new_task.kind}")
    labels = set(task.labels.values_list("name", flat=True))
    if new_task.labels and set(new_task.labels) != labels:
        raise TaskDefinitionError(
            f"task {task.slug!r} exists with the labels {', '.join(sorted(labels)) or '(none)'}; "
            "edit its labels in the admin, not here"
        )


def _finish(plans: list[tuple[TaskFiles, TaskPlan]], *, task_for: Callable[[str], Task], dry_run: bool) -> ImportResult:
    return finish_import(
        [(files.slug, plan) for files, plan in plans], task_for=task_for, dry_run=dry_run, compare=compare_with_paper
    )


def finish_import(
    plans: list[tuple[str, TaskPlan]],
    *,
    task_for: Callable[[str], Task],
    dry_run: bool,
    compare: Callable[[TaskPlan], list[Finding]],
    paper: str | None = None,
) -> ImportResult:
    """Write every (slug, plan) in one transaction; raises ImportRejected (errors found) or SetInUse (answered set).

    ``compare`` gives the paper_comparison findings of a plan that imports; ``paper`` names that paper.
    """
    result = ImportResult(findings=[f for _, plan in plans for f in plan.findings])
    if paper is not None:
        result.paper = paper
    result.tasks = [_outcome(slug, plan) for slug, plan in plans]
    slugs = ", ".join(slug for slug, _ in plans)
    if any(plan.has_errors for _, plan in plans):
        refusal = ImportRejected(result)
        kinds = sorted({f.kind for f in result.findings if f.is_error})
        logger.info("import of %s refused: %s (%s)", slugs, refusal, ", ".join(kinds))
        raise refusal
    result.findings += [f for _, plan in plans for f in compare(plan)]  # of files that import
    if dry_run:
        logger.info("import of %s checked (dry run): %s", slugs, _findings_summary(result))
        return result
    try:
        with transaction.atomic():
            for (slug, plan), outcome in zip(plans, result.tasks, strict=True):
                outcome.stats = write_plan(task=task_for(slug), plan=plan)
    except SetInUse as exc:
        logger.info("import of %s refused, nothing was written: %s", slugs, exc)
        raise
    result.written = True
    for outcome in result.tasks:
        stats = outcome.stats
        logger.info(
            "imported %s: examples %d new, %d updated; sets %d written, %d unchanged",
            outcome.slug,
            stats.examples_created,
            stats.examples_updated,
            stats.sets_written,
            stats.sets_unchanged,
        )
    logger.info("import of %s done: %s", slugs, _findings_summary(result))
    return result


def _findings_summary(result: ImportResult) -> str:
    counts = Counter(f.severity for f in result.findings)
    return ", ".join(f"{n} {severity}(s)" for severity, n in sorted(counts.items())) or "no findings"


def _outcome(slug: str, plan: TaskPlan) -> TaskOutcome:
    sizes = {}
    for s in plan.sets:
        if s.role == "test":
            sizes["test"] = len(s.fingerprints)
        else:
            sizes[s.name or f"split {s.split} {s.shots}-shot"] = len(s.fingerprints)
    nested = {
        p.number: "built from largest file" if p.nested_built else ("nested" if p.is_nested else "not nested")
        for p in plan.splits
    }
    return TaskOutcome(slug=slug, set_sizes=sizes, nested=nested)


def _clues_spec(slug: str) -> TaskSpec:
    task = Task.objects.filter(slug=slug).first()
    if task is not None:
        return _spec_of(task)
    definition = BY_SLUG[slug]
    return TaskSpec(
        slug=slug,
        kind=definition.kind,
        labels=tuple(label.name for label in definition.labels),
        question_types={qt["question"]: qt["code"] for qt in definition.question_types},
    )


def _spec_of(task: Task) -> TaskSpec:
    return TaskSpec(
        slug=task.slug,
        kind=task.kind,
        labels=tuple(task.labels.values_list("name", flat=True)),
        question_types={qt["question"]: qt["code"] for qt in task.question_types or [] if "question" in qt},
    )
