"""The nine FewCLUE tasks and how one line of each becomes an Example (no Django).

Every task is a classification task. A label's name is the value of the line's label field as a
string ("Positive", "102", "entailment", "1", "true"); CHID's label is the index of the right
candidate ("0".."6") and the item's own seven idioms are its ``choices``. Pairs (OCNLI, BUSTM) and
text + keywords (CSL, TNEWS) are two-part contexts; CLUEWSC's two spans are ``marks`` of its text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tasks_app.importing.fewclue.labels import LabelDef

IDIOM = "#idiom#"
CHID_CANDIDATES = 7


class LineProblem(Exception):
    """A line that cannot become an example: ``kind`` is a finding kind (an error)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


@dataclass
class Converted:
    values: dict  # context, question, gold_answers, choices, marks, extra
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (kind, message)


@dataclass(frozen=True)
class FewClueTask:
    folder: str  # the folder in datasets/
    name: str
    worker_title: str  # neutral: never the dataset's name
    description: str  # a placeholder for the worker texts (Chinese)
    question: str  # stored as each example's question
    convert: Callable[[dict, FewClueTask], Converted]
    labels: tuple[LabelDef, ...] = ()  # fixed labels; empty when they come from label_file
    label_file: str = ""
    id_field: str = "id"
    label_field: str = "label"
    label_name_field: str = ""  # a field naming the label, checked against the label file
    segment_titles: tuple[str, ...] = ()  # the worker page's title of each part of a two-part context

    @property
    def slug(self) -> str:
        return f"fewclue-{self.folder}"


def _text(raw: dict, name: str) -> str:
    if name not in raw:
        raise LineProblem("missing_field", f"missing field: {name}")
    value = raw[name]
    if not isinstance(value, str) or not value.strip():
        raise LineProblem("bad_field", f"{name} must be a non-empty string")
    if "\x00" in value:
        raise LineProblem("bad_field", f"{name} holds a NUL character (\\u0000), which the database cannot store")
    return value


def _values(task: FewClueTask, raw: dict, context: str | list[str], used: tuple[str, ...], **more: object) -> dict:
    skip = {task.id_field, task.label_field, *used}
    return {
        "context": context,
        "question": task.question,
        "extra": {k: v for k, v in raw.items() if k not in skip},
        **more,
    }


def single_text(field_name: str) -> Callable[[dict, FewClueTask], Converted]:
    def convert(raw: dict, task: FewClueTask) -> Converted:
        return Converted(_values(task, raw, _text(raw, field_name), (field_name,)))

    return convert


def text_pair(first: str, second: str) -> Callable[[dict, FewClueTask], Converted]:
    def convert(raw: dict, task: FewClueTask) -> Converted:
        return Converted(_values(task, raw, [_text(raw, first), _text(raw, second)], (first, second)))

    return convert


def headline_and_keywords(raw: dict, task: FewClueTask) -> Converted:
    """TNEWS: [headline, keywords as given ("a,b", possibly empty)]; the raw keywords stay in extra."""
    keywords = raw.get("keywords", "")
    if not isinstance(keywords, str):
        raise LineProblem("bad_field", "keywords must be a string")
    return Converted(_values(task, raw, [_text(raw, "sentence"), keywords], ("sentence",)))


def abstract_and_keywords(raw: dict, task: FewClueTask) -> Converted:
    """CSL: [abstract, its keywords joined by "，"]; the keyword list stays in extra."""
    keywords = raw.get("keyword")
    if "keyword" not in raw:
        raise LineProblem("missing_field", "missing field: keyword")
    if not isinstance(keywords, list) or not keywords or not all(isinstance(k, str) and k for k in keywords):
        raise LineProblem("bad_field", "keyword must be a non-empty list of strings")
    return Converted(_values(task, raw, [_text(raw, "abst"), "，".join(keywords)], ("abst",)))


def idiom_choice(raw: dict, task: FewClueTask) -> Converted:
    """CHID: the content with one #idiom# blank (a mark with the role "blank"), the seven candidates as choices."""
    content = _text(raw, "content")
    blanks = content.count(IDIOM)
    if blanks != 1:
        where = "is missing" if blanks == 0 else f"occurs {blanks} times"
        raise LineProblem("idiom_marker", f"{IDIOM} {where}; a CHID item has exactly one blank")
    candidates = raw.get("candidates")
    if "candidates" not in raw:
        raise LineProblem("missing_field", "missing field: candidates")
    if not isinstance(candidates, list) or not all(isinstance(c, str) and c for c in candidates):
        raise LineProblem("bad_field", "candidates must be a list of non-empty strings")
    if len(candidates) != CHID_CANDIDATES:
        raise LineProblem("bad_field", f"{len(candidates)} candidates; a CHID item has {CHID_CANDIDATES}")
    repeated = sorted({c for c in candidates if candidates.count(c) > 1})
    if repeated:
        raise LineProblem("bad_field", f"candidate(s) listed twice: {', '.join(repeated)}")
    at = content.index(IDIOM)
    blank = [{"start": at, "end": at + len(IDIOM), "role": "blank", "text": IDIOM}]  # shown marked
    return Converted(_values(task, raw, content, ("content", "candidates"), choices=list(candidates), marks=blank))


