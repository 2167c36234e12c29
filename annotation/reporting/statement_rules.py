"""The statement's quality-control sections: the training filter, the attention checks and the integrity rule.

Two rules of reporting hold here:

- **Each exclusion counted once**, under the rule that made it (``exclusion_rules``: the participation's
  ``exclusion_kind``). When the attention rule excludes at the end of the test, the integrity decision
  recorded beside it may say ``excluded`` too; the integrity section counts only the exclusions the
  integrity rule made, and names the others as excluded first by the attention rule.
- **Each rule as it was when it decided**: the decisions record the rule in force (``FilterDecision``'s
  rule, threshold, reference and rule version; ``AttentionDecision.fail_limit`` and ``action``; the
  integrity decision's limits and action). Each version used is described with the number of workers it
  judged (each worker's standing decision, the last one); the study's settings now describe a rule only
  while nobody has been judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from annotation.models import (
    AttentionDecision,
    FilterDecision,
    IntegrityDecision,
    Participation,
    ParticipationEvent,
    Study,
)
from annotation.reporting.statement_design import plural
from annotation.reporting.tables import Table
from annotation.services.session import signals
from annotation.services.verdicts import attention, integrity

Kind = Participation.ExclusionKind
D = TypeVar("D", AttentionDecision, IntegrityDecision, FilterDecision)
R = TypeVar("R", bound=Hashable)

# How an exclusion of each kind is named where the statement lists them.
EXCLUDED_BY: dict[str, str] = {
    Kind.TRAINING_FILTER: "failed the training filter",
    Kind.ATTENTION: "failed the attention checks",
    Kind.INTEGRITY: "by the integrity rule",
    Kind.COMPREHENSION: "screened out by the comprehension check",
    Kind.CLOSED: "closed out when the study closed",
    Kind.ADMIN: "by an admin",
}
_REASON_PREFIXES = (
    ("failed training filter", Kind.TRAINING_FILTER),
    (attention.rule.REASON_PREFIX, Kind.ATTENTION),
    (integrity.REASON_PREFIX, Kind.INTEGRITY),
)


def failed_the_filter(study: Study) -> set[int]:
    """The crowd's workers the training filter failed and no admin readmitted afterwards (previews left
    out: ``Participation.objects``). An admin's own exclusion is not a filter failure."""
    decisions = (
        FilterDecision.objects.filter(participation__in=Participation.objects.filter(study=study), pending_group=False)
        .order_by("participation_id", "at", "id")
        .values_list("participation_id", "passed", "is_override")
    )
    failed: set[int] = set()
    for participation_id, passed, is_override in decisions:
        if not passed and not is_override:
            failed.add(participation_id)
        elif passed and is_override:
            failed.discard(participation_id)  # the admin overrode the verdict
    return failed


def exclusion_rules(study: Study) -> dict[int, str]:
    """Each excluded crowd worker of the study -> the one rule that excluded them (an ``ExclusionKind``).

    The participation's ``exclusion_kind`` says it; an exclusion older than that field is read from its
    event's reason, then from a standing filter failure, else it was an admin's."""
    excluded = Participation.objects.filter(study=study, state=Participation.State.EXCLUDED)
    rows = list(excluded.values_list("pk", "exclusion_kind"))
    rules = {pk: kind for pk, kind in rows if kind}
    unknown = [pk for pk, kind in rows if not kind]
    if unknown:
        reasons: dict[int, str] = {}
        events = ParticipationEvent.objects.filter(participation_id__in=unknown, to_state=Participation.State.EXCLUDED)
        for pk, reason in events.order_by("at", "id").values_list("participation_id", "reason"):
            reasons[pk] = reason  # the last exclusion's
        failed = failed_the_filter(study)
        for pk in unknown:
            reason = reasons.get(pk, "").lower()
            kind = next((k for prefix, k in _REASON_PREFIXES if reason.startswith(prefix)), "")
            rules[pk] = kind or (Kind.TRAINING_FILTER if pk in failed else Kind.ADMIN)
    return rules


