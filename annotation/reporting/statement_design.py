"""The statement's sections on design and standards (HEDS 3.0, ACL Responsible NLP checklist D).

Each function reads one set of stored facts and returns a ``Section`` of the statement: the sample
(how items were chosen, how many each worker saw), the presentation order, the ethics review, the
demographics, the pay against the platform's rates, and the appendix of texts and screenshots. A fact
the study did not collect gives a section marked not collected (``collected=False``), never a guess.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from annotation.models import Participation, Study
from annotation.reporting import demographics
from annotation.services.money.pay import pay_lines
from annotation.services.session import samples
from annotation.services.verdicts.attention.definitions import test_set_size

NOT_COLLECTED = "not collected"
APPENDIX_COMMAND = "manage.py study_appendix"


@dataclass(frozen=True)
class Section:
    title: str
    text: str
    collected: bool = True  # False: the study did not collect this fact; the text says so


def plural(n: int, noun: str, many: str | None = None) -> str:
    """ "no workers", "1 worker", "2 workers"."""
    many = many or f"{noun}s"
    return f"no {many}" if n == 0 else f"1 {noun}" if n == 1 else f"{n} {many}"


def shown_languages(study: Study) -> list[str]:
    """The languages workers could see: the study's fixed one, or every language the site ships."""
    return [study.language] if study.language else [code for code, _ in settings.LANGUAGES]


def sample_section(study: Study) -> Section:
    """How the test items were chosen and how many each worker saw."""
    items = test_set_size(study)
    checks = study.attention_checks.count()
    levels = [str(c.shots) for c in study.conditions.order_by("shots") if c.shots]
    training = f"after {' / '.join(levels)} training examples by condition" if levels else "with no training step"
    sampled = [c for c in study.conditions.order_by("shots") if c.test_sample]
    if sampled:  # FewCLUE: each condition's own seeded sample of K items (services.session.samples)
        k = study.test_sample_size or len(sampled[0].test_sample)
        source = samples.test_source(sampled[0])
        size = len(samples.set_ids(source.pk)) if source is not None else items
        named = f"the task's {source.name} set" if source is not None and source.name else "the task's test set"
        chosen = (
            f"Items: each condition's own sample of {plural(k, 'item')} from {named} "
            f"({plural(size, 'item')}), drawn with a seed and recorded on the condition, the same for every "
            "worker of the condition, after leaving out items a worker would see twice, items shown alike with "
            "different gold and items also in the training items' set."
        )
        seen = f"Each worker saw their condition's {plural(k, 'test item')}"
    else:
        chosen = f"Items: the task's whole test set ({plural(items, 'item')}), the same for every worker and condition."
        seen = f"Each worker saw all {plural(items, 'test item')}"
    seen += f" and {plural(checks, 'attention check')} mixed in" if checks else ""
    return Section("Sample", f"{chosen} {seen}, {training}.")


def presentation_section(study: Study) -> Section:
    """The order of the test items: fixed, or shuffled per worker with the seed recorded."""
    if study.test_order == Study.TestOrder.SHUFFLED:
        text = (
            "Presentation order: shuffled per worker. Each worker's seed is drawn when the test step starts "
            "and recorded with the participation (test_seed), so each order can be reproduced "
            "(Python's random.Random(seed).shuffle of the test set's order)."
        )
    else:
        text = "Presentation order: fixed; every worker saw the test items in the test set's order."
    return Section("Presentation", text + " Training examples were shown in the training set's order.")


def ethics_section(study: Study) -> Section:
    board = study.ethics_board.strip()
    reference = f" (reference {study.ethics_reference.strip()})" if study.ethics_reference.strip() else ""
    if study.ethics_review == Study.EthicsReview.APPROVED:
        return Section("Ethics approval", f"Ethics approval: the study was approved by {board}{reference}.")
    if study.ethics_review == Study.EthicsReview.EXEMPT:
        by = f" by {board}" if board else ""
        return Section(
            "Ethics approval", f"Ethics approval: the study was exempt from ethics review, as stated{by}{reference}."
        )
    return Section("Ethics approval", f"Ethics approval: {NOT_COLLECTED}.", collected=False)


def demographics_section(study: Study) -> Section:
    summaries = demographics.summarise(study)
    if not summaries:
        return Section(
            "Demographics",
            f"Demographics: {NOT_COLLECTED} (no survey question is marked demographic).",
            collected=False,
        )
    return Section(
        "Demographics",
        "Demographics (survey questions marked demographic, as counts; "
        f"{demographics.SUPPRESSION_NOTE}): " + "; ".join(s.text() for s in summaries) + ".",
    )


def pay_adequacy_section(study: Study) -> Section:
    """What workers received per paid hour (annotation.services.money.pay) against the platform's rates."""
    participations = list(Participation.objects.filter(study=study))
    lines = pay_lines(study=study, participations=participations).values()
    received = [line.received_hourly for line in lines if line.received_hourly is not None]
    currency = study.currency
    rates = [
        (name, rate)
        for name, rate in (
            ("minimum", study.platform_minimum_hourly),
            ("recommended rate", study.platform_recommended_hourly),
        )
        if rate is not None
    ]
    if not received:
        figure = "no worker has been paid for a minute or more yet"
    else:
        median = Decimal(statistics.median(received)).quantize(Decimal("0.01"))
        figure = (
            f"workers received a median {median} {currency} per paid hour (lowest {min(received)} {currency}, "
            f"over {plural(len(received), 'worker')})"
        )
    if not rates:
        return Section(
            "Pay adequacy",
            f"Pay adequacy: {figure}; the platform's minimum and recommended rates: {NOT_COLLECTED}.",
            collected=False,
        )
    against = "; ".join(
        f"the platform's {name} is {rate} {currency}/h"
        + (f", {_below(sum(1 for r in received if r < rate))} below it" if received else "")
        for name, rate in rates
    )
    return Section("Pay adequacy", f"Pay adequacy: {figure}; {against}.")


def _below(n: int) -> str:
    return "none" if n == 0 else plural(n, "worker")


def appendix_section(study: Study) -> Section:
    languages = ", ".join(shown_languages(study))
    return Section(
        "Appendix",
        f"Appendix: the exact texts workers saw (task description, instructions, label definitions, consent, "
        f"survey) in each language shown ({languages}), and screenshots of the start, training, reveal and test "
        f"pages as a worker sees them (written by {APPENDIX_COMMAND}).",
    )
