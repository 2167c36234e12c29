"""The human-evaluation statement a paper needs, written from what is stored about one study.

``build_statement`` assembles sections, each from one small function that
reads the stored facts (platform, workers, recruitment, sample, presentation
order, consent, ethics approval, instructions, training and filter,
abandonment, comprehension check, attention checks, integrity, survey, demographics, time, pay and
its adequacy, metric, agreement, appendix), and a per-condition table; the
renderers turn it into Markdown, LaTeX (booktabs) or the JSON form that maps
each section to its HEDS 3.0 questions and ACL checklist items
(``statement_datasheet``; the map: ``heds.py``). The design and standards
sections live in ``statement_design.py``. A fact that is not stored is said
to be "not recorded", one the study did not collect "not collected", never
guessed.

Hooks: ``integrity_section`` calls ``integrity_facts(study)`` where this
module has it (the integrity signals); ``statement_design.sample_section``
is where a per-condition item sample is described.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import Sum

from annotation.models import (
    ComprehensionAttempt,
    Participation,
    Response,
    Study,
    SurveyResponse,
)
from annotation.reporting import aggregates, analysis_plan, checklist, demographics
from annotation.reporting.alpha import ALPHA_METHOD, task_alpha, task_alpha_interval
from annotation.reporting.analyses import majority_and_agreement
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.formats import latex_escape, latex_float
from annotation.reporting.heds import ACL_CHECKLIST, HEDS_QUESTIONS, HEDS_VERSION, SECTION_STANDARDS, field_key
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.pay import condition_pay, platform_paid
from annotation.reporting.scores import ConditionSummary
from annotation.reporting.statement_design import (
    NOT_COLLECTED,
    Section,
    appendix_section,
    demographics_section,
    ethics_section,
    pay_adequacy_section,
    plural,
    presentation_section,
    retention_section,
    sample_section,
)
from annotation.reporting.statement_rules import (
    attention_check_facts,
    integrity_facts,
    integrity_line,
    training_facts,
)
from annotation.reporting.tables import Table, build_table
from annotation.services.admission import comprehension, consent
from annotation.services.money.pay import pay_lines
from annotation.services.session import samples
from annotation.services.texts import study_texts

NOT_RECORDED = "not recorded"
STATEMENT_FORMATS = ("markdown", "latex", "json")
PLATFORM_NAMES = {"prolific": "Prolific", "mturk": "Amazon Mechanical Turk", "inhouse": "an in-house pool"}
_ENTRY_PARAMETERS = {
    "prolific": "Prolific, whose link passes PROLIFIC_PID, STUDY_ID and SESSION_ID",
    "mturk": "Mechanical Turk, as an external-question HIT passing workerId, assignmentId and hitId",
    "inhouse": "an in-house link carrying a worker_id",
}


@dataclass
class Statement:
    study: Study
    sections: list[Section] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    checklist: list[checklist.Answer] = field(default_factory=list)  # Wei et al.'s items, in their order
    plan: analysis_plan.PlanCheck | None = None  # the frozen analysis plan against the analysis run here


def _minutes(seconds: float | None) -> str:
    return NOT_RECORDED if seconds is None else f"{seconds / 60:.1f} min"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _summaries(table: Table) -> list[ConditionSummary]:
    return sorted(table.summaries, key=lambda s: s.shots)


# --- sections: each reads what is stored ---


def platform_facts(table: Table) -> str:
    seen = Counter(row.platform for row in table.annotators)
    if not seen:
        return "No worker has joined yet."
    parts = [
        f"{PLATFORM_NAMES.get(p, p)} ({plural(n, 'worker')})"
        for p, n in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "Workers came from " + " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts) + "."


def workers_facts(study: Study, table: Table) -> str:
    parts = [
        f"{s.shots}-shot: {s.n} completed, {len(s.excluded)} excluded, {len(s.abandoned)} abandoned"
        + (f", {len(s.in_progress)} still working" if s.in_progress else "")
        for s in _summaries(table)
    ]
    return (
        f"The study asked for {study.workers_per_condition} fresh workers per condition, each taking part once. "
        + "; ".join(parts)
        + "."
        + test_sample_facts(study)
        + pilot_facts(study)
    )


def pilot_facts(study: Study) -> str:
    """A pilot launch (docs/studies.md): ' It was launched as a pilot of ...', or nothing."""
    if study.pilot_opened_at is None:
        return ""
    opened = f"{study.pilot_opened_at:%Y-%m-%d}"
    text = f" It was launched as a pilot of {plural(study.pilot_workers_per_condition or 0, 'worker')} per condition"
    if study.rest_opened_at is None:
        return text + f" on {opened}; the rest of its places had not opened."
    return text + f" on {opened}, the rest opened on {study.rest_opened_at:%Y-%m-%d}; the pilot's workers are counted."


def test_sample_facts(study: Study) -> str:
    """With a test sample (FewCLUE), which items each condition's workers answered: ' In the test step, ...'."""
    sampled = [c for c in study.conditions.order_by("shots") if c.test_sample]
    if not sampled:
        return ""
    parts = [f"{c.shots}-shot: {samples.describe(c)}" for c in sampled]
    text = f" In the test step ({study.get_protocol_display()}), " + "; ".join(parts) + "."
    if study.protocol in (Study.Protocol.FEWCLUE_PAPER, Study.Protocol.FEWCLUE_README):
        text += (
            " Unlike the annotators of both FewCLUE sources (the paper and its README), who discussed their "
            "answers after training, these workers did not: each worked alone. The number of workers per "
            "condition is this platform's choice; neither source gives one."
        )
    return text