def _standing(decisions: Iterable[D]) -> list[D]:
    """Each worker's last decision (the one that stands), in the order the rules were first used."""
    last: dict[int, D] = {}
    for decision in decisions:  # ordered by participation, time
        last[decision.participation_id] = decision
    return sorted(last.values(), key=lambda d: (d.at, d.pk))


def versions(decisions: Iterable[D], rule_of: Callable[[D], R]) -> list[tuple[R, int]]:
    """The rules the standing decisions were made under, each with how many workers it judged, in the order
    each was first used."""
    counts: Counter[R] = Counter()
    order: list[R] = []
    for decision in _standing(decisions):
        rule = rule_of(decision)
        if rule not in counts:
            order.append(rule)
        counts[rule] += 1
    return [(rule, counts[rule]) for rule in order]


def describe_versions(texts: list[tuple[str, int]], now: str) -> str:
    """One rule: its phrase (with how many it judged); several: each, with how many each judged."""
    if not texts:
        return f"{now}, as set now (no worker has been judged yet)"
    if len(texts) == 1:
        text, n = texts[0]
        return text if text.startswith("no rule") else f"{text} ({plural(n, 'worker')} judged)"
    return "the rule changed while the study ran: " + "; then ".join(
        f"{text} ({plural(n, 'worker')} judged under it)" for text, n in texts
    )


# --- the training filter -------------------------------------------------------------------------


