"""The nine FewCLUE tasks and how one line of each becomes an Example (no Django).

Every task is a classification task. A label's name is the value of the line's label field as a
string ("Positive", "102", "entailment", "1", "true"); CHID's label is the index of the right
candidate ("0".."6") and the item's own seven idioms are its ``choices``. Pairs (OCNLI, BUSTM) and
text + keywords (CSL; TNEWS with ``--tnews-keywords``) are two-part contexts; CLUEWSC's two spans are
``marks`` of its text.

The worker texts (title, description, instructions, segment titles) are English, the platform's default language, with
their Simplified Chinese in ``Task.translations["zh-hans"]`` (tasks_app.texts), so a study set to zh-hans
shows them in Chinese and the admin edits them under "Texts in 简体中文". The question stored with each
example and the labels' names are Chinese, like the data they belong to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

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
class Chinese:
    """A task's worker texts in Simplified Chinese (its ``Task.translations["zh-hans"]``)."""

    worker_title: str
    description: str
    instructions: str
    segment_titles: tuple[str, ...] = ()

    def as_translation(self) -> dict[str, object]:
        texts: dict[str, object] = {
            "worker_title": self.worker_title,
            "description": self.description,
            "instructions": self.instructions,
        }
        if self.segment_titles:
            texts["segment_titles"] = list(self.segment_titles)
        return texts


