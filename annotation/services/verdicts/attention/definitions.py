"""Attention checks' definitions: a researcher's own, validated, or templates one every N test items.

A check is an item whose answer the item itself states; it gets its own Example (in no example set),
so writing, changing and deleting one keeps that Example in step (annotation.services.verdicts.attention).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from annotation.errors import ServiceError
from annotation.models import AttentionCheck, AuditEntry, Participation, Response, Study
from annotation.protocol import offsets
from annotation.protocol.languages import shipped
from annotation.services import audit
from tasks_app.models import Example, ExampleSet, ExampleSetItem, Label, Task
from tasks_app.texts import label_text

SOURCE_PREFIX = "attention-check:"  # the source_id of a check's own Example
MAX_TEXT = 5000


class AttentionCheckError(ServiceError, ValueError):
    """A check's definition is invalid; ``field`` names the input at fault (as a form or serializer would)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message

    @property
    def fields(self) -> dict[str, list[str]]:
        return {self.field: [self.message]}


# --- Definitions ----------------------------------------------------------------------------


def test_set_size(study: Study) -> int:
    """How many items a worker's test step has (the positions a check may take: 1..this): the task's test set,
    or the study's test sample."""
    test_set = ExampleSet.objects.filter(task_id=study.task_id, role=ExampleSet.Role.TEST).first()
    size = ExampleSetItem.objects.filter(example_set=test_set).count() if test_set else 0
    return min(size, study.test_sample_size) if study.test_sample_size else size


def _unspaced(ch: str) -> bool:
    """A character of a script written without spaces between words (CJK, kana, Hangul syllables)."""
    return "\u2e80" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" or "\uf900" <= ch <= "\ufaff"


def _joined(a: str, b: str) -> bool:
    """Whether two neighbouring characters belong to one word (a Chinese word has no spaces around it)."""
    return a.isalnum() and b.isalnum() and not (_unspaced(a) or _unspaced(b))


def _located(context: str, word: str) -> dict | None:
    """The first occurrence of ``word`` in ``context`` as a whole-word span, or None."""
    start = context.find(word)
    while start != -1:
        end = start + len(word)
        before = context[start - 1] if start else " "
        after = context[end] if end < len(context) else " "
        if not _joined(before, word[0]) and not _joined(word[-1], after):
            try:
                offsets.check_span_boundaries(context, start, end)
            except offsets.OffsetError:
                pass
            else:
                return {"text": word, "start": start, "end": end}
        start = context.find(word, start + 1)
    return None


def validate(
    *,
    study: Study,
    position: object,
    context: object,
    question: object,
    expected_label: object = "",
    expected_spans: object = (),
    exclude_pk: int | None = None,
) -> tuple[int, str, str, str, list[str], list[dict]]:
    """Check a definition against the study's task and test set.

    Returns (position, context, question, label, span texts, located spans); raises AttentionCheckError.
    """
    if isinstance(position, bool) or not isinstance(position, int):
        raise AttentionCheckError("position", "the position must be a whole number (1 = the first test item)")
    size = test_set_size(study)
    if size == 0:
        raise AttentionCheckError("position", f"the task {study.task.slug} has no test set to put checks into")
    if not 1 <= position <= size:
        raise AttentionCheckError(
            "position", f"position {position} is beyond the test set: it has {size} items (positions 1..{size})"
        )
    taken = AttentionCheck.objects.filter(study=study, position=position)
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise AttentionCheckError("position", f"the study already has an attention check at position {position}")
    for name, value in (("context", context), ("question", question)):
        if not isinstance(value, str) or not value.strip():
            raise AttentionCheckError(name, f"the {name} must be a non-empty text")
        if len(value) > MAX_TEXT:
            raise AttentionCheckError(name, f"the {name} is longer than {MAX_TEXT} characters")
        if "\x00" in value:  # PostgreSQL stores no NUL in text
            raise AttentionCheckError(name, f"the {name} contains a NUL character")
    assert isinstance(context, str) and isinstance(question, str)
    label = expected_label or ""
    expected_spans = [] if expected_spans is None else expected_spans
    if isinstance(expected_spans, str) or not isinstance(expected_spans, list | tuple):
        raise AttentionCheckError("expected_spans", "the words to select must be a list of strings")
    spans: list[object] = list(expected_spans)
    task = study.task
    if task.is_classification:
        if spans:
            raise AttentionCheckError("expected_spans", f"{task.name} is a classification task: give a label")
        names = list(Label.objects.filter(task=task).values_list("name", flat=True))
        if not isinstance(label, str) or label not in names:
            raise AttentionCheckError(
                "expected_label", f"{label!r} is not a label of {task.name} (its labels: {', '.join(names)})"
            )
        return position, context, question, label, [], []
    if label:
        raise AttentionCheckError("expected_label", f"{task.name} is a span task: give the words to select")
    if not spans or not all(isinstance(s, str) and s.strip() for s in spans):
        raise AttentionCheckError("expected_spans", "give at least one word of the context to select")
    if len(spans) > 1 and not task.multiple_spans:
        raise AttentionCheckError("expected_spans", f"{task.name} takes one span per answer: give one word")
    located = []
    words = [str(s) for s in spans]
    for word in words:
        where = _located(context, word)
        if where is None:
            raise AttentionCheckError("expected_spans", f"the target {word!r} is not a word of the check's text")
        located.append(where)
    return position, context, question, "", list(dict.fromkeys(words)), located


