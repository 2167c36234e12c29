"""The statement says what happened (issue 39, findings 5-8; issue 40, item 9): pay over who was paid, each
exclusion once, each rule as it decided, suppression that subtraction cannot undo, what workers were given,
the languages texts exist in, and sections with headings. Every expectation is worked out by hand."""

import itertools
import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import jsonschema
from django.utils import timezone

from annotation.models import FilterDecision, Participation, ProlificAction, Response, Study, SurveyResponse
from annotation.reporting import checklist
from annotation.reporting.appendix import appendix_texts
from annotation.reporting.monitoring import notices
from annotation.reporting.pay import condition_pay
from annotation.reporting.statement import build_statement, render_statement, statement_datasheet
from annotation.reporting.statement_rules import integrity_facts, integrity_line
from annotation.services.verdicts import attention, step_end
from tests.reporting.builders import T0, add_annotator, gold_answers, items_of, make_study, respond, wrong

State = Participation.State
Kind = Participation.ExclusionKind
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schemas" / "statement.schema.json").read_text())


def _sections(study):
    return {s.title: s.text for s in build_statement(study=study).sections}


# --- finding 5: pay figures over what the platform paid -----------------------------------------------------


def test_pay_figures_count_only_the_workers_the_platform_paid(sst2):
    # Rate 12.00/h, posted reward 6.00. By hand, the effective hourly pay (reward / paid hours):
    #   completed in 30 min: 12.00; screened out by the filter at 20 min: 18.00 (both paid);
    #   completed in 10 min but rejected on review: 36.00 (not paid);
    #   two who returned after a minute: 360.00 each (never paid).
    # Over the paid: median(12, 18) = 15.00, lowest received 12.00. Counting everyone gave 189.00 or 36.00.
    study = make_study(sst2, shots=(0,), hourly_rate=Decimal("12.00"), base_reward=Decimal("6.00"))
    gold = gold_answers(sst2)
    add_annotator(study, 0, answers=gold, minutes=30)
    screened = add_annotator(study, 0, answers=gold, minutes=20, state=State.EXCLUDED)
    Participation.objects.filter(pk=screened.pk).update(exclusion_kind=Kind.TRAINING_FILTER)
    # The filter judged their last answer (pay rule 4: paid to it, the filter's verdict is not their act).
    Response.all_objects.filter(participation=screened).update(submitted_at=T0 + timedelta(minutes=20))
    rejected = add_annotator(study, 0, answers=gold, minutes=10)
    ProlificAction.objects.create(participation=rejected, kind="review", action="REJECT", status="done")
    for _ in range(2):
        add_annotator(study, 0, answers=[], minutes=1, state=State.ABANDONED)
    currency = study.currency
    text = _sections(study)
    assert f"Median effective hourly pay 15.00 {currency} over the 2 workers the platform paid" in text["Pay"]
    assert "per condition: 0-shot 15.00)" in text["Pay"]
    assert (
        f"workers received a median 15.00 {currency} per paid hour (lowest 12.00 {currency}, over 2 workers "
        "the platform paid)"
    ) in text["Pay adequacy"]
    (pay,) = condition_pay(study=study)
    assert (pay.n_workers, pay.median_effective_hourly, pay.total_amount) == (2, Decimal("15.00"), Decimal("12.00"))


# --- findings 6 and 7: each exclusion once, each rule as it decided -----------------------------------------


def _strict(sst2, **fields):
    study = make_study(
        sst2,
        shots=(0,),
        attention_fail_limit=1,
        attention_action=Study.AttentionAction.EXCLUDE,
        integrity_max_copies=0,
        integrity_action=Study.AttentionAction.EXCLUDE,
        **fields,
    )
    (check,) = attention.definitions.generate(study=study, positions=[2])
    return study, check


def _finish_test(study, check, *, check_right, copied):
    """A worker who answered every test item and the check, then the end of their test step (the real one)."""
    task = study.task
    p = add_annotator(study, 0, answers=gold_answers(task), state=State.TEST)
    gold = check.example.gold_answers
    answer = respond(
        p, check.example, gold if check_right else wrong(gold, task), phase="test", position=len(items_of(task))
    )
    Response.all_objects.filter(pk=answer.pk).update(attention_check=check)
    if copied:
        Response.all_objects.filter(participation=p).update(copy_count=1)
    p = Participation.objects.select_related("study").get(pk=p.pk)
    step_end.end_step(p)
    p.refresh_from_db()
    return p