def recruitment_facts(study: Study, table: Table) -> str:
    platforms = sorted({row.platform for row in table.annotators})
    kinds = [_ENTRY_PARAMETERS.get(p, p) for p in platforms] or [NOT_RECORDED]
    return f"Recruitment: {'; '.join(kinds)}, to the study's entry link."


def consent_facts(study: Study) -> str:
    """The consent step: whether workers had to agree and how many did and declined; the text itself is in
    the appendix (never pasted here: it is Markdown, and may be long)."""
    text = (study.consent_text or "").strip()
    # A withdrawn worker's consent record is erased with their answers (annotation.services.rights): counted
    # here, and in nothing else.
    withdrew = study.withdrawals.count()
    if not (study.consent_required and text):
        later = f" {plural(withdrew, 'worker')} withdrew; their answers were erased." if withdrew else ""
        return "Consent: no consent page was shown in the tool." + later
    agreed = Participation.objects.filter(study=study, consented_at__isnull=False).count()
    declined = consent.declined_count(study)
    counts = f"{agreed} agreed, {declined} declined" + (
        f", {withdrew} withdrew later (answers erased)" if withdrew else ""
    )
    return (
        f"Workers gave informed consent before any task ({counts}; the time and a "
        "SHA-256 of the text are recorded per worker), on a consent page whose text is in the appendix, in each "
        "language it exists in."
    )


def instruction_facts(study: Study) -> str:
    task = study.task
    shown = ["the task's description on every page"]
    if task.instructions.strip():
        shown.append("instructions beside each item")
    labels = task.labels.count() if task.is_classification else 0
    if labels:
        shown.append(f"each of the {labels} labels with a definition and an example")
    if (study.ai_instruction or "").strip():
        shown.append("an instruction on AI tools with the instructions (AI tools, below)")
    return f"Instructions: {', '.join(shown)}; the exact texts are in the appendix."


def abandonment_facts(study: Study, table: Table) -> str:
    abandoned = sum(len(s.abandoned) for s in table.summaries)
    return f"A slot with no activity for {study.abandon_after_minutes} minutes was released to a new worker; " + (
        f"{plural(abandoned, 'worker')} abandoned and {'was' if abandoned == 1 else 'were'} replaced, "
        "and none of them is averaged in."
        if abandoned
        else "no worker abandoned."
    )


