"""The statement's sections on design and standards (HEDS 3.0, ACL Responsible NLP checklist D).

Each function reads one set of stored facts and returns a ``Section`` of the statement: the sample
(how items were chosen, how many each worker saw), the presentation order, the ethics review, the
retention of identifiers, the demographics, the pay against the platform's rates, and the appendix of
texts and screenshots. A fact the study did not collect gives a section marked not collected
(``collected=False``), never a guess.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Q

from annotation.models import Participation, Response, Study
from annotation.reporting import demographics
from annotation.reporting.pay import platform_paid
from annotation.services.money.pay import pay_lines
from annotation.services.rights import retention
from annotation.services.session import samples
from annotation.services.verdicts.attention.definitions import test_set_size
from tasks_app.texts import missing_texts

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


def served(study: Study) -> Counter[tuple[int, int]]:
    """(test items, attention checks) each crowd worker who reached the test step was given -> how many
    workers: what happened, whatever the design says now (checks added after some workers had finished
    were never shown to them)."""
    rows = (
        Response.all_objects.filter(
            participation__in=Participation.objects.filter(study=study), phase=Response.Phase.TEST
        )
        .values("participation_id")
        .annotate(n=Count("id"), checks=Count("id", filter=Q(attention_check__isnull=False)))
        .order_by()
    )
    return Counter((r["n"] - r["checks"], r["checks"]) for r in rows)


def _given(items: int, checks: int) -> str:
    return plural(items, "test item") + (f" and {plural(checks, 'attention check')} mixed in" if checks else "")


def sample_section(study: Study) -> Section:
    """How the test items were chosen, and how many each worker was given (as it happened)."""
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
        design = f"their condition's {_given(k, checks)}"
    else:
        chosen = f"Items: the task's whole test set ({plural(items, 'item')}), the same for every worker and condition."
        design = f"all {_given(items, checks)}"
    given = served(study)
    if not given:
        seen = f"No worker has reached the test step yet; the design gives each worker {design}, {training}."
    elif len(given) == 1:
        ((n, c), workers), *_ = given.items()
        who = "The 1 worker" if workers == 1 else f"Each of the {workers} workers"
        seen = f"{who} who reached the test step was given {_given(n, c)}, {training}."
    else:
        parts = "; ".join(
            f"{_given(n, c)} ({plural(w, 'worker')})" for (n, c), w in sorted(given.items(), key=lambda kv: kv[0])
        )
        seen = (
            f"The workers who reached the test step were not all given the same ({training}): {parts}; the design "
            f"now gives {design}."
        )
    return Section("Sample", f"{chosen} {seen}")


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


def retention_section(study: Study) -> Section:
    """How long the workers' platform identifiers are kept (the IDENTIFIER_RETENTION_DAYS setting)."""
    days = settings.IDENTIFIER_RETENTION_DAYS
    text = (
        f"Data retention: the workers' platform identifiers are kept for {plural(days, 'day')} after the study "
        "is closed and every Prolific operation on it is done, then replaced in every record by a keyed hash "
        "(setting IDENTIFIER_RETENTION_DAYS); a worker who withdraws has their answers erased and their "
        "identifier replaced at once."
    )
    since = retention.over_since(study)
    if since is not None:
        text += f" This study's identifiers are due for replacement on {since + timedelta(days=days):%Y-%m-%d}."
    return Section("Data retention", text)


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
    paid = platform_paid(Participation.objects.filter(study=study))  # never a worker who returned, unpaid
    lines = pay_lines(study=study, participations=paid).values()
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
            f"over {plural(len(received), 'worker')} the platform paid)"
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


def text_languages(study: Study) -> dict[str, list[str]]:
    """Which of the languages shown each kind of text exists in: the task's texts (description, instructions,
    labels: complete in that language), the consent text and the survey (the study's own, in its language or
    the site's default, and each translation that gives it). A worker whose pages were in another language
    read the study's own text."""
    shown = shown_languages(study)
    own = study.language or settings.LANGUAGE_CODE
    translations = study.translations if isinstance(study.translations, dict) else {}

    def has(language: str, key: str) -> bool:
        given = (translations.get(language) or {}).get(key)
        return language == own or bool(given.strip() if isinstance(given, str) else given)

    found = {"task texts": [language for language in shown if not missing_texts(study.task, language)]}
    if study.consent_required and study.consent_text.strip():
        found["consent text"] = [language for language in shown if has(language, "consent_text")]
    if study.survey:
        found["survey"] = [language for language in shown if has(language, "survey")]
    return found


def appendix_section(study: Study) -> Section:
    shown = shown_languages(study)
    parts = []
    for kind, languages in text_languages(study).items():
        others = [language for language in shown if language not in languages]
        where = ", ".join(languages) or "none of them"
        if others and languages:
            fallback = study.language or settings.LANGUAGE_CODE
            where += f" only (pages in {', '.join(others)} showed it in {fallback})"
        parts.append(f"{kind} in {where}")
    return Section(
        "Appendix",
        f"Appendix: the exact texts workers saw and screenshots of the start, training, reveal and test pages as a "
        f"worker sees them (written by {APPENDIX_COMMAND}), for each language the pages could be shown in "
        f"({', '.join(shown)}); the texts exist as follows: {'; '.join(parts)}.",
    )