@dataclass(frozen=True)
class FewClueTask:
    folder: str  # the folder in datasets/
    name: str
    worker_title: str  # neutral: never the dataset's name
    description: str  # what the worker does (English; ``chinese`` has it in Chinese)
    question: str  # stored as each example's question (Chinese, as the items are)
    convert: Callable[[dict, FewClueTask], Converted]
    labels: tuple[LabelDef, ...] = ()  # fixed labels; empty when they come from label_file
    label_file: str = ""
    id_field: str = "id"
    label_field: str = "label"
    label_name_field: str = ""  # a field naming the label, checked against the label file
    segment_titles: tuple[str, ...] = ()  # the worker page's title of each part of a two-part context
    instructions: str = ""  # shown beside each item (English)
    chinese: Chinese | None = None  # the worker texts in Chinese

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
        "Read a customer's review of a product bought online and decide whether it is positive or negative.",
        "这条评论是正面还是负面？",
        single_text("sentence"),
        labels=_fixed(("Positive", "正面"), ("Negative", "负面")),
        instructions=(
            "Positive: the customer is satisfied overall (praise, a recommendation). Negative: the customer is "
            "dissatisfied overall (complaints, problems, regret). Judge the review as a whole."
        ),
        chinese=Chinese(
            "商品评论的情感",
            "阅读一条网购商品的用户评论，判断评论的态度是正面还是负面。",
            "正面：用户总体上感到满意（称赞、推荐）。负面：用户总体上不满意（抱怨、遇到问题、后悔购买）。请根据整条评论的总体态度判断。",
        ),
    ),
    FewClueTask(
        "csldcp",
        "CSLDCP",
        "Discipline of a scientific abstract",
        "Read the abstract of a Chinese scientific paper and choose the academic discipline it belongs to.",
        "这篇摘要属于哪个学科？",
        single_text("content"),
        label_file="labels_all.txt",
        instructions=(
            "There are 67 disciplines. Type part of a discipline's name to find it in the list, then choose the one "
            "that fits the abstract best."
        ),
        chinese=Chinese(
            "论文摘要的学科",
            "阅读一篇中文学术论文的摘要，选出它所属的学科。",
            "共有 67 个学科。输入学科名称的一部分即可在列表中查找，然后选出与摘要最相符的学科。",
        ),
    ),
    FewClueTask(
        "tnews",
        "TNEWS",
        "News headline topic",
        "Read a news headline and choose the category of the news.",
        "这条新闻属于哪个类别？",
        single_text("sentence"),  # the paper's example shows the sentence only; the keywords stay in extra
        label_file="label_index2en2zh.json",
        label_name_field="label_desc",
        instructions=(
            "There are 15 categories, such as finance, sports or entertainment. Decide by what the headline is about."
        ),
        chinese=Chinese(
            "新闻标题的类别",
            "阅读一条新闻标题，选出这条新闻所属的类别。",
            "共有 15 个类别，例如财经、体育、娱乐。请根据标题的内容判断。",
        ),
    ),
    FewClueTask(
        "iflytek",
        "IFLYTEK",
        "App description category",
        "Read the description of a mobile app and choose the category the app belongs to.",
        "这个应用属于哪个类别？",
        single_text("sentence"),
        label_file="label_id2des_desc2short.py",
        label_name_field="label_des",
        instructions=(
            "There are 119 categories. Type part of a category's name (in Chinese, or its short name) to find it, then "
            "choose the one that fits the app best."
        ),
        chinese=Chinese(
            "应用介绍的类别",
            "阅读一段手机应用的介绍，选出这个应用所属的类别。",
            "共有 119 个类别。输入类别名称（中文名或简称）的一部分即可查找，然后选出最符合这个应用的类别。",
        ),
    ),
    FewClueTask(
        "ocnli",
        "OCNLI",
        "Do two sentences agree",
        (
            "Read two sentences and decide, taking the first as true, whether the second must be true, may be true, or "
            "cannot be true."
        ),
        "第二句与第一句是什么关系？",
        text_pair("sentence1", "sentence2"),
        labels=_fixed(("entailment", "蕴含"), ("neutral", "中立"), ("contradiction", "矛盾")),
        segment_titles=("First sentence", "Second sentence"),
        instructions=(
            "Entailment (蕴含): if the first sentence is true, the second is true too. "
            "Neutral (中立): the second may or may not be true. "
            "Contradiction (矛盾): if the first is true, the second cannot be."
        ),
        chinese=Chinese(
            "两句话的关系",
            "阅读两句话，假定第一句为真，判断第二句是一定为真、可能为真，还是不可能为真。",
            "蕴含：如果第一句为真，第二句也一定为真。中立：第二句可能为真，也可能为假。矛盾：如果第一句为真，第二句就不可能为真。",
            segment_titles=("第一句", "第二句"),
        ),
    ),
    FewClueTask(
        "bustm",
        "BUSTM",
        "Do two short texts mean the same",
        (
            "Read two short texts, such as what a user might say to a voice assistant, and decide whether they mean "
            "the same."
        ),
        "这两句话的意思相同吗？",
        text_pair("sentence1", "sentence2"),
        labels=_fixed(("1", "意思相同"), ("0", "意思不同")),
        segment_titles=("First sentence", "Second sentence"),
        instructions=(
            "Same meaning: both ask for or say the same thing, even in other words. Different meaning: they ask for or "
            "say different things."
        ),
        chinese=Chinese(
            "两句话的意思是否相同",
            "阅读两句简短的话（例如用户对语音助手说的话），判断它们的意思是否相同。",
            "意思相同：两句话询问或表达的是同一件事，即使措辞不同。意思不同：两句话询问或表达的内容不同。",
            segment_titles=("第一句", "第二句"),
        ),
    ),
    FewClueTask(
        "csl",
        "CSL",
        "Keywords of a scientific abstract",
        (
            "Read the abstract of a scientific paper and a list of keywords, and decide whether all of them are the "
            "paper's real keywords."
        ),
        "这些关键词都是这篇摘要的真实关键词吗？",
        abstract_and_keywords,
        labels=_fixed(("1", "是真实关键词"), ("0", "不全是真实关键词")),
        segment_titles=("Abstract", "Keywords"),
        instructions=(
            "Some lists hold a keyword that was made up. Answer that they are real keywords only if every keyword in "
            "the list is one the authors chose for this paper."
        ),
        chinese=Chinese(
            "论文摘要的关键词",
            "阅读一篇学术论文的摘要和一组关键词，判断这些关键词是否都是这篇论文真实的关键词。",
            "有些关键词列表中混入了编造的关键词。只有当列表中的每个关键词都是作者为这篇论文选定的关键词时，才选“是真实关键词”。",
            segment_titles=("摘要", "关键词"),
        ),
    ),
    FewClueTask(
        "chid",
        "CHID",
        "Idiom in context",
        "Read a passage with one blank and choose, among its seven candidate idioms, the one that fits the blank best.",
        "哪个成语最适合填入 #idiom# 处？",
        idiom_choice,
        labels=_fixed(*((str(i), f"第 {i + 1} 个候选成语") for i in range(CHID_CANDIDATES))),
        label_field="answer",
        instructions=(
            "The blank is marked in the text. Each passage has its own seven idioms; exactly one of them fits."
        ),
        chinese=Chinese(
            "在语境中选成语",
            "阅读一段有一处空白的文字，从七个候选成语中选出最适合填入空白处的一个。",
            "空白处已在文中标出。每段文字都有各自的七个候选成语，其中只有一个合适。",
        ),
    ),
    FewClueTask(
        "cluewsc",
        "CLUEWSC",
        "What a pronoun refers to",
        "Read a text in which a noun and a pronoun are marked, and decide whether the pronoun refers to the noun.",
        "标出的代词指的是标出的名词吗？",
        marked_spans,
        labels=_fixed(("true", "是"), ("false", "否")),
        id_field="idx",
        instructions=(
            "Span 1 marks the noun, span 2 the pronoun. Answer yes if the pronoun (span 2) means the same person or "
            "thing as the noun (span 1)."
        ),
        chinese=Chinese(
            "代词的指代",
            "阅读一段标出了一个名词和一个代词的文字，判断这个代词是否指代这个名词。",
            "片段 1 标出的是名词，片段 2 标出的是代词。"
            "如果代词（片段 2）与名词（片段 1）指的是同一个人或事物，请选“是”。",
        ),
    ),
)

BY_FOLDER = {task.folder: task for task in TASKS}

# TNEWS with the data's keywords beside the headline (``import_fewclue --tnews-keywords``): the files give
# them, the paper's example shows only the sentence, so they are an option and not the default.
TNEWS_WITH_KEYWORDS = replace(
    BY_FOLDER["tnews"],
    description="Read a news headline (and its keywords, where given) and choose the category of the news.",
    convert=headline_and_keywords,
    segment_titles=("Headline", "Keywords"),
    instructions=(
        "There are 15 categories, such as finance, sports or entertainment. Decide by what the headline is about; "
        "the keywords may help, and may be missing."
    ),
    chinese=Chinese(
        "新闻标题的类别",
        "阅读一条新闻标题（以及给出的关键词），选出这条新闻所属的类别。",
        "共有 15 个类别，例如财经、体育、娱乐。请根据标题的内容判断；关键词可作参考，也可能没有。",
        segment_titles=("新闻标题", "关键词"),
    ),
)