def comprehension_facts(study: Study) -> str:
    """The comprehension check: its questions, the two-attempt rule, and how many passed or were screened out."""
    questions = study.comprehension or []
    if not questions:
        return "Comprehension check: none."
    tried = ComprehensionAttempt.objects.filter(participation__study=study, participation__is_preview=False)
    workers = tried.values("participation_id").distinct().count()
    first = tried.filter(number=1, passed=True).count()
    second = tried.filter(number=2, passed=True).count()
    screened_out = comprehension.screened_out_count(study.pk)
    return (
        f"Comprehension check: {plural(len(questions), 'multiple-choice question')} on the instructions, "
        "answered after consent and before training; a worker who failed had a second attempt (told which "
        "questions were wrong, not the right answers), and one who failed both was screened out and paid for "
        "the time spent. "
        + (
            f"Of {plural(workers, 'worker')} who took it, {first} passed at the first attempt, {second} at the "
            f"second and {screened_out} {'was' if screened_out == 1 else 'were'} screened out."
            if workers
            else "Nobody has taken it yet."
        )
    )


def survey_facts(study: Study) -> str:
    """The survey: its questions and placement, and how many workers answered it."""
    questions = study.survey or []
    if not questions:
        return "Survey: none."
    answered = SurveyResponse.objects.filter(participation__study=study, participation__is_preview=False).count()
    labels = "; ".join(str(q.get("label", q.get("key", ""))).rstrip(".?!:") for q in questions)
    return (
        f"Survey ({study.get_survey_placement_display().lower()}, {plural(len(questions), 'question')}, none "
        f"required unless marked): {labels}. {plural(answered, 'worker').capitalize()} answered."
    )


def integrity_section(study: Study) -> Section:
    """The integrity signals (focus, copying, reading time): the policy, the rule and how many were flagged
    and excluded. The worker page records them with every answer, so they are always collected."""
    return Section("Integrity", integrity_line(integrity_facts(study)))


def ai_tools_section(study: Study) -> Section:
    """The instruction on AI tools workers were shown (or that none was), with the integrity signal that bears
    on it beside it: how many test answers had a copy of the item's text."""
    texts = study_texts.ai_instruction_languages(study)
    answers = Response.objects.filter(
        participation__in=Participation.objects.filter(study=study), phase=Response.Phase.TEST
    ).exclude(status=Response.Status.PENDING)
    copied = answers.filter(copy_count__gt=0)
    signal = (
        f"The integrity signal on it: {copied.count()} of {plural(answers.count(), 'test answer')} had the "
        f"item's text copied ({plural(copied.values('participation_id').distinct().count(), 'worker')}); other "
        "tool use (a second device, typing the text) cannot be seen."
    )
    if not texts:
        return Section("AI tools", f"Instruction on AI tools: none was shown to workers. {signal}", collected=False)
    return Section(
        "AI tools",
        f"Instruction on AI tools, shown to workers with the task's instructions (the start page, the "
        f'comprehension check, beside each item): "{study.ai_instruction.strip()}" (in {", ".join(texts)}; each '
        f"language's text is in the appendix). {signal}",
    )


def preregistration_section(study: Study, check: analysis_plan.PlanCheck) -> Section:
    """The pre-registration and the analysis plan frozen at the launch: its hash, and whether the analysis
    reported here matches it (and where not, each part that differs)."""
    return Section("Pre-registration", check.text(), collected=bool(study.preregistration) or check.matches is not None)


def _test_seconds(participation_ids: list[int]) -> dict[int, float]:
    rows = (
        Response.objects.filter(participation_id__in=participation_ids, phase=Response.Phase.TEST)
        .values("participation_id")
        .annotate(ms=Sum("active_ms"))
        .order_by()
    )
    return {r["participation_id"]: (r["ms"] or 0) / 1000 for r in rows}


