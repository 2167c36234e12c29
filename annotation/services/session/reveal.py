"""The gold answer of a training item, only after the worker's answer is locked.

This is the one place that puts gold into anything a worker receives. It
refuses test items outright and training items that are still pending, so
the gold of an item is never sent before its answer is locked.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import AnswerSpan, Participation, Response
from annotation.services.session.answers import AnswerError, NotYourItem, span_dict, stored_answer
from annotation.services.session.presentation import option_text
from tasks_app import scoring
from tasks_app.models import Task


class RevealNotAllowed(AnswerError):
    status = 403


class NotLockedYet(AnswerError):
    status = 409


def verdict(score: float | None) -> str:
    if score is None:
        return "unscored"
    if score >= 1.0:
        return "correct"
    return "partly correct" if score > 0 else "incorrect"


def unit_of(task: Task) -> str:
    """What one answer is called on the page: a label, a name (NER) or an answer (reading comprehension)."""
    if task.is_classification:
        return "label"
    return "name" if task.group == Task.Group.NER else "answer"


def wordings(gold_answers: list[str]) -> list[list[str]]:
    """The gold's answers, each as its wordings: strings that nest ("1794 and 1802" in "between 1794 and
    1802") are one answer in several wordings. S1 counts each wording (the gold set is every distinct
    string), so the page names them as wordings of one answer, each needed for full credit."""
    groups: list[list[str]] = []
    for text in sorted(scoring.answer_set(gold_answers), key=lambda t: (len(t), t)):
        joined = [g for g in groups if any(text in other or other in text for other in g)]
        merged = [text, *(w for g in joined for w in g)]
        groups = [g for g in groups if g not in joined] + [sorted(merged, key=lambda t: (len(t), t))]
    order = {text: i for i, text in enumerate(gold_answers)}
    return sorted(groups, key=lambda g: min(order.get(t, 0) for t in g))


def feedback(response: Response, gold_answers: list[str], unit: str) -> dict:
    """The counts behind the worker's words ("3 of 4 names right"), as S1 compares them: answer sets, not
    normalised, the empty string no answer. ``found`` = the worker's answers in the gold. Where an answer
    has several wordings (reading comprehension), ``gold``/``found`` count answers and ``wordings`` /
    ``wordings_found`` the strings S1 compares."""
    if unit == "label":
        yours = scoring.answer_set([response.label] if response.label else [])
    else:
        yours = scoring.answer_set(response.answer)
    gold = scoring.answer_set(gold_answers)
    counts = {"unit": unit, "gold": len(gold), "yours": len(yours), "found": len(yours & gold)}
    groups = wordings(gold_answers) if unit == "answer" else []
    if groups and len(groups) < len(gold):
        counts.update(
            gold=len(groups),
            found=sum(1 for g in groups if yours & set(g)),
            wordings=len(gold),
            wordings_found=len(yours & gold),
        )
    return counts


def reveal_payload(response: Response, spans: list[AnswerSpan] | None = None) -> dict:
    """The worker's locked training answer beside the gold, with the item's S1 (for researchers) and the
    counts the page puts in words (for the worker)."""
    if response.phase != Response.Phase.TRAINING or not response.is_locked:
        raise RevealNotAllowed("reveal_not_allowed", gettext("gold is only shown for locked training items"))
    example = response.example
    context = example.context_text
    gold_answers = [a for a in example.gold_answers if a]
    gold_spans = []
    if not example.is_sentence_pair:
        gold_spans = [
            span_dict(context, s["start"], s["end"], s["text"])
            for s in example.gold_spans
            if 0 <= s.get("start", -1) < s.get("end", -1) <= len(context)
        ]
    yours = stored_answer(response, spans)
    gold_set = set(gold_answers)
    return {
        "item": response.pk,
        "your_answer": yours,
        "gold": {
            "answers": gold_answers,
            # What each gold label says on this item (a CHID item's idiom); the labels themselves elsewhere.
            "texts": [option_text(example, a) for a in gold_answers],
            "wordings": wordings(gold_answers),
            "spans": gold_spans,
            "empty": not gold_answers,
        },
        "matches": [{"text": text, "in_gold": text in gold_set} for text in yours["answer"]],
        "score": response.score,
        "feedback": feedback(response, gold_answers, unit_of(example.task)),
        "verdict": verdict(response.score),
        "correct": response.score is not None and response.score >= 1.0,
    }


def reveal(*, participation: Participation, item_id: int, now: datetime | None = None) -> dict:
    """The reveal of one of the worker's own locked training items (reload, back button)."""
    response = (
        Response.all_objects.select_related("example__task").filter(pk=item_id, participation=participation).first()
    )
    if response is None:
        raise NotYourItem("not_your_item", gettext("This item is not assigned to you."))
    if response.phase != Response.Phase.TRAINING:
        raise RevealNotAllowed("reveal_not_allowed", gettext("test items have no reveal"))
    if not response.is_locked:
        raise NotLockedYet("not_locked", gettext("submit your answer first; the correct answer is shown after that"))
    if response.revealed_at is None:
        now = now or timezone.now()
        Response.all_objects.filter(pk=response.pk, revealed_at__isnull=True).update(revealed_at=now)
        response.revealed_at = now
    return reveal_payload(response)
