"""``import_fewclue``: the nine FewCLUE tasks from the repository's ``datasets/`` folder, all or nothing.

Checks every file of every task first (``planning``); any error refuses the run and nothing is written.
Else each task is created on first import (slug ``fewclue-<folder>``, its labels from the data's label
set) and written in one transaction with the CLUES importer's loader.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tasks_app.importing.fewclue.labels import LabelDef
from tasks_app.importing.fewclue.planning import plan_fewclue_task
from tasks_app.importing.fewclue.tasks import BY_FOLDER, TASKS, TNEWS_WITH_KEYWORDS, FewClueTask
from tasks_app.importing.findings import Finding
from tasks_app.importing.layout import LayoutError
from tasks_app.importing.paper_comparison import KIND as PAPER_COMPARISON
from tasks_app.importing.planning import TaskPlan
from tasks_app.importing.service import ImportResult, finish_import
from tasks_app.models import Label, Task
from tasks_app.paper import FEWCLUE_LABEL_COUNTS, FEWCLUE_SIZES_SOURCE, FEWCLUE_TEST_SET_SIZES

CHINESE = "zh-hans"
PAPER = FEWCLUE_SIZES_SOURCE


def import_fewclue(
    *, path: Path, folders: list[str] | None = None, dry_run: bool = False, tnews_keywords: bool = False
) -> ImportResult:
    """Import FewCLUE's ``datasets/`` folder (all nine tasks, or the named ones). TNEWS's items are its
    headline alone, as the paper's example shows them, or with ``tnews_keywords`` the headline and the data's
    keywords. Raises LayoutError or ImportRejected (tasks_app.importing.service)."""
    root = Path(path)
    if not root.is_dir():
        raise LayoutError(f"no such directory: {root}")
    chosen = [BY_FOLDER[f] for f in folders] if folders else list(TASKS)
    if tnews_keywords:
        chosen = [TNEWS_WITH_KEYWORDS if t.folder == "tnews" else t for t in chosen]
    absent = [t.folder for t in chosen if not (root / t.folder).is_dir()]
    if absent:
        raise LayoutError(f"{root} has no task folder {', '.join(absent)} (give the repository's datasets/ folder)")
    planned = {t.slug: (t, *plan_fewclue_task(root / t.folder, t)) for t in chosen}

    def task_for(slug: str) -> Task:
        task, _, labels = planned[slug]
        return _install_task(task, labels)

    return finish_import(
        [(slug, plan) for slug, (_, plan, _) in planned.items()],
        task_for=task_for,
        dry_run=dry_run,
        compare=_compare_with_paper,
        paper=PAPER,
    )


def _install_task(definition: FewClueTask, labels: list[LabelDef]) -> Task:
    """The task, created on first import; later imports add new labels and never overwrite admin edits."""
    task, _ = Task.objects.get_or_create(
        slug=definition.slug,
        defaults={
            "name": definition.name,
            "kind": Task.Kind.CLASSIFICATION,
            "description": definition.description,
            "instructions": definition.instructions,
            "worker_title": definition.worker_title,
            # The worker texts in Chinese, for studies set to zh-hans (docs/studies.md, Languages).
            "translations": {CHINESE: _chinese_texts(definition, labels)} if definition.chinese else {},
            "segment_titles": list(definition.segment_titles),
            "display_order": 200 + [t.folder for t in TASKS].index(definition.folder),
        },
    )
    existing = set(task.labels.values_list("name", flat=True))
    Label.objects.bulk_create(
        Label(task=task, name=label.name, definition=label.definition[:300], example="", position=i)
        for i, label in enumerate(labels)
        if label.name not in existing
    )
    return task


def _chinese_texts(definition: FewClueTask, labels: list[LabelDef]) -> dict[str, object]:
    """The task's worker texts for a study in Chinese: the translated texts, and what is Chinese already in
    the data (the examples' question, each label's Chinese name), so that a zh-hans study lacks none."""
    assert definition.chinese is not None
    texts = definition.chinese.as_translation()
    texts["worker_question"] = definition.question
    texts["labels"] = {
        label.name: {"name": label.definition[:300], "definition": label.definition[:300]}
        for label in labels
        if label.definition
    }
    return texts


def _compare_with_paper(plan: TaskPlan) -> list[Finding]:
    folder = plan.spec.slug.removeprefix("fewclue-")
    test = next((s for s in plan.sets if s.role == "test"), None)
    findings = []
    if test is not None:
        size, expected = len(test.fingerprints), FEWCLUE_TEST_SET_SIZES[folder]
        verdict = "as in the paper" if size == expected else f"the paper has {expected}, the file {size - expected:+d}"
        golds = Counter(plan.examples[fp]["gold_answers"][0] for fp in test.fingerprints)
        spread = ", ".join(f"{label} {n}" for label, n in golds.most_common(3))
        more = f" and {len(golds) - 3} more" if len(golds) > 3 else ""
        line = f"test_public: {size} items; {verdict}; labels used: {len(golds)} ({spread}{more})"
        findings.append(Finding(plan.spec.slug, test.source_file, None, PAPER_COMPARISON, line))
    if folder in FEWCLUE_LABEL_COUNTS:
        count, expected = len(plan.spec.labels), FEWCLUE_LABEL_COUNTS[folder]
        verdict = "as in the paper" if count == expected else f"the paper has {expected}"
        findings.append(
            Finding(plan.spec.slug, folder, None, PAPER_COMPARISON, f"label set: {count} labels; {verdict}")
        )
    return findings