def test_an_exclusion_is_counted_once_under_the_rule_that_made_it(sst2):
    study, check = _strict(sst2)
    both = _finish_test(study, check, check_right=False, copied=True)  # over both rules: attention decides
    copier = _finish_test(study, check, check_right=True, copied=True)  # over the integrity rule only
    fine = _finish_test(study, check, check_right=True, copied=False)
    assert (both.exclusion_kind, copier.exclusion_kind, fine.state) == (Kind.ATTENTION, Kind.INTEGRITY, State.COMPLETED)
    assert both.integrity_decisions.get().decision == "excluded"  # recorded beside the attention exclusion
    # By hand: 2 excluded in all; 1 by the attention rule, 1 by the integrity rule, 0 by the filter: 1 + 1 + 0 = 2.
    text = _sections(study)
    assert (
        "Of 3 workers given checks, 1 failed at least one, 0 were flagged for review and 1 excluded."
        in (text["Attention checks"])
    )
    facts = integrity_facts(study)
    assert (facts["excluded"], facts["excluded_first"]) == (1, 1)
    assert integrity_line(facts).endswith(
        "0 were flagged for review and 1 excluded (1 more worker over the rule was excluded by the attention rule "
        "first and counted there)."
    )
    assert "Excluded: 2 workers in all (0 failed the training filter)" in text["Training and filter"]
    assert "1 failed the attention checks, 1 by the integrity rule." in text["Training and filter"]
    # The dashboard's notices count them once too.
    shown = {n.kind: n.text for n in notices(study)}
    assert shown["attention-excluded"] == "1 worker excluded by the attention checks."
    assert shown["integrity-excluded"] == "1 worker excluded by the integrity rule."


def test_each_rule_is_described_as_it_was_when_it_decided(sst2):
    # Worker 1 is judged under fail limit 1 and at most 0 copied items; then both limits are raised (2 and 3),
    # and workers 2 and 3 are judged under the new ones. By hand: version 1 judged 1 worker, version 2 judged 2.
    study, check = _strict(sst2)
    first = _finish_test(study, check, check_right=False, copied=False)
    assert first.exclusion_kind == Kind.ATTENTION
    Study.objects.filter(pk=study.pk).update(attention_fail_limit=2, integrity_max_copies=3)
    second = _finish_test(study, check, check_right=False, copied=False)  # 1 failed: within limit 2
    _finish_test(study, check, check_right=True, copied=False)
    assert second.state == State.COMPLETED
    study.refresh_from_db()
    text = _sections(study)
    assert (
        "the rule changed while the study ran: a worker failing 1 or more was excluded (1 worker judged under it); "
        "then a worker failing 2 or more was excluded (2 workers judged under it)."
    ) in text["Attention checks"]
    assert (
        "the rule changed while the study ran: a worker who copied text of more than 0 items was excluded "
        "(1 worker judged under it); then a worker who copied text of more than 3 items was excluded "
        "(2 workers judged under it)."
    ) in text["Integrity"]


def test_the_training_filter_is_described_by_the_versions_that_decided(sst2):
    study = make_study(sst2, shots=(0, 10), filter_rule="absolute", filter_threshold=0.7)  # 0.7: set later
    for minutes, threshold in ((0, 0.5), (60, 0.6)):
        p = add_annotator(study, 10, answers=gold_answers(sst2))
        FilterDecision.objects.create(
            participation=p,
            training_s1=0.9,
            rule="absolute",
            threshold=threshold,
            passed=True,
            reason="x",
            at=T0 + timedelta(minutes=minutes),
        )
    text = _sections(study)["Training and filter"]
    assert (
        "The rule changed while the study ran: workers whose training S1 fell below 0.50 were excluded (1 worker "
        "judged under it); then workers whose training S1 fell below 0.60 were excluded (1 worker judged under it)."
    ) in text
    assert "0.70" not in text


# --- finding 8: suppression subtraction cannot undo --------------------------------------------------------


def _readings(cells: dict[str, str], answered: str, *, exact_sum: bool, most: int) -> dict[str, set[int]]:
    """Every value a reader could give each cell, by trying every assignment (independent of the code)."""

    def values(shown: str) -> range:
        if shown == "fewer than 3":
            return range(0, 3)
        if shown == "3 or more":
            return range(3, most + 1)
        return range(int(shown), int(shown) + 1)

    totals = range(1, 3) if answered == "fewer than 3" else values(answered)
    options = list(cells)
    seen: dict[str, set[int]] = {option: set() for option in options}
    for assignment in itertools.product(*(values(cells[o]) for o in options)):
        total = sum(assignment)
        if any(total == t if exact_sum else total >= t for t in totals):
            for option, value in zip(options, assignment, strict=True):
                seen[option].add(value)
    return seen


