"""What workers are shown of a study's task: a neutral title, never the dataset's name.

Workers see ``Study.worker_title`` or else ``Task.worker_title`` (e.g. "Movie
review sentiment", not "SST-2"), the study's or else the task's description,
and ``Task.worker_question`` instead of an example's own question when the
task sets one (the stored example keeps the release's text), except on an
attention check, whose own question states what to answer. Every worker
page and the session API take the task through ``worker_task``.

What an item shows besides its context is driven by the data's shape, never by a task's name:
``item_options`` (an item's own options, e.g. FewCLUE CHID's seven idioms: label "i" names
``choices[i]``), ``item_marks`` (spans of the context to highlight, e.g. CLUEWSC's two) and
``segment_titles`` (the title of each part of a list context: a pair, or a text and its keywords).
None of them carries gold or ``Example.extra``.

``estimate`` gives the start page's expected duration: from the study's own
times once it has enough of them (the median of the completed workers'
per-worker medians, so one fast worker cannot set it; while fewer than
``MIN_TIMED_WORKERS`` workers are timed, never below ``MIN_DEFAULT_SHARE`` of
the default), else a per-task default.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext as _

from annotation.models import AttentionCheck, Condition, Participation, Response, Study
from annotation.protocol import offsets
from annotation.services.session import samples
from annotation.services.texts import study_texts
from annotation.services.verdicts import attention
from tasks_app.models import Example, Task
from tasks_app.texts import segment_titles as task_segment_titles
from tasks_app.texts import texts_for

# Seconds per item before a study has its own figures (the CLUES tasks, then per kind).
DEFAULT_SECONDS_PER_ITEM = {"sst2": 10, "mnli": 20, "conll03": 20, "wikiann": 15, "squad2": 45, "record": 60}
DEFAULT_SECONDS_BY_KIND: dict[str, int] = {Task.Kind.CLASSIFICATION: 15, Task.Kind.SPAN: 30}
# A study's own times count once this many items have been timed (a handful says little), ...
MIN_TIMED_ITEMS = 20
# ... as the median of per-worker medians; with fewer workers than this, never below this share of the
# default (one fast worker would otherwise promise newcomers a fraction of the real time).
MIN_TIMED_WORKERS = 3
MIN_DEFAULT_SHARE = 0.5
# More choices than this (CSLDCP's 67, IFLYTEK's 119 labels) are offered as a searchable list, not as cards.
MANY_LABELS = 12


@dataclass(frozen=True)
class WorkerTask:
    """The task as the worker pages show it (what templates read as ``task``)."""

    name: str
    description: str
    instructions: str
    kind: str
    multiple_spans: bool
    ai_instruction: str = ""  # the study's instruction on AI tools, shown with the instructions ("" none)

    @property
    def is_classification(self) -> bool:
        return self.kind == Task.Kind.CLASSIFICATION


def title_for(study: Study, task: Task | None = None, *, language: str | None = None) -> str:
    """The neutral title in ``language``: the study's (Study.translations), else the task's
    (Task.translations), else a generic one. ``task``: the study's task when the caller has it loaded (the
    worker's hot path reads it with the participation, not through the study)."""
    task = task or study.task
    own = study_texts.texts_for(study, language).worker_title
    return own or texts_for(task, language, labels=()).worker_title or _("Language task")


def worker_task(study: Study, task: Task | None = None, *, language: str | None = None) -> WorkerTask:
    """The task as the worker pages show it; title, description and instructions in ``language`` where the
    study or the task has them translated (study_texts, tasks_app.texts), the study's own texts first."""
    task = task or study.task
    texts = texts_for(task, language, labels=())  # no query: the label help is not needed here
    mine = study_texts.texts_for(study, language)
    return WorkerTask(
        name=mine.worker_title or texts.worker_title or _("Language task"),
        description=mine.worker_description or texts.description,
        instructions=texts.instructions,
        kind=task.kind,
        multiple_spans=task.multiple_spans,
        ai_instruction=mine.ai_instruction,
    )


def question_for(task: Task, example: Example, language: str | None = None) -> str:
    """The question text the worker sees for ``example``: the task's override, else the example's own.

    Span tasks whose examples ask different questions (a NER entity type, a reading question) keep theirs
    unless the override is set on purpose. An attention check always keeps its own: it is the instruction
    the check is answered by."""
    if example.source_id.startswith(attention.definitions.SOURCE_PREFIX):
        return example.question
    texts = texts_for(task, language, labels=())
    # A question type's question is a template (NER's "List all the people names ..."): its translation.
    return texts.worker_question or texts.questions.get(example.question_type) or example.question