def time_facts(table: Table) -> str:
    completed = [row for row in table.annotators if row.state == Participation.State.COMPLETED]
    test = _test_seconds([row.participation_id for row in completed])
    return (
        f"Median time of a completed worker: {_minutes(_median(list(test.values())))} active on the test step, "
        f"{_minutes(_median([row.paid_seconds for row in completed]))} from claiming the slot to completion."
    )


def pay_facts(study: Study) -> str:
    """The pay, with the median effective hourly pay over the workers the platform paid (``platform_paid``)."""
    rate = f"{study.hourly_rate} {study.currency}/h"
    posted = (
        f"a posted reward of {study.base_reward} {study.currency}, topped up to {rate} by a bonus"
        if study.base_reward
        else f"{rate} for the time spent"
    )
    paid = platform_paid(Participation.objects.filter(study=study))
    lines = pay_lines(study=study, participations=paid).values()
    effective = [line.effective_hourly for line in lines if line.effective_hourly is not None]
    median = statistics.median(effective) if effective else None
    per_condition = ", ".join(
        f"{c.shots}-shot {c.median_effective_hourly if c.median_effective_hourly is not None else '–'}"
        for c in condition_pay(study=study)
    )
    text = (
        f"Pay: {posted}. Paid time runs from the moment the worker took the slot (agreeing to the consent text, "
        "or pressing Start) to their last act (their last answer, or a rule's verdict on it), never to a later "
        "verdict or a staff exclusion, and never counts the time between an exclusion and a readmission."
    )
    if median is not None:
        text += (
            f" Median effective hourly pay {Decimal(median).quantize(Decimal('0.01'))} {study.currency} over the "
            f"{plural(len(effective), 'worker')} the platform paid (approved or screened out; per condition: "
            f"{per_condition})."
        )
    return text


def metric_facts(table: Table) -> str:
    intervals = f" {table.interval_note}" if table.interval_note else ""
    return f"Metric: {table.note}{intervals}"


def agreement_facts(
    study: Study, options: MetricOptions, intervals: IntervalOptions | None = None
) -> tuple[str, dict[int, dict[str, Any]]]:
    intervals = intervals or IntervalOptions()
    rows = {row["shots"]: row for row in majority_and_agreement(study=study, options=options)}
    overall = task_alpha(study)
    measure = "Fleiss' kappa" if study.task.is_classification else "mean pairwise S1"
    value = overall["value"]
    interval = task_alpha_interval(study, intervals)
    shown = "undefined" if value is None else f"{value:.3f}"
    if value is not None and interval is not None:
        shown += f" [{intervals.level:.0%} CI {interval.low:.3f}, {interval.high:.3f}: {ALPHA_METHOD}]"
    text = (
        f"Agreement: {measure} and Krippendorff's alpha (nominal, unit: {overall['unit']}; skipped items missing) "
        f"per condition in the table; alpha over all conditions together {shown}."
    )
    return text, rows


def _cell(summary: ConditionSummary, table: Table) -> str:
    for row in table.human_rows():
        if row.shots == summary.shots:
            cell = row.cells[0]
            return f"{cell.text()} {cell.interval_text()}".strip()
    return "–"


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def aggregate_facts(study: Study, options: MetricOptions) -> str:
    cells = aggregates.cell_aggregates(studies=[study], options=options)
    return (
        "Best individual, mean and majority vote of the completed workers (S1, 0-100): "
        + "; ".join(c.text() for c in cells)
        + "."
    )


def robustness_facts(study: Study, options: MetricOptions) -> str:
    effects = aggregates.robustness(studies=[study], options=options)
    return (
        "Robustness to the exclusion rules (each cell's mean with the rule's exclusions who answered every test "
        "item put back): " + "; ".join(e.text() for e in effects) + "."
    )


