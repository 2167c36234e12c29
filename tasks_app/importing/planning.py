"""Read and check every file of one task, and plan what to write (no database access).

A plan holds the examples (keyed by fingerprint) and each set as an ordered
list of fingerprints. An example is identified by its content without the id
(see reading.py): the same line in several files is one example even when the
files number it differently (SST-2); a content repeated within one file
(CoNLL's test file has such lines) is as many examples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tasks_app.importing.findings import Finding
from tasks_app.importing.gold import build_gold
from tasks_app.importing.layout import SHOT_LEVELS, TaskFiles
from tasks_app.importing.nesting import check_nested, nested_prefixes
from tasks_app.importing.reading import SourceLine, read_jsonl
from tasks_app.importing.validation import TaskSpec, find_reused_ids, validate_file


@dataclass
class SetPlan:
    split: int | None  # None for the test set and named sets
    shots: int | None
    source_file: str
    fingerprints: list[str]
    name: str = ""  # the release's name of the set (FewCLUE's dev_0); a non-test set with a name is a named set
    is_test: bool | None = None  # None: the test set when it has no split and no name

    @property
    def role(self) -> str:
        if self.is_test or (self.is_test is None and self.split is None and not self.name):
            return "test"
        return "train" if self.split is not None else "named"


@dataclass
class SplitPlan:
    number: int
    is_nested: bool
    nested_built: bool


@dataclass
class TaskPlan:
    spec: TaskSpec
    examples: dict[str, dict] = field(default_factory=dict)  # fingerprint -> Example field values
    sets: list[SetPlan] = field(default_factory=list)
    splits: list[SplitPlan] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        return any(f.is_error for f in self.findings)


Key = tuple[int, int] | None  # (split, shots) of a training file; None for the test file


def plan_task(
    files: TaskFiles, *, spec: TaskSpec, build_nested: bool = False, expect_release: bool = False
) -> TaskPlan:
    """Read, check and plan one task. ``expect_release`` reports missing shot files of a split."""
    plan = TaskPlan(spec=spec)
    ordered_keys: list[Key] = [None, *sorted(files.train)]
    names = {key: files.display(files.test if key is None else files.train[key]) for key in ordered_keys}
    read: dict[Key, list[SourceLine]] = {}
    for key in ordered_keys:
        records, findings = read_jsonl(
            files.test if key is None else files.train[key], task=spec.slug, display=names[key]
        )
        plan.findings += findings
        plan.findings += validate_file(records, spec=spec, file=names[key], shots=None if key is None else key[1])
        read[key] = records
    if expect_release:
        plan.findings += _missing_files(files, task=spec.slug)
    plan.findings += find_reused_ids((read[k] for k in ordered_keys), task=spec.slug)

    examples: dict[str, dict] = {}
    for key in ordered_keys:
        for record in read[key]:
            values = _example_values(record, spec=spec, findings=plan.findings)
            examples.setdefault(record.fingerprint, values)

    chosen: dict[Key, list[SourceLine]] = {None: read[None]}
    source_of = dict(names)
    for split in sorted({s for s, _ in files.train}):
        levels = {shots: read[(split, shots)] for (s, shots) in files.train if s == split}
        level_names = {shots: names[(split, shots)] for shots in levels}
        split_plan, levels, findings = _plan_split(
            split, levels, level_names, task=spec.slug, build_nested=build_nested
        )
        plan.splits.append(split_plan)
        plan.findings += findings
        for shots, records in levels.items():
            chosen[(split, shots)] = records
            if split_plan.nested_built and shots < max(levels):
                source_of[(split, shots)] = f"{level_names[max(levels)]} (first {shots} per question type)"

    for key in [None, *sorted(k for k in chosen if k is not None)]:
        fingerprints = list(dict.fromkeys(r.fingerprint for r in chosen[key]))
        for fingerprint in fingerprints:
            plan.examples[fingerprint] = examples[fingerprint]
        plan.sets.append(
            SetPlan(
                split=None if key is None else key[0],
                shots=None if key is None else key[1],
                source_file=source_of[key],
                fingerprints=fingerprints,
            )
        )
    plan.findings.sort(key=_finding_order(names))
    return plan


def _plan_split(
    split: int, levels: dict[int, list[SourceLine]], names: dict[int, str], *, task: str, build_nested: bool
) -> tuple[SplitPlan, dict[int, list[SourceLine]], list[Finding]]:
    """Check one split's nesting; with ``build_nested``, replace the smaller levels by prefixes of the largest."""
    findings = check_nested(levels, task=task, split=split, names=names)
    if not findings or not build_nested:
        return SplitPlan(number=split, is_nested=not findings, nested_built=False), levels, findings
    largest = max(levels)
    smaller = sorted(k for k in levels if k < largest)
    findings.append(
        Finding(
            task,
            names[largest],
            None,
            "nested_built",
            f"split {split}: files not nested; the {'/'.join(map(str, smaller))}-shot sets were "
            f"built as prefixes (per question type) of this {largest}-shot file",
        )
    )
    levels = {**levels, **nested_prefixes(levels[largest], smaller)}
    return SplitPlan(number=split, is_nested=True, nested_built=True), levels, findings


def _missing_files(files: TaskFiles, *, task: str) -> list[Finding]:
    """A split with some of its shot files: the others are missing."""
    prefix = files.test.name.removesuffix("_test.jsonl")
    return [
        Finding(
            task,
            f"{files.folder.name}/{prefix}_train_{shots}_{split}.jsonl",
            None,
            "missing_file",
            "training file not found",
        )
        for split in sorted({s for s, _ in files.train})
        for shots in SHOT_LEVELS
        if (split, shots) not in files.train
    ]


def _example_values(record: SourceLine, *, spec: TaskSpec, findings: list[Finding]) -> dict:
    gold = build_gold(record, task=spec.slug, locate_spans=not spec.is_classification)
    findings.extend(gold.findings)
    return {
        "source_id": record.source_id,
        "fingerprint": record.fingerprint,
        "context": record.context,
        "question": record.question,
        "question_type": record.question_type,
        "gold_answers": gold.answers,
        "gold_spans": gold.spans,
        "alternative_answers": gold.alternatives,
        "extra": gold.extra,
        "choices": [],
        "marks": [],
    }


def _finding_order(names: Mapping[tuple[int, int] | None, str]) -> Callable[[Finding], tuple[int, str, int, str]]:
    rank = {name: i for i, name in enumerate(names.values())}

    def key(finding: Finding) -> tuple[int, str, int, str]:
        return (rank.get(finding.file, len(rank)), finding.file, finding.line or 0, finding.kind)

    return key
