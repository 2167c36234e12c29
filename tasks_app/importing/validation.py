"""Checks on the records of one file, and across the files of one task."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from tasks_app.importing.findings import Finding
from tasks_app.importing.gold import answer_texts
from tasks_app.importing.reading import SourceLine


@dataclass(frozen=True)
class TaskSpec:
    """What validation needs to know of a task, without the database."""

    slug: str
    kind: str  # "classification" or "span"
    labels: tuple[str, ...] = ()
    question_types: dict[str, str] = field(default_factory=dict)  # question text -> code

    @property
    def is_classification(self) -> bool:
        return self.kind == "classification"


def validate_file(records: list[SourceLine], *, spec: TaskSpec, file: str, shots: int | None = None) -> list[Finding]:
    """Per-file checks. Also sets each record's ``question_type``."""
    findings: list[Finding] = []
    first_line_of_id: dict[str, int] = {}
    first_line_of_content: dict[str, tuple[int, str]] = {}
    unnamed_labels: dict[tuple[str, str], list[int]] = {}
    for record in records:
        here = (spec.slug, record.file, record.line)
        if record.source_id in first_line_of_id:
            first = first_line_of_id[record.source_id]
            findings.append(Finding(*here, "duplicate_id", f"id {record.source_id!r} already on line {first}"))
        else:
            first_line_of_id[record.source_id] = record.line
        seen = first_line_of_content.get(record.content_key)
        if seen is None:
            first_line_of_content[record.content_key] = (record.line, record.source_id)
        elif seen[1] != record.source_id:
            findings.append(
                Finding(
                    *here,
                    "duplicate_content",
                    f"same content as line {seen[0]} (id {seen[1]!r}) under id {record.source_id!r}; "
                    "kept as two examples",
                )
            )
        if spec.question_types:
            record.question_type = spec.question_types.get(record.question, "")
            if not record.question_type:
                message = f"question {record.question!r} matches no question type"
                findings.append(Finding(*here, "unknown_question", message))
        if spec.is_classification:
            for text in answer_texts(record):
                if text not in spec.labels:
                    allowed = ", ".join(spec.labels) or "(none defined)"
                    findings.append(Finding(*here, "unknown_label", f"label {text!r} is not one of: {allowed}"))
            for label in spec.labels:
                if label not in record.question:
                    unnamed_labels.setdefault((record.question, label), []).append(record.line)
    for (question, label), lines in unnamed_labels.items():
        findings.append(
            Finding(
                spec.slug,
                file,
                lines[0],
                "question_label_mismatch",
                f"question {question!r} does not name the label {label!r} ({len(lines)} line(s))",
            )
        )
    if shots is not None:
        findings.extend(_size_findings(records, spec=spec, file=file, shots=shots))
    return findings


def _size_findings(records: list[SourceLine], *, spec: TaskSpec, file: str, shots: int) -> list[Finding]:
    if spec.question_types:
        counts = Counter(r.question_type for r in records)
        wrong = {code: counts.get(code, 0) for code in spec.question_types.values() if counts.get(code, 0) != shots}
        if wrong:
            detail = ", ".join(f"{code}: {n}" for code, n in wrong.items())
            message = f"expected {shots} items per question type ({detail})"
            return [Finding(spec.slug, file, None, "unexpected_size", message)]
        return []
    if len(records) != shots:
        return [Finding(spec.slug, file, None, "unexpected_size", f"expected {shots} items, found {len(records)}")]
    return []


def find_reused_ids(files: Iterable[list[SourceLine]], *, task: str) -> list[Finding]:
    """Lines whose id an earlier file (in the order given) used for other content than theirs."""
    contents_of_id: dict[str, dict[str, tuple[str, int]]] = {}
    findings = []
    for records in files:
        new_here: dict[str, dict[str, tuple[str, int]]] = {}
        for record in records:
            earlier = contents_of_id.get(record.source_id, {})
            other = [where for key, where in earlier.items() if key != record.content_key]
            if other:
                file, line = other[0]
                findings.append(
                    Finding(
                        task,
                        record.file,
                        record.line,
                        "id_reused",
                        f"id {record.source_id!r} stands for other content in {file}:{line}",
                    )
                )
            new_here.setdefault(record.source_id, {})[record.content_key] = record.location
        for source_id, contents in new_here.items():
            for key, where in contents.items():
                contents_of_id.setdefault(source_id, {}).setdefault(key, where)
    return findings