def _example_for(
    study: Study, context: str, question: str, gold: list[str], spans: list[dict], template: bool = False
) -> Example:
    key = uuid.uuid4().hex
    return Example.objects.create(
        task_id=study.task_id,
        source_id=f"{SOURCE_PREFIX}{key}",
        fingerprint=hashlib.sha256(f"{SOURCE_PREFIX}{key}".encode()).hexdigest(),
        context=context,
        question=question,
        gold_answers=gold,
        gold_spans=spans,
        extra={"attention_check": True, **({"attention_template": LABEL_TEMPLATE} if template else {})},
    )


def create_check(
    *,
    study: Study,
    position: object,
    context: object,
    question: object,
    expected_label: object = "",
    expected_spans: object = (),
    source: str = AttentionCheck.Source.RESEARCHER,
    actor: audit.Actor = None,
) -> AttentionCheck:
    """Add a check to the study (validated; nothing is stored if it is invalid)."""
    pos, text, ask, label, words, located = validate(
        study=study,
        position=position,
        context=context,
        question=question,
        expected_label=expected_label,
        expected_spans=expected_spans,
    )
    with transaction.atomic():
        gold = [label] if label else words
        # A classification template check is worded in each worker's language when shown.
        template = source == AttentionCheck.Source.TEMPLATE and bool(label)
        example = _example_for(study, text, ask, gold, located, template=template)
        check = AttentionCheck.objects.create(
            study=study,
            position=pos,
            context=text,
            question=ask,
            expected_label=label,
            expected_spans=words,
            source=source,
            example=example,
        )
        _record(actor, check, before={}, after=audit.snapshot(check, _AUDITED))
        return check


# A check as the audit trail shows it before and after an edit.
_AUDITED = ("position", "context", "question", "expected_label", "expected_spans", "source")


def _record(actor: audit.Actor, check: AttentionCheck, *, before: dict, after: dict) -> None:
    action = AuditEntry.Action.ATTENTION_CHECKS
    audit.record(actor=actor, action=action, study=check.study, before=before, after=after, detail={"check": check.pk})


def update_check(check: AttentionCheck, *, actor: audit.Actor = None, **fields: object) -> AttentionCheck:
    """Change a check nobody has been given yet (validated as a new one)."""
    if in_use(check):
        raise AttentionCheckError("position", "workers already have this check in their test step: add a new one")
    values = {
        "position": check.position,
        "context": check.context,
        "question": check.question,
        "expected_label": check.expected_label,
        "expected_spans": check.expected_spans,
        **fields,
    }
    pos, text, ask, label, words, located = validate(study=check.study, exclude_pk=check.pk, **values)
    with transaction.atomic():
        stored = audit.snapshot(check, _AUDITED)
        gold = [label] if label else words
        # A researcher's wording replaces the template's: the check is no longer worded again when shown.
        Example.objects.filter(pk=check.example_id).update(
            context=text, question=ask, gold_answers=gold, gold_spans=located, extra={"attention_check": True}
        )
        check.position, check.context, check.question = pos, text, ask
        check.expected_label, check.expected_spans = label, words
        check.save()
        before, after = audit.changes(stored, audit.snapshot(check, _AUDITED))
        if before or after:
            _record(actor, check, before=before, after=after)
    return check


def in_use(check: AttentionCheck) -> bool:
    """Whether a crowd worker's test step holds the check (a preview's does not count)."""
    return Response.all_objects.filter(attention_check=check, participation__is_preview=False).exists()