def build_statement(
    *, study: Study, options: MetricOptions | None = None, intervals: IntervalOptions | None = None
) -> Statement:
    options = options or MetricOptions()
    table = build_table(
        studies=[study], options=options, intervals=intervals or IntervalOptions(), include_models=False
    )
    agreement_text, agreement = agreement_facts(study, options, intervals)
    statement = Statement(study=study)
    statement.plan = analysis_plan.plan_check(study, options, intervals or IntervalOptions())
    survey = survey_facts(study)
    statement.sections = [
        Section("Platform", platform_facts(table)),
        Section("Workers", workers_facts(study, table)),
        Section("Recruitment", recruitment_facts(study, table)),
        sample_section(study),
        presentation_section(study),
        Section("Consent", consent_facts(study), collected=study.consent_required),
        ethics_section(study),
        retention_section(study),
        Section("Instructions", instruction_facts(study)),
        Section("Training and filter", training_facts(study, table)),
        Section("Abandonment", abandonment_facts(study, table)),
        Section("Comprehension check", comprehension_facts(study), collected=bool(study.comprehension)),
        Section("Attention checks", attention_check_facts(study), collected=study.attention_checks.exists()),
        integrity_section(study),
        ai_tools_section(study),
        Section("Survey", survey, collected=bool(study.survey)),
        demographics_section(study),
        Section("Time", time_facts(table)),
        Section("Pay", pay_facts(study)),
        pay_adequacy_section(study),
        Section("Metric", metric_facts(table)),
        Section("Agreement", agreement_text),
        Section("Best individual, mean and majority", aggregate_facts(study, options)),
        Section("Robustness to the exclusion rules", robustness_facts(study, options)),
        preregistration_section(study, statement.plan),
        appendix_section(study),
    ]
    statement.checklist = checklist.answer_checklist(study, table, statement.plan)
    kappa = "Fleiss' kappa" if study.task.is_classification else "Pairwise S1"
    statement.header = ["Shots", "Completed", "Excluded", "Abandoned", "S1 (95% CI)", kappa, "Krippendorff's alpha"]
    for summary in _summaries(table):
        row = agreement.get(summary.shots, {})
        statement.rows.append(
            [
                str(summary.shots),
                str(summary.n),
                str(len(summary.excluded)),
                str(len(summary.abandoned)),
                _cell(summary, table),
                _fmt(row.get("agreement", {}).get("value")),
                _fmt(row.get("alpha", {}).get("value")),
            ]
        )
    return statement


# The statement's headings, each over the sections it holds (by title, in order); a section not named
# here goes under the last heading.
HEADINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Participants", ("Platform", "Workers", "Recruitment")),
    ("Items and presentation", ("Sample", "Presentation", "Instructions")),
    ("Consent and ethics", ("Consent", "Ethics approval", "Data retention")),
    (
        "Training and quality control",
        ("Training and filter", "Abandonment", "Comprehension check", "Attention checks", "Integrity", "AI tools"),
    ),
    ("Survey and demographics", ("Survey", "Demographics")),
    ("Time and pay", ("Time", "Pay", "Pay adequacy")),
    ("Metric and agreement", ("Metric", "Agreement")),
    ("Aggregation and robustness", ("Best individual, mean and majority", "Robustness to the exclusion rules")),
    ("Pre-registration and analysis plan", ("Pre-registration",)),
    ("Appendix", ("Appendix",)),
)


TABLE_HEADING = "Metric and agreement"


def headed(statement: Statement) -> list[tuple[str, str]]:
    """(heading, paragraph) in the order of ``HEADINGS``; a heading without a section is left out."""
    heading_of = {title: heading for heading, titles in HEADINGS for title in titles}
    paragraphs: dict[str, list[str]] = {heading: [] for heading, _ in HEADINGS}
    for section in statement.sections:
        paragraphs[heading_of.get(section.title, HEADINGS[-1][0])].append(section.text)
    return [(heading, " ".join(texts)) for heading, texts in paragraphs.items() if texts]