def _filter_text(rule: str, threshold: float, reference: str, version: int) -> str:
    if rule == Study.FilterRule.NONE:
        return "no training filter was applied"
    if rule == Study.FilterRule.ABSOLUTE:
        return f"workers whose training S1 fell below {threshold:.2f} were excluded"
    if version < 2:
        return (
            f"workers whose training S1 fell more than {threshold:.2f} below the {reference} training S1 of the "
            "other workers of their condition still in the study were excluded, and a worker judged alone "
            "passed (filter rule version 1)"
        )
    return (
        f"workers whose training S1 fell more than {threshold:.2f} below the {reference} training S1 of the "
        "other workers of their condition who finished training (whether or not they were excluded later) "
        "were excluded"
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def training_facts(study: Study, table: Table) -> str:
    levels = [str(c.shots) for c in study.conditions.order_by("shots") if c.shots]
    training = (
        f"In training ({' / '.join(levels)} examples by condition), workers answered each example, "
        "the answer was locked, and then the gold answer was shown."
        if levels
        else "There was no training step."
    )
    decisions = FilterDecision.objects.filter(
        participation__in=Participation.objects.filter(study=study), pending_group=False, is_override=False
    ).order_by("participation_id", "at", "id")
    used = versions(decisions, lambda d: (d.rule, d.threshold, d.reference or study.filter_reference, d.rule_version))
    texts = [(_filter_text(*rule), n) for rule, n in used]
    now = _filter_text(study.filter_rule, study.filter_threshold, study.filter_reference, FilterDecision.RULE_VERSION)
    if all(rule[0] == Study.FilterRule.NONE for rule, _ in used) and study.filter_rule == Study.FilterRule.NONE:
        rule = "No training filter was applied."
    else:
        rule = _sentence(describe_versions(texts, now))
    if study.filter_rule == Study.FilterRule.RELATIVE:
        rule += (
            f" The verdicts were given once the condition's {study.workers_per_condition} workers had trained, "
            f"or after {study.filter_group_timeout_minutes} minutes against those who had trained by then, and "
            "never with fewer than two workers trained."
        )
    rules = exclusion_rules(study)
    excluded = sum(len(s.excluded) for s in table.summaries)
    failed = sum(1 for kind in rules.values() if kind == Kind.TRAINING_FILTER)
    if not excluded:
        return f"{training} {rule} No worker was excluded."
    text = (
        f"{training} {rule} Excluded: {plural(excluded, 'worker')} in all ({failed} failed the training filter); "
        "none of them is averaged in."
    )
    by_kind = Counter(rules.values())
    if len(by_kind) > 1:
        text += (
            " Each exclusion counts once, under the rule that made it: "
            + ", ".join(
                f"{n} {EXCLUDED_BY.get(kind, kind)}" for kind, n in sorted(by_kind.items(), key=lambda kv: -kv[1])
            )
            + "."
        )
    return text


# --- attention checks --------------------------------------------------------------------------------


def _attention_text(fail_limit: int, action: str) -> str:
    if not fail_limit:
        return "no rule (failures were only reported)"
    verdict = "excluded" if action == Study.AttentionAction.EXCLUDE else "flagged for review"
    return f"a worker failing {fail_limit} or more was {verdict}"


def attention_check_facts(study: Study) -> str:
    """The attention checks: how many, the rule(s) that decided, and how many workers failed, were flagged or
    excluded (an exclusion by the attention rule only)."""
    checks = study.attention_checks.count()
    if not checks:
        return "Attention checks: none."
    decisions = AttentionDecision.objects.filter(participation__in=Participation.objects.filter(study=study))
    used = versions(decisions.order_by("participation_id", "at", "id"), lambda d: (d.fail_limit, d.action))
    texts = [(_attention_text(limit, action), n) for (limit, action), n in used]
    rule = describe_versions(texts, _attention_text(study.attention_fail_limit, study.attention_action))
    rows = attention.reports.report(study)
    failed_any = sum(1 for r in rows if r.failed)
    flagged = sum(1 for r in rows if r.decision == AttentionDecision.Decision.REVIEW)
    excluded = sum(1 for kind in exclusion_rules(study).values() if kind == Kind.ATTENTION)
    given = (
        f"Of {plural(len(rows), 'worker')} given checks, {failed_any} failed at least one, "
        f"{flagged} were flagged for review and {excluded} excluded."
        if rows
        else "No worker has answered a check yet."
    )
    return (
        f"Attention checks: {plural(checks, 'item')} with an answer stated in the item "
        f"{'was' if checks == 1 else 'were'} mixed into the test step (never scored); {rule}. {given}"
    )


# --- integrity ---------------------------------------------------------------------------------------


def integrity_facts(study: Study) -> dict[str, Any]:
    """The integrity signals: what the page recorded, the rule(s) that decided, and how many workers were
    flagged and excluded (an exclusion by the integrity rule only; ``excluded_first``: over the rule, but
    excluded by the attention rule, which decides first and counts them)."""
    rows = integrity.report(study)
    decisions = IntegrityDecision.objects.filter(participation__in=Participation.objects.filter(study=study))
    standing = _standing(decisions.order_by("participation_id", "at", "id"))
    used = versions(standing, integrity.decision_rule_text)
    rules = exclusion_rules(study)
    over = {d.participation_id for d in standing if d.decision == IntegrityDecision.Decision.EXCLUDED}
    return {
        "recorded": "per item: time visible, times and time away (unfocused or hidden), copies of its text "
        "(a count); no keystrokes, clipboard content or pointer tracks",
        "reading_rate": f"{signals.WORDS_PER_MINUTE} words or {signals.CJK_CHARS_PER_MINUTE} CJK characters per minute",
        "rule": describe_versions(used, integrity.rule_text(study)),
        "workers": len(rows),
        "with_signals": sum(1 for r in rows if r.figures.with_signals),
        "flagged": sum(1 for r in rows if r.decision == IntegrityDecision.Decision.REVIEW),
        "excluded": sum(1 for kind in rules.values() if kind == Kind.INTEGRITY),
        "excluded_first": sum(1 for pk in over if rules.get(pk) == Kind.ATTENTION),
    }


def integrity_line(facts: dict[str, Any]) -> str:
    """``integrity_facts`` as the statement's sentence."""
    first = facts.get("excluded_first", 0)
    also = (
        f" ({plural(first, 'more worker')} over the rule {'was' if first == 1 else 'were'} excluded by the "
        "attention rule first and counted there)"
        if first
        else ""
    )
    return (
        f"Integrity signals: the worker page recorded, {facts['recorded']}; each answer's time was compared "
        f"with a reading-time estimate for its text ({facts['reading_rate']}); {facts['rule']}. "
        f"Of {plural(facts['workers'], 'worker')} with test answers, {facts['with_signals']} sent the signals, "
        f"{facts['flagged']} {'was' if facts['flagged'] == 1 else 'were'} flagged for review and "
        f"{facts['excluded']} excluded{also}."
    )