def delete_check(check: AttentionCheck, *, actor: audit.Actor = None) -> None:
    """Remove a check that no crowd worker has been given (previews holding it are restarted)."""
    if in_use(check):
        raise AttentionCheckError("position", "workers already have this check in their test step: keep it")
    with transaction.atomic():
        previews = Participation.all_objects.filter(is_preview=True, responses__attention_check=check)
        previews.distinct().delete()
        _record(actor, check, before=audit.snapshot(check, _AUDITED), after={})
        example_id = check.example_id
        check.delete()
        Example.objects.filter(pk=example_id).delete()


# --- Templates ------------------------------------------------------------------------------
# A template check speaks the study's language and names a label as the worker's button shows it: a careful
# German worker reads "Wählen Sie „folgt daraus“" above the buttons "folgt daraus / weder noch / Widerspruch".
# Each sentence's translation holds its word's translation (tests/i18n checks every pair).

_SPAN_SENTENCES = [
    (
        pgettext_lazy("attention check word", "orange"),
        gettext_lazy("The orange was left on the kitchen table next to a glass of water."),
    ),
    (
        pgettext_lazy("attention check word", "river"),
        gettext_lazy("They walked along the river until the sun went down behind the hills."),
    ),
    (
        pgettext_lazy("attention check word", "pencil"),
        gettext_lazy("She picked up a pencil and wrote the date at the top of the page."),
    ),
    (
        pgettext_lazy("attention check word", "window"),
        gettext_lazy("A bird sat outside the window for most of the morning."),
    ),
    (
        pgettext_lazy("attention check word", "garden"),
        gettext_lazy("The garden behind the house was full of tall yellow flowers."),
    ),
]
LABEL_TEMPLATE = "label"  # Example.extra["attention_template"] of a classification template check


def template_language(study: Study) -> str:
    """The language a study's template checks are written in: the study's, or the default language for a
    study that follows the browser (its label checks are worded again in each worker's language when shown,
    ``label_check_texts``; a span check's sentence cannot be, its words' offsets are its answer)."""
    return study.language if study.language in shipped() else settings.LANGUAGE_CODE


def label_check_texts(task: Task, label: str, language: str) -> tuple[str, str]:
    """A label check's text and question in ``language``, naming ``label`` as the worker's button shows it."""
    with translation.override(language):
        context = gettext("This item checks that you are reading the instructions of each item carefully.")
        question = gettext("To show you are reading, choose “%(label)s”.") % {
            "label": label_text(task, language, label)
        }
    return context, question


def template_definition(study: Study, index: int) -> dict:
    """The ``index``-th check of the task kind's template (labels and sentences taken in turn), in the study's
    language."""
    task = study.task
    language = template_language(study)
    if task.is_classification:
        labels = list(Label.objects.filter(task=task).order_by("position", "name").values_list("name", flat=True))
        if not labels:
            raise AttentionCheckError("expected_label", f"{task.name} has no labels to build a check from")
        label = labels[index % len(labels)]
        context, question = label_check_texts(task, label, language)
        return {"context": context, "question": question, "expected_label": label}
    word, sentence = _SPAN_SENTENCES[index % len(_SPAN_SENTENCES)]
    with translation.override(language):
        question = gettext(
            "To show you are reading, select the word “%(word)s” in this sentence (and nothing else)."
        ) % {"word": str(word)}
        return {"context": str(sentence), "question": question, "expected_spans": [str(word)]}


def positions_every(study: Study, every: int) -> list[int]:
    """The positions of a check every ``every`` items (``every``, 2 x ``every``, ... within the test set)."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise AttentionCheckError("every", "the rate must be a whole number of items, at least 1")
    return list(range(every, test_set_size(study) + 1, every))


def generate(*, study: Study, positions: Sequence[int], actor: audit.Actor = None) -> list[AttentionCheck]:
    """Add template checks at ``positions`` (all or none: any invalid position stores nothing)."""
    if not positions:
        raise AttentionCheckError("positions", "give at least one position (or a rate that fits the test set)")
    if len(set(positions)) != len(positions):
        raise AttentionCheckError("positions", "a position is given twice")
    start = AttentionCheck.objects.filter(study=study).count()
    with transaction.atomic():
        return [
            create_check(
                study=study,
                position=p,
                source=AttentionCheck.Source.TEMPLATE,
                actor=actor,
                **template_definition(study, start + i),
            )
            for i, p in enumerate(sorted(positions))
        ]
