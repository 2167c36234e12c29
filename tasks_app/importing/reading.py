"""Read a JSONL file of the unified format into ``SourceLine`` records.

Every shape of the CLUES release is accepted: label words, sentence-pair
contexts, ``[""]`` for the empty set, SQuAD-style ``{text, answer_start}``
answers and ReCoRD's extra ``entities``. Structural problems become findings;
lines with errors are dropped (the run then fails and imports nothing).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasks_app.importing.findings import Finding

REQUIRED_FIELDS = ("id", "context", "question", "answer")


@dataclass
class SourceLine:
    file: str
    line: int
    raw: dict
    source_id: str
    context: str | list[str]
    question: str
    answers: list
    fingerprint: str  # identity: the content key, plus which repeat of that content within its file
    content_key: str  # SHA-256 of the canonical line without its id (nesting compares this)
    question_type: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def location(self) -> tuple[str, int]:
        return self.file, self.line


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    r"""A JSON-lines text's lines, numbered from 1. A line ends at "\n" only (a "\r" before it is dropped):
    ``str.splitlines()`` also ends one at U+2028, U+2029 and U+0085, which JSON allows raw inside a
    string (IFLYTEK's texts hold U+2028), and would cut such a record in two."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


def read_jsonl(path: Path, *, task: str, display: str) -> tuple[list[SourceLine], list[Finding]]:
    """Parse one file. ``display`` is the name used in findings (e.g. ``SST-2/sst_test.jsonl``)."""
    findings: list[Finding] = []
    try:
        text = path.read_text(encoding="utf-8-sig")  # tolerate a byte-order mark
    except UnicodeDecodeError as exc:
        message = f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        return [], [Finding(task, display, None, "unreadable_file", message)]
    except OSError as exc:
        return [], [Finding(task, display, None, "unreadable_file", f"cannot read: {exc.strerror}")]
    if not text.strip():
        return [], [Finding(task, display, None, "empty_file", "the file holds no lines")]
    records = []
    repeats: dict[str, int] = {}
    for number, line in json_lines(text):
        if not line.strip():
            continue
        record, problems = parse_line(line, task=task, file=display, line=number)
        findings.extend(problems)
        if record is not None:
            # Identity is content, not id: SST-2 gives the same sentence other ids in each
            # file, yet the 10-shot items must be the same examples as in the 20-shot set.
            # The k-th repeat of a content within one file is its own example (CoNLL's
            # test file has the same sentence under two ids).
            seen = repeats.get(record.content_key, 0)
            repeats[record.content_key] = seen + 1
            if seen:
                record.fingerprint = sha256(f"{record.content_key}#{seen}")
            records.append(record)
    return records, findings


def parse_line(text: str, *, task: str, file: str, line: int) -> tuple[SourceLine | None, list[Finding]]:
    """One line into a record, or ``None`` and the findings that explain why not."""
    number = line

    def problem(kind: str, message: str) -> tuple[None, list[Finding]]:
        return None, [Finding(task, file, number, kind, message)]

    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return problem("malformed_json", f"invalid JSON: {exc.msg} (column {exc.colno})")
    except RecursionError:
        return problem("malformed_json", "invalid JSON: nested too deeply")
    if not isinstance(raw, dict):
        return problem("malformed_json", f"a line must be a JSON object, got {type(raw).__name__}")
    missing = [name for name in REQUIRED_FIELDS if name not in raw]
    if missing:
        return problem("missing_field", "missing field(s): " + ", ".join(missing))
    shape_error = _shape_error(raw)
    if shape_error:
        return problem("bad_field", shape_error)
    without_id = {k: v for k, v in raw.items() if k != "id"}
    record = SourceLine(
        file=file,
        line=number,
        raw=raw,
        source_id=str(raw["id"]),
        context=raw["context"],
        question=raw["question"],
        answers=raw["answer"],
        fingerprint=sha256(canonical_json(without_id)),
        content_key=sha256(canonical_json(without_id)),
        extra={k: v for k, v in raw.items() if k not in REQUIRED_FIELDS},
    )
    return record, []


def _shape_error(raw: dict) -> str:
    source_id = raw["id"]
    if isinstance(source_id, bool) or not isinstance(source_id, (str, int)) or str(source_id) == "":
        return "id must be a non-empty string or an integer"
    if len(str(source_id)) > 100:
        return "id is longer than 100 characters"
    context = raw["context"]
    if isinstance(context, list):
        if len(context) != 2 or not all(isinstance(c, str) for c in context):
            return "context must be a string or a list of two strings (a sentence pair)"
    elif not isinstance(context, str):
        return "context must be a string or a list of two strings (a sentence pair)"
    if not isinstance(raw["question"], str):
        return "question must be a string"
    answers = raw["answer"]
    if not isinstance(answers, list):
        return 'answer must be a list (of strings, or of {"text", "answer_start"} objects)'
    for item in answers:
        if isinstance(item, str):
            continue
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            start = item.get("answer_start")
            if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
                return "answer_start must be an integer"
            continue
        return 'each answer must be a string or a {"text", "answer_start"} object'
    if any(isinstance(a, dict) for a in answers) and not isinstance(context, str):
        return "answers with offsets need a string context"
    problem = _content_problem(raw)
    if problem:
        return problem
    entities = raw.get("entities")
    if entities is not None:
        ok = isinstance(entities, list) and all(
            isinstance(e, dict) and isinstance(e.get("start"), int) and isinstance(e.get("end"), int) for e in entities
        )
        if not ok:
            return 'entities must be a list of {"start", "end"} integer objects'
    return ""


MAX_DEPTH = 50  # far deeper than any release line; keeps every later json.dumps well inside the recursion limit


def _content_problem(value: object, depth: int = 0) -> str:
    """A NUL character (PostgreSQL refuses those) or nesting beyond MAX_DEPTH anywhere in ``value``."""
    if depth > MAX_DEPTH:
        return f"a field is nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, str):
        return "the line holds a NUL character (\\u0000), which the database cannot store" if "\x00" in value else ""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        problem = _content_problem(key, depth) if isinstance(key, str) else ""
        problem = problem or _content_problem(item, depth + 1)
        if problem:
            return problem
    return ""