def marked_spans(raw: dict, task: FewClueTask) -> Converted:
    """CLUEWSC: the text with span1 (the noun) and span2 (the pronoun) as marks, offsets checked."""
    text = _text(raw, "text")
    target = raw.get("target")
    if "target" not in raw:
        raise LineProblem("missing_field", "missing field: target")
    if not isinstance(target, dict):
        raise LineProblem("bad_field", "target must be an object with span1_index/span1_text/span2_index/span2_text")
    marks: list[dict] = []
    bounds: list[tuple[int, int]] = []
    for role in ("span1", "span2"):
        start, span = target.get(f"{role}_index"), target.get(f"{role}_text")
        if isinstance(start, bool) or not isinstance(start, int) or not isinstance(span, str) or not span:
            raise LineProblem("bad_field", f"target needs an integer {role}_index and a non-empty {role}_text")
        end = start + len(span)
        if start < 0 or text[start:end] != span:
            found = [i for i in range(len(text)) if text.startswith(span, i)]
            at = f"; {span!r} occurs at {', '.join(map(str, found))}" if found else f"; {span!r} is not in the text"
            raise LineProblem(
                "span_mismatch",
                f"{role}_index {start} points at {text[max(start, 0) : max(end, 0)]!r}, not {span!r}{at}",
            )
        marks.append({"start": start, "end": end, "role": role, "text": span})
        bounds.append((start, end))
    if bounds[0][0] < bounds[1][1] and bounds[1][0] < bounds[0][1]:
        raise LineProblem("span_mismatch", "span1 and span2 overlap")
    return Converted(_values(task, raw, text, ("text",), marks=marks))


def _fixed(*pairs: tuple[str, str]) -> tuple[LabelDef, ...]:
    return tuple(LabelDef(name, definition) for name, definition in pairs)


TASKS: tuple[FewClueTask, ...] = (
    FewClueTask(
        "eprstmt",
        "EPRSTMT",
        "Product review sentiment",
        "判断一条电商评论是正面还是负面。（占位文字）",
        "这条评论是正面还是负面？",
        single_text("sentence"),
        labels=_fixed(("Positive", "正面"), ("Negative", "负面")),
    ),
    FewClueTask(
        "csldcp",
        "CSLDCP",
        "Discipline of a scientific abstract",
        "判断一篇论文摘要所属的学科。（占位文字）",
        "这篇摘要属于哪个学科？",
        single_text("content"),
        label_file="labels_all.txt",
    ),
    FewClueTask(
        "tnews",
        "TNEWS",
        "News headline topic",
        "判断一条新闻标题（及其关键词）的类别。（占位文字）",
        "这条新闻属于哪个类别？",
        headline_and_keywords,
        label_file="label_index2en2zh.json",
        label_name_field="label_desc",
        segment_titles=("新闻标题", "关键词"),
    ),
    FewClueTask(
        "iflytek",
        "IFLYTEK",
        "App description category",
        "判断一段应用描述所属的类别。（占位文字）",
        "这个应用属于哪个类别？",
        single_text("sentence"),
        label_file="label_id2des_desc2short.py",
        label_name_field="label_des",
    ),
    FewClueTask(
        "ocnli",
        "OCNLI",
        "Do two sentences agree",
        "判断第二句话与第一句话的关系：蕴含、中立或矛盾。（占位文字）",
        "第二句与第一句是什么关系？",
        text_pair("sentence1", "sentence2"),
        labels=_fixed(("entailment", "蕴含"), ("neutral", "中立"), ("contradiction", "矛盾")),
        segment_titles=("第一句", "第二句"),
    ),
    FewClueTask(
        "bustm",
        "BUSTM",
        "Do two short texts mean the same",
        "判断两句话的意思是否相同。（占位文字）",
        "这两句话的意思相同吗？",
        text_pair("sentence1", "sentence2"),
        labels=_fixed(("1", "意思相同"), ("0", "意思不同")),
        segment_titles=("第一句", "第二句"),
    ),
    FewClueTask(
        "csl",
        "CSL",
        "Keywords of a scientific abstract",
        "判断这些关键词是否都是这篇摘要的真实关键词。（占位文字）",
        "这些关键词都是这篇摘要的真实关键词吗？",
        abstract_and_keywords,
        labels=_fixed(("1", "是真实关键词"), ("0", "不全是真实关键词")),
        segment_titles=("摘要", "关键词"),
    ),
    FewClueTask(
        "chid",
        "CHID",
        "Idiom in context",
        "从七个候选成语中选出最适合填入空白处的一个。（占位文字）",
        "哪个成语最适合填入 #idiom# 处？",
        idiom_choice,
        labels=_fixed(*((str(i), f"第 {i + 1} 个候选成语") for i in range(CHID_CANDIDATES))),
        label_field="answer",
    ),
    FewClueTask(
        "cluewsc",
        "CLUEWSC",
        "What a pronoun refers to",
        "判断句中标出的代词（第二处）是否指代标出的名词（第一处）。（占位文字）",
        "标出的代词指的是标出的名词吗？",
        marked_spans,
        labels=_fixed(("true", "是"), ("false", "否")),
        id_field="idx",
    ),
)

BY_FOLDER = {task.folder: task for task in TASKS}