def statement_markdown(statement: Statement) -> str:
    study = statement.study
    table = ["| " + " | ".join(statement.header) + " |", "|" + "|".join([":---"] * len(statement.header)) + "|"]
    table += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in statement.rows]
    lines = [f"## Human evaluation: {study.task.name}", ""]
    for heading, text in headed(statement):
        lines += [f"### {heading}", "", text, ""]
        if heading == TABLE_HEADING:  # the per-condition table under the metric it reports
            lines += [*table, ""]
            table = []
    if table:
        lines += [*table, ""]
    lines += [f"### {checklist.HEADING}", "", checklist.checklist_markdown(statement.checklist)]
    return "\n".join(lines).rstrip("\n") + "\n"


def statement_latex(statement: Statement) -> str:
    study = statement.study
    lines = [rf"\subsection*{{Human evaluation: {latex_escape(study.task.name)}}}", "", r"\begin{sloppypar}"]
    for heading, text in headed(statement):
        lines += [rf"\paragraph{{{latex_escape(heading)}.}}", latex_escape(text), ""]
    lines += [r"\end{sloppypar}", ""]  # the paragraphs name settings and dotted fields a column cannot hyphenate
    # Seven columns do not fit one column of a two-column paper: the table spans both (table*).
    opening, closing = latex_float(len(statement.header))
    lines += [
        *opening,
        r"\setlength{\tabcolsep}{4pt}",
        rf"\begin{{tabular}}{{{'l' * len(statement.header)}}}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in statement.header) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(latex_escape(cell) for cell in row) + r" \\" for row in statement.rows]
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{Human evaluation of {latex_escape(study.task.name)} per condition.}}",
        *closing,
        "",
        checklist.checklist_latex(statement.checklist),
    ]
    return "\n".join(lines) + "\n"


def render_statement(statement: Statement, fmt: str) -> str:
    if fmt not in STATEMENT_FORMATS:
        raise ReportError(f"format must be one of {', '.join(STATEMENT_FORMATS)}, not {fmt!r}")
    if fmt == "json":
        return statement_json(statement)
    return statement_markdown(statement) if fmt == "markdown" else statement_latex(statement)


def statement_datasheet(statement: Statement) -> dict[str, Any]:
    """The statement as data: each section a field with the HEDS 3.0 questions and ACL checklist items it
    answers, filled or "not collected"; schema: docs/schemas/statement.schema.json."""
    fields = []
    for section in statement.sections:
        heds_ids, acl_ids = SECTION_STANDARDS.get(section.title, ((), ()))
        fields.append(
            {
                "key": field_key(section.title),
                "title": section.title,
                "status": "filled" if section.collected else NOT_COLLECTED,
                "text": section.text,
                "heds": list(heds_ids),
                "acl_checklist": list(acl_ids),
            }
        )

    def answered_by(index: int, ids: dict[str, str]) -> dict[str, Any]:
        return {
            qid: {
                "question": question,
                "fields": [f["key"] for f in fields if qid in f[("heds", "acl_checklist")[index]]],
            }
            for qid, question in ids.items()
        }

    study = statement.study
    return {
        "format": "clues-human-evaluation-statement/1",
        "heds_version": HEDS_VERSION,
        "study": study.slug,
        "task": study.task.name,
        "fields": fields,
        "heds": answered_by(0, HEDS_QUESTIONS),
        "acl_checklist": answered_by(1, ACL_CHECKLIST),
        "demographics": [s.as_dict() for s in demographics.summarise(study)],
        "table": {"header": statement.header, "rows": statement.rows},
        "checklist": checklist.checklist_json(statement.checklist),
        "analysis_plan": statement.plan.as_dict() if statement.plan else None,
    }


def statement_json(statement: Statement) -> str:
    return json.dumps(statement_datasheet(statement), ensure_ascii=False, indent=2) + "\n"