def test_no_suppressed_count_can_be_worked_out_by_subtraction(sst2):
    gender = {"key": "gender", "type": "single", "label": "Gender", "demographic": True}
    gender["options"] = ["Woman", "Man", "Non-binary"]
    native = {"key": "native", "type": "single", "label": "Native", "options": ["yes", "no"], "demographic": True}
    study = make_study(sst2, shots=(0,), survey=[gender, native])
    # Six workers: gender 4 Woman, 1 Non-binary, 1 unanswered (5 answered); native 5 yes, 1 no.
    answers = [{"gender": "Woman", "native": "yes"}] * 4
    answers += [{"gender": "Non-binary", "native": "yes"}, {"native": "no"}]
    for given in answers:
        p = add_annotator(study, 0, answers=gold_answers(sst2))
        SurveyResponse.objects.create(
            participation=p, placement=Study.SurveyPlacement.AFTER_TEST, answers=given, submitted_at=timezone.now()
        )
    text = _sections(study)["Demographics"]
    # By hand: "Man 0" shown would give Non-binary = 5 - 4 - 0 = 1; hiding Man too leaves Man + Non-binary = 1.
    assert "Gender: Woman 4, Man fewer than 3, Non-binary fewer than 3 (5 answered)" in text
    # "yes 3 or more, no fewer than 3 (6 answered)": no = 6 - yes with yes in 3..6 gives no in 0..3 (then 0..2).
    assert "Native: yes 3 or more, no fewer than 3 (6 answered)" in text
    data = statement_datasheet(build_statement(study=study))
    jsonschema.validate(data, SCHEMA)
    for summary in data["demographics"]:
        seen = _readings(summary["counts"], summary["answered"], exact_sum=True, most=6)
        for option, shown in summary["counts"].items():
            if not shown.isdigit():
                assert len(seen[option]) > 1, (summary["key"], option, seen[option])


# --- issue 40, item 9: only what happened, in sections with headings --------------------------------------


def test_the_statement_says_what_workers_were_given_and_which_languages_texts_exist_in(sst2):
    study = make_study(sst2, shots=(0,), consent_required=True, consent_text="I agree.", language="")
    gold = gold_answers(sst2)
    before = add_annotator(study, 0, answers=gold)  # finished before the check was added
    (check,) = attention.definitions.generate(study=study, positions=[2])
    after = add_annotator(study, 0, answers=gold)
    answer = respond(after, check.example, check.example.gold_answers, phase="test", position=4)
    Response.all_objects.filter(pk=answer.pk).update(attention_check=check)
    assert before.state == after.state == State.COMPLETED
    text = _sections(study)
    assert "Each worker saw" not in text["Sample"]
    assert (
        "The workers who reached the test step were not all given the same (with no training step): "
        "4 test items (1 worker); 4 test items and 1 attention check mixed in (1 worker)"
    ) in text["Sample"]
    # Only English exists of the consent text and the task's texts (no translation of either).
    assert "for each language the pages could be shown in (en, de, zh-hans)" in text["Appendix"]
    assert "task texts in en only (pages in de, zh-hans showed it in en)" in text["Appendix"]
    assert "consent text in en only (pages in de, zh-hans showed it in en)" in text["Appendix"]
    # The appendix's texts: the English consent once, never copied under the German or Chinese heading.
    texts = appendix_texts(study)
    assert texts.count("I agree.") == 1
    german = texts.split("## Deutsch (de)", 1)[1].split("\n## ", 1)[0]
    assert "### Consent text\n\nNone in this language: these pages showed the en text." in german

    statement = build_statement(study=study)
    markdown = render_statement(statement, "markdown")
    headings = [line for line in markdown.splitlines() if line.startswith("### ")]
    assert headings == [
        "### Participants",
        "### Items and presentation",
        "### Consent and ethics",
        "### Training and quality control",
        "### Survey and demographics",
        "### Time and pay",
        "### Metric and agreement",
        "### Aggregation and robustness",
        "### Pre-registration and analysis plan",
        "### Appendix",
        f"### {checklist.HEADING}",  # the human-baselines checklist, after the statement
    ]
    for section in statement.sections:  # every section under a heading, once
        assert markdown.count(section.text) == 1, section.title
    table = markdown.index("| Shots |")
    assert markdown.index("### Metric and agreement") < table < markdown.index("### Appendix")
    latex = render_statement(statement, "latex")
    for heading in headings[:-1]:
        assert rf"\paragraph{{{heading[4:]}.}}" in latex, heading