def check_texts(task: Task, example: Example, language: str | None) -> tuple[str, str] | None:
    """A classification template check's text and question in the worker's language (its label named as the
    button shows it), or None for any other item: its own texts are shown."""
    extra = example.extra if isinstance(example.extra, dict) else {}
    if extra.get("attention_template") != attention.definitions.LABEL_TEMPLATE or not example.gold_answers:
        return None
    return attention.definitions.label_check_texts(task, example.gold_answers[0], language or settings.LANGUAGE_CODE)


def item_options(example: Example) -> list[dict]:
    """The item's own options in their stored order, each with the label that names it and its key; [] when
    the task's labels are the options. The order is the data's, the same for every worker, so the options
    say nothing of which is right."""
    return [{"name": str(i), "text": text, "key": str(i + 1)} for i, text in enumerate(example.choices or [])]


def option_text(example: Example, label: str) -> str:
    """What a label says on this item: its option's text where the item has its own options, else the label."""
    choices = example.choices or []
    if label.isdigit() and int(label) < len(choices):
        return str(choices[int(label)])
    return label


def item_marks(example: Example) -> list[dict]:
    """The spans of a string context to show marked, with UTF-16 offsets for the page; [] for a list context
    or marks that do not point at their text (the importer refuses those)."""
    context = example.context
    if not isinstance(context, str):
        return []
    marks = []
    for mark in example.marks or []:
        start, end, text = mark.get("start"), mark.get("end"), mark.get("text")
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(context)):
            continue
        if context[start:end] != text:
            continue
        marks.append(
            {
                "start": start,
                "end": end,
                "text": text,
                "role": str(mark.get("role", "")),
                "utf16_start": offsets.index_to_utf16(context, start),
                "utf16_end": offsets.index_to_utf16(context, end),
            }
        )
    return sorted(marks, key=lambda m: m["start"])


def segment_titles(task: Task, example: Example, language: str | None = None) -> list[str]:
    """The title above each part of a list context: the task's own in ``language`` (tasks_app.texts), else
    "Sentence 1", "Sentence 2", ..."""
    if not isinstance(example.context, list):
        return []
    own = task_segment_titles(task, language)
    return [
        own[i] if i < len(own) and own[i].strip() else _("Sentence %(number)s") % {"number": i + 1}
        for i in range(len(example.context))
    ]


@dataclass(frozen=True)
class Estimate:
    items: int
    seconds_per_item: float
    from_study: bool  # the study's own median, not a default

    @property
    def minutes(self) -> int:
        return max(1, math.ceil(self.items * self.seconds_per_item / 60))


def seconds_per_item(study: Study) -> tuple[float, bool]:
    """Seconds per item from the study's own times once it has enough, else the task's default."""
    task = study.task
    default = float(DEFAULT_SECONDS_PER_ITEM.get(task.slug) or DEFAULT_SECONDS_BY_KIND.get(task.kind, 20))
    timed = (
        Response.objects.filter(
            participation__study=study,
            participation__state=Participation.State.COMPLETED,
            active_ms__gt=0,
        )
        .exclude(status=Response.Status.PENDING)
        .values_list("participation_id", "active_ms")[:5000]
    )
    by_worker: defaultdict[int, list[int]] = defaultdict(list)
    for participation_id, active_ms in timed:
        by_worker[participation_id].append(active_ms)
    if sum(len(times) for times in by_worker.values()) < MIN_TIMED_ITEMS:
        return default, False
    seconds = statistics.median(statistics.median(times) for times in by_worker.values()) / 1000
    if len(by_worker) < MIN_TIMED_WORKERS:
        seconds = max(seconds, default * MIN_DEFAULT_SHARE)
    return seconds, True


def item_counts(condition: Condition, *, checks: int | None = None) -> tuple[int, int]:
    """(training items, test items with the attention checks) a worker of ``condition`` is asked: its own
    samples where it has them (a FewCLUE condition's 30 + 100), else the whole sets. ``checks``: the study's
    number of attention checks, when the caller has counted them."""
    n_test = len(samples.test_ids(condition, task_id=condition.study.task_id))
    if n_test:  # the attention checks are items of the test step like the others
        n_test += AttentionCheck.objects.filter(study_id=condition.study_id).count() if checks is None else checks
    return len(samples.training_ids(condition)), n_test


def most_items(study: Study) -> tuple[int, int]:
    """(training, test) items of the study's condition that asks the most, before a condition is chosen: the
    start page promises no more than a worker can be given."""
    checks = AttentionCheck.objects.filter(study_id=study.pk).count()
    counts = [item_counts(c, checks=checks) for c in study.conditions.select_related("study")]
    return max(counts, key=sum, default=(0, 0))


def estimate(study: Study, items: int) -> Estimate:
    seconds, from_study = seconds_per_item(study)
    return Estimate(items=items, seconds_per_item=seconds, from_study=from_study)
