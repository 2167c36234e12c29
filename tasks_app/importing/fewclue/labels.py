"""FewCLUE's label files, read as data: TNEWS's JSON lines, CSLDCP's text list and IFLYTEK's Python file.

IFLYTEK's ``label_id2des_desc2short.py`` is parsed with ``ast`` and only its dict literals are read
(``ast.literal_eval``): it is never imported or run. A problem is a ``bad_label_file`` finding with
file and line; the labels are then empty and the run is refused.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

from tasks_app.importing.findings import Finding
from tasks_app.importing.reading import json_lines


@dataclass(frozen=True)
class LabelDef:
    name: str  # the value of the data's label field, as a string
    definition: str  # a readable name (Chinese, with the short or English name where the file has one)


def read_label_file(task: str, folder: Path, file_name: str) -> tuple[list[LabelDef], list[Finding]]:
    """The labels of one label file, in the file's order, and what is wrong with it."""
    path = folder / file_name
    display = f"{folder.name}/{file_name}"

    def bad(message: str, line: int | None = None) -> tuple[list[LabelDef], list[Finding]]:
        return [], [Finding(task, display, line, "bad_label_file", message)]

    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return bad("label file not found")
    except UnicodeDecodeError as exc:
        return bad(f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        return bad(f"cannot read: {exc.strerror}")
    parse = {".json": _tnews_labels, ".txt": _text_labels, ".py": _iflytek_labels}[path.suffix]
    try:
        labels = parse(text)
    except _LabelFileError as exc:
        return bad(exc.message, exc.line)
    if not labels:
        return bad("the file names no labels")
    names = [label.name for label in labels]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        return bad(f"label(s) named twice: {', '.join(repeated)}")
    too_long = [n for n in names if len(n) > 50]
    if too_long:
        return bad(f"label names longer than 50 characters: {', '.join(too_long)}")
    return labels, []


class _LabelFileError(Exception):
    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message, self.line = message, line


def _tnews_labels(text: str) -> list[LabelDef]:
    """One JSON object a line: {"label": "100", "label_desc": "news_story", "label_zh": "故事"}."""
    labels = []
    for number, line in json_lines(text):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _LabelFileError(f"invalid JSON: {exc.msg} (column {exc.colno})", number) from None
        if not isinstance(row, dict) or not all(isinstance(row.get(k), (str, int)) for k in ("label", "label_zh")):
            raise _LabelFileError('a line must be an object with "label" and "label_zh"', number)
        english = row.get("label_desc")
        definition = f"{row['label_zh']}（{english}）" if isinstance(english, str) and english else str(row["label_zh"])
        labels.append(LabelDef(str(row["label"]), definition))
    return labels


def _text_labels(text: str) -> list[LabelDef]:
    """One label name a line (CSLDCP's disciplines)."""
    return [LabelDef(line.strip(), line.strip()) for line in text.splitlines() if line.strip()]


def _iflytek_labels(text: str) -> list[LabelDef]:
    """``iflytek_labels = {name: id}`` and, if present, ``label_des2tag = {name: short name}``; by id."""
    try:
        module = ast.parse(text)
    except SyntaxError as exc:
        raise _LabelFileError(f"not valid Python: {exc.msg}", exc.lineno) from None
    literals: dict[str, object] = {}
    for node in module.body:  # top-level `name = {...}` only; nothing is evaluated but literals
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Dict)):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name):
            try:
                literals[target.id] = ast.literal_eval(node.value)
            except ValueError:
                raise _LabelFileError(f"{target.id} is not a literal", node.lineno) from None
    ids = literals.get("iflytek_labels")
    if not isinstance(ids, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in ids.items()
    ):
        raise _LabelFileError("no dict literal iflytek_labels = {label name: integer id}")
    by_id: dict[int, str] = {}
    for name, label_id in ids.items():
        if label_id in by_id:
            raise _LabelFileError(f"id {label_id} given to both {by_id[label_id]} and {name}")
        by_id[label_id] = name
    short = literals.get("label_des2tag")
    short_names = short if isinstance(short, dict) else {}
    labels = []
    for label_id, name in sorted(by_id.items()):
        tag = short_names.get(name)
        definition = f"{name}（简称：{tag}）" if isinstance(tag, str) and tag and tag != name else name
        labels.append(LabelDef(str(label_id), definition))
    return labels
