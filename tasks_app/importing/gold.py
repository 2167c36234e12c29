"""Turn a source line's answer into the Example's gold fields.

- ``gold_answers``: the set of answer strings, duplicates dropped, first-seen
  order kept. ``[]`` and ``[""]`` are the empty set; ``is_impossible: true``
  means the empty set whatever the list holds.
- ``gold_spans``: ``{"text", "start", "end"}`` for every located occurrence of
  every answer string (end exclusive). Where the source gives ``answer_start``
  and it points at the text, that span comes first; other occurrences follow.
- ``alternative_answers``: for answers given as ``{text, answer_start}``
  (SQuAD, ReCoRD: one entry per gold annotator), each distinct annotator answer
  as its own one-element set, for the scorer's best-of mode.
- ``extra``: every field besides id/context/question/answer, verbatim
  (genre, entities, is_impossible, plausible_answers), plus two additions:
  ``answer_raw`` (the answer list as given, when it held objects) and
  ``entities_exclusive`` (ReCoRD entities converted to this project's
  convention: ``end + 1``, with their text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tasks_app.importing.findings import Finding
from tasks_app.importing.locating import locate, offset_matches
from tasks_app.importing.reading import SourceLine


@dataclass
class Gold:
    answers: list[str]
    spans: list[dict]
    alternatives: list[list[str]]
    extra: dict
    findings: list[Finding] = field(default_factory=list)


def answer_texts(record: SourceLine) -> list[str]:
    """The answer strings in order, empty strings and duplicates dropped."""
    if record.raw.get("is_impossible") is True:
        return []
    texts: list[str] = []
    for item in record.answers:
        text = item if isinstance(item, str) else item["text"]
        if text and text not in texts:
            texts.append(text)
    return texts


def build_gold(record: SourceLine, *, task: str, locate_spans: bool) -> Gold:
    """Gold fields for one line; ``locate_spans`` is off for classification (labels are not spans)."""
    answers = answer_texts(record)
    extra = dict(record.extra)
    findings: list[Finding] = []
    has_offsets = any(isinstance(item, dict) for item in record.answers)
    alternatives: list[list[str]] = []
    if has_offsets:
        extra["answer_raw"] = record.answers
        if record.raw.get("is_impossible") is not True:
            for text in answers:
                alternatives.append([text])
    spans: list[dict] = []
    context = record.context
    if locate_spans and isinstance(context, str):
        given = _given_starts(record, context, task, findings)
        for text in answers:
            occurrences = locate(context, text)
            ordered = [(s, s + len(text)) for s in given.get(text, [])]
            ordered += [o for o in occurrences if o not in ordered]
            if not ordered:
                findings.append(
                    Finding(
                        task, record.file, record.line, "gold_not_found", f"gold {text!r} does not occur in the context"
                    )
                )
            spans.extend({"text": text, "start": s, "end": e} for s, e in ordered)
    if "entities" in record.raw and isinstance(context, str):
        extra["entities_exclusive"] = _entities_exclusive(record, context, task, findings)
    return Gold(answers=answers, spans=spans, alternatives=alternatives, extra=extra, findings=findings)


def _given_starts(record: SourceLine, context: str, task: str, findings: list[Finding]) -> dict[str, list[int]]:
    given: dict[str, list[int]] = {}
    for key in ("answer", "plausible_answers"):
        items = record.raw.get(key) or []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or "answer_start" not in item or not item.get("text"):
                continue
            text, start = item["text"], item["answer_start"]
            if not offset_matches(context, text, start):
                findings.append(
                    Finding(
                        task,
                        record.file,
                        record.line,
                        "offset_mismatch",
                        f"{key}: answer_start {start} does not point at {text!r}",
                    )
                )
            elif key == "answer" and start not in given.setdefault(text, []):
                given[text].append(start)
    return given


def _entities_exclusive(record: SourceLine, context: str, task: str, findings: list[Finding]) -> list[dict]:
    converted = []
    for entity in record.raw["entities"]:
        start, end = entity["start"], entity["end"]
        if not 0 <= start <= end < len(context):
            findings.append(
                Finding(
                    task,
                    record.file,
                    record.line,
                    "entity_out_of_range",
                    f"entity {start}..{end} (inclusive) is outside the context of {len(context)} characters",
                )
            )
            continue
        converted.append({"start": start, "end": end + 1, "text": context[start : end + 1]})
    return converted
