"""Read and check one FewCLUE task folder and plan what to write (no database access).

The sets, in this order: ``test_public`` (the task's test set), ``train_0``..``train_4``,
``dev_0``..``dev_4``, ``train_few_all`` and ``dev_few_all`` (named sets). A missing one is an error;
``test.json`` (unlabelled) and ``unlabeled.json`` are not read. Examples are identified by content
without the id, as in the CLUES importer, so ``train_few_all`` holds the very examples of
``train_0``..``train_4``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tasks_app.importing.fewclue.labels import LabelDef, read_label_file
from tasks_app.importing.fewclue.tasks import FewClueTask, LineProblem
from tasks_app.importing.findings import Finding
from tasks_app.importing.planning import SetPlan, TaskPlan
from tasks_app.importing.reading import canonical_json, json_lines, sha256
from tasks_app.importing.validation import TaskSpec

TEST_SET = "test_public"
TRAIN_SETS = tuple(f"train_{k}" for k in range(5))
DEV_SETS = tuple(f"dev_{k}" for k in range(5))
SET_NAMES = (TEST_SET, *TRAIN_SETS, *DEV_SETS, "train_few_all", "dev_few_all")
UNIONS = {"train_few_all": TRAIN_SETS, "dev_few_all": DEV_SETS}


def plan_fewclue_task(folder: Path, task: FewClueTask) -> tuple[TaskPlan, list[LabelDef]]:
    """The plan of one task folder and its labels; every problem is a finding of the plan."""
    findings: list[Finding] = []
    labels = list(task.labels)
    if task.label_file:
        labels, label_findings = read_label_file(task.slug, folder, task.label_file)
        findings += label_findings
    plan = TaskPlan(spec=TaskSpec(slug=task.slug, kind="classification", labels=tuple(lb.name for lb in labels)))
    if not labels:  # every line would be an unknown label: report the label file alone
        plan.findings = findings
        return plan, labels
    label_names = {lb.name: lb.definition for lb in labels}
    contents: dict[str, set[str]] = {}  # set name -> content keys (for the few_all comparison)
    read: dict[str, list[_Row]] = {}  # set name -> its rows (for the gold and overlap checks)
    for name in SET_NAMES:
        display = f"{folder.name}/{name}.json"
        path = folder / f"{name}.json"
        if not path.is_file():
            findings.append(Finding(task.slug, display, None, "missing_split", f"the split {name} is missing"))
            continue
        rows, file_findings = _read_file(path, display, task, label_names if task.label_file else None)
        findings += file_findings
        for row in rows:
            plan.examples.setdefault(row.fingerprint, row.values)
        contents[name] = {row.content_key for row in rows}
        read[name] = rows
        plan.sets.append(
            SetPlan(
                split=None,
                shots=None,
                source_file=display,
                fingerprints=[row.fingerprint for row in rows],
                name=name,
                is_test=name == TEST_SET,
            )
        )
    for union, parts in UNIONS.items():
        if union in contents and all(p in contents for p in parts):
            findings += _compare_union(task.slug, f"{folder.name}/{union}.json", union, contents, parts)
    for name, rows in read.items():
        findings += _contradictory_gold(task.slug, f"{folder.name}/{name}.json", rows)
    if TEST_SET in read:
        for name, rows in read.items():
            if name != TEST_SET:
                findings += _test_overlap(task.slug, f"{folder.name}/{name}.json", rows, read[TEST_SET])
    plan.findings = findings
    return plan, labels


@dataclass
class _Row:
    fingerprint: str  # identity: the content key, plus which repeat of that content within its file
    content_key: str  # SHA-256 of the line without its id
    values: dict  # the Example's fields
    item_key: str = ""  # SHA-256 of the line without its id and its label: the item, whatever its gold
    line: int = 0


def _read_file(
    path: Path, display: str, task: FewClueTask, label_names: dict[str, str] | None
) -> tuple[list[_Row], list[Finding]]:
    """One row per good line, in file order, and the findings."""
    findings: list[Finding] = []

    def add(line: int | None, kind: str, message: str) -> None:
        findings.append(Finding(task.slug, display, line, kind, message))

    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        add(None, "unreadable_file", f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        return [], findings
    except OSError as exc:
        add(None, "unreadable_file", f"cannot read: {exc.strerror}")
        return [], findings
    if not text.strip():
        add(None, "empty_file", "the file holds no lines")
        return [], findings
    labels = {lb.name for lb in task.labels} if label_names is None else set(label_names)
    rows: list[_Row] = []
    first_line: dict[str, tuple[int, str]] = {}  # id -> (line, content key)
    repeats: Counter[str] = Counter()
    first_of_content: dict[str, tuple[int, str]] = {}
    for number, line in json_lines(text):  # not splitlines(): IFLYTEK's texts hold U+2028
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            add(number, "malformed_json", f"invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        except RecursionError:
            add(number, "malformed_json", "invalid JSON: nested too deeply")
            continue
        if not isinstance(raw, dict):
            add(number, "malformed_json", f"a line must be a JSON object, got {type(raw).__name__}")
            continue
        try:
            source_id, label = _id_and_label(raw, task, labels)
            converted = task.convert(raw, task)
        except LineProblem as problem:
            add(number, problem.kind, problem.message)
            continue
        content_key = sha256(canonical_json({k: v for k, v in raw.items() if k != task.id_field}))
        if source_id in first_line:
            earlier, earlier_key = first_line[source_id]
            if earlier_key == content_key:
                add(number, "duplicate_id", f"id {source_id} and the same content already on line {earlier}")
                continue
            add(number, "id_repeated", f"id {source_id} already on line {earlier} for another item; both are kept")
        else:
            first_line[source_id] = (number, content_key)
        named = raw.get(task.label_name_field) if task.label_name_field else None
        # The label file's readable name holds the data's label name (TNEWS's English, IFLYTEK's Chinese).
        if label_names is not None and isinstance(named, str) and named not in label_names[label]:
            add(
                number,
                "label_name_mismatch",
                f"{task.label_name_field} {named!r} but label {label} is {label_names[label]!r}",
            )
        for kind, message in converted.warnings:
            add(number, kind, message)
        seen = repeats[content_key]
        repeats[content_key] += 1
        if seen:  # the same item under another id: kept as one more example, as CLUES does
            first, first_id = first_of_content[content_key]
            add(number, "duplicate_content", f"id {source_id} is the same item as line {first}, id {first_id}")
        else:
            first_of_content[content_key] = (number, source_id)
        fingerprint = content_key if not seen else sha256(f"{content_key}#{seen}")
        values = {
            "source_id": source_id,
            "fingerprint": fingerprint,
            "question_type": "",
            "gold_answers": [label],
            "gold_spans": [],
            "alternative_answers": [],
            "choices": [],
            "marks": [],
            **converted.values,
        }
        shown = {k: v for k, v in raw.items() if k not in (task.id_field, task.label_field)}
        rows.append(_Row(fingerprint, content_key, values, sha256(canonical_json(shown)), number))
    return rows, findings


def _id_and_label(raw: dict, task: FewClueTask, labels: set[str]) -> tuple[str, str]:
    for name in (task.id_field, task.label_field):
        if name not in raw:
            raise LineProblem("missing_field", f"missing field: {name}")
    source_id, label = raw[task.id_field], raw[task.label_field]
    if isinstance(source_id, bool) or not isinstance(source_id, (str, int)) or not 0 < len(str(source_id)) <= 100:
        raise LineProblem("bad_field", f"{task.id_field} must be an integer or a string of 1-100 characters")
    if isinstance(label, bool) or not isinstance(label, (str, int)):
        raise LineProblem("bad_field", f"{task.label_field} must be a string or an integer")
    if str(label) not in labels:
        raise LineProblem(
            "unknown_label", f"{task.label_field} {label!r} is not one of the task's {len(labels)} labels"
        )
    return str(source_id), str(label)


def _gold(row: _Row) -> str:
    return str(row.values["gold_answers"][0])


def _contradictory_gold(slug: str, display: str, rows: list[_Row]) -> list[Finding]:
    """Items of one file that are the same but for their id and gold, with different gold: name each pair."""
    first: dict[str, _Row] = {}
    findings = []
    for row in rows:
        earlier = first.setdefault(row.item_key, row)
        if earlier is not row and _gold(earlier) != _gold(row):
            findings.append(
                Finding(
                    slug,
                    display,
                    row.line,
                    "contradictory_gold",
                    f"id {row.values['source_id']} (gold {_gold(row)}) is the same item as line {earlier.line}, "
                    f"id {earlier.values['source_id']} (gold {_gold(earlier)})",
                )
            )
    return findings


def _test_overlap(slug: str, display: str, rows: list[_Row], test: list[_Row]) -> list[Finding]:
    """Items of a training or development file that are also in test_public (whatever their gold)."""
    in_test: dict[str, _Row] = {}
    for row in test:
        in_test.setdefault(row.item_key, row)
    findings = []
    for row in rows:
        other = in_test.get(row.item_key)
        if other is None:
            continue
        gold = "same gold" if _gold(row) == _gold(other) else f"gold {_gold(row)} here, {_gold(other)} there"
        findings.append(
            Finding(
                slug,
                display,
                row.line,
                "test_overlap",
                f"id {row.values['source_id']} is {TEST_SET} id {other.values['source_id']} "
                f"(line {other.line}; {gold})",
            )
        )
    return findings


def _compare_union(
    slug: str, display: str, union: str, contents: dict[str, set[str]], parts: tuple[str, ...]
) -> list[Finding]:
    """A few_all file should hold exactly the items of its five splits; say where it does not."""
    joined = set().union(*(contents[p] for p in parts))
    missing, extra = len(joined - contents[union]), len(contents[union] - joined)
    if not missing and not extra:
        return []
    message = (
        f"{union} has {len(contents[union])} distinct items, {parts[0]}..{parts[-1][-1]} together "
        f"{len(joined)}: {missing} of theirs not in it, {extra} of its own in none of them"
    )
    return [Finding(slug, display, None, "few_all_differs", message)]
