"""What the importer found: one ``Finding`` per problem, with file and line.

Severity decides what happens to the import: any *error* stops the whole run
and nothing is written (the run is one transaction); *warnings* are reported
and the data is imported as it is; *info* records what the importer did on
purpose (e.g. nested sets built from the 30-shot file).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass

ERROR = "error"
WARNING = "warning"
INFO = "info"

# kind -> severity. Kinds are stable identifiers: tests and --json users rely on them.
KINDS: dict[str, str] = {
    "unreadable_file": ERROR,  # not UTF-8, or cannot be opened
    "empty_file": ERROR,  # no lines at all
    "malformed_json": ERROR,  # a line that is not a JSON object
    "missing_field": ERROR,  # id, context, question or answer absent
    "bad_field": ERROR,  # a field of the wrong shape (e.g. answer not a list)
    "unknown_label": ERROR,  # classification gold outside the task's label set
    "duplicate_id": ERROR,  # the same id twice within one file
    "missing_split": ERROR,  # FewCLUE: a task folder without one of its 13 set files
    "bad_label_file": ERROR,  # FewCLUE: a label file missing, malformed or naming a label twice
    "idiom_marker": ERROR,  # FewCLUE CHID: #idiom# missing or repeated in a content
    "span_mismatch": ERROR,  # FewCLUE CLUEWSC: a span index that does not point at its span text
    "missing_file": WARNING,  # an expected training file is absent
    "gold_not_found": WARNING,  # a gold string that does not occur in its context
    "offset_mismatch": WARNING,  # answer_start does not point at the answer text
    "entity_out_of_range": WARNING,  # a ReCoRD entity span outside its context
    "id_reused": WARNING,  # an id already used, in an earlier file, for other content
    "duplicate_content": WARNING,  # the same content twice in one file under two ids
    "unknown_question": WARNING,  # a question matching none of the task's question types
    "question_label_mismatch": WARNING,  # the question text does not name a label
    "unexpected_size": WARNING,  # a k-shot file without k items per question type
    "split_not_nested": WARNING,  # a smaller shot file not contained in the next larger one
    "id_repeated": WARNING,  # FewCLUE: an id used again in one file for another item (both kept)
    "label_name_mismatch": WARNING,  # FewCLUE: a line's label name disagrees with the label file
    "few_all_differs": WARNING,  # FewCLUE: train/dev_few_all is not the union of its five splits
    "contradictory_gold": WARNING,  # FewCLUE: one file holds an item twice (ids aside) with different gold
    "test_overlap": WARNING,  # FewCLUE: an item of a training or development file is also in test_public
    "nested_built": INFO,  # 10/20 sets rebuilt as prefixes of the 30-shot file
    "paper_comparison": INFO,  # the test set against the paper (CLUES Table 3 and MNLI's genres; FewCLUE sizes)
}


@dataclass(frozen=True)
class Finding:
    task: str
    file: str
    line: int | None
    kind: str
    message: str

    @property
    def severity(self) -> str:
        return KINDS[self.kind]

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def as_dict(self) -> dict:
        return {**asdict(self), "severity": self.severity}


def findings_to_json(findings: Iterable[Finding]) -> str:
    return json.dumps([f.as_dict() for f in findings], ensure_ascii=False, indent=2)


def findings_table(findings: Iterable[Finding], *, max_message: int = 110) -> str:
    """A plain-text table: location, severity, kind, message (one line each)."""
    rows = [(f.location, f.severity, f.kind, _one_line(f.message, max_message)) for f in findings]
    if not rows:
        return "No findings."
    headers = ("file:line", "severity", "kind", "message")
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in range(3)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers[:3], widths, strict=True)) + "  " + headers[3]]
    lines.append("  ".join("-" * w for w in widths) + "  " + "-" * len(headers[3]))
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3])
    return "\n".join(lines)


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
