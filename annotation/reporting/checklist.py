"""The human-baselines reporting checklist (Wei et al., ICML 2025), answered from the database.

Every item of the checklist (its repository's ``reporting_checklist/``), in its order and with its
numbers, is answered here: from the study's data (the figure and where it comes from), or, for what only
the authors know (the paper, whether authors served as baseliners, how the model's interface compares),
from ``Study.checklist_answers`` (``{"0.1": "...", ...}``, set with ``configure_study --checklist-file``),
and then said to be the authors' answer. An item neither can answer says "not filled" and how to fill it;
no item is answered by a fixed string. Where the authors also filled a data item, both are shown.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Count

from annotation.models import ModelRun, Participation, Response, Study
from annotation.protocol.checklist import CHECKLIST
from annotation.reporting.analysis_plan import PlanCheck, plan_check
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.demographics import demographic_questions, summarise
from annotation.reporting.formats import latex_escape
from annotation.reporting.options import MetricOptions
from annotation.reporting.statement_design import shown_languages
from annotation.reporting.tables import Table
from annotation.services.texts import study_texts
from tasks_app.models import ExampleSet

State = Participation.State
HEADING = "Human-baselines checklist (Wei et al., ICML 2025)"
DATA = "data"
AUTHORS = "authors"
NOT_FILLED = "not filled"


@dataclass(frozen=True)
class Answer:
    number: str
    title: str
    question: str
    answer: str
    source: str  # DATA, AUTHORS or NOT_FILLED
    basis: str  # where the answer comes from

    def as_dict(self) -> dict[str, str]:
        return {
            "item": self.number,
            "title": self.title,
            "answer": self.answer,
            "source": self.source,
            "basis": self.basis,
        }


class Facts:
    """What the answers read, each read once."""

    def __init__(self, study: Study, table: Table, plan: PlanCheck) -> None:
        self.study = study
        self.table = table
        self.plan = plan
        self.slots = list(
            Participation.objects.filter(study=study).exclude(state=State.DECLINED).select_related("worker")
        )
        self.declined = study.consent_declines.count()
        self.states = Counter(p.state for p in self.slots)
        self.exclusions = Counter(p.exclusion_kind for p in self.slots if p.state == State.EXCLUDED)
        self.test_set = ExampleSet.objects.filter(task=study.task, role=ExampleSet.Role.TEST).first()
        per_item = (
            Response.objects.filter(participation__in=self.slots, phase=Response.Phase.TEST)
            .exclude(status=Response.Status.PENDING)
            .values("example_id")
            .annotate(n=Count("id"))
        )
        self.answers_per_item = [row["n"] for row in per_item]
        self.model_runs = list(ModelRun.objects.filter(task=study.task).order_by("name"))
        self.conditions = list(study.conditions.select_related("training_set").order_by("shots"))
        self.checks = study.attention_checks.count()


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _test_items(f: Facts, condition: Any) -> int:
    if condition.test_sample:
        return len(condition.test_sample)
    return f.test_set.examples.count() if f.test_set else 0


def _training_items(condition: Any) -> int:
    return condition.training_set.examples.count() if condition.training_set else 0


# --- 0. Paper information -------------------------------------------------------------------------------


def mode(f: Facts) -> tuple[str, str]:
    contexts = list(f.test_set.examples.values_list("context", flat=True)) if f.test_set else []
    text = sum(
        1 for c in contexts if isinstance(c, str) or (isinstance(c, list) and all(isinstance(x, str) for x in c))
    )
    return f"Text ({text} of {len(contexts)} test items are text only)", "the task's test items (Example.context)"


def language(f: Facts) -> tuple[str, str]:
    sample = f.test_set.examples.values_list("question", "context")[:200] if f.test_set else []
    joined = " ".join(f"{q} {c}" for q, c in sample)
    cjk = len(re.findall(r"[\u4e00-\u9fff]", joined))
    latin = len(re.findall(r"[A-Za-z]", joined))
    items = "Chinese" if cjk > latin else "English" if latin else "none found"
    pages = ", ".join(shown_languages(f.study))
    return f"Items: {items}; pages shown to workers: {pages}", "the test items' script; Study.language"


def dataset_size(f: Facts) -> tuple[str, str]:
    n = f.test_set.examples.count() if f.test_set else 0
    return f"{n} test items", f"the task's test set ({f.test_set or 'none'})"


def ai_test_size(f: Facts) -> tuple[str, str]:
    if not f.model_runs:
        return "N/A: no model predictions imported for this task", "ModelRun (none)"
    runs = "; ".join(f"{r.name}: {len(r.predictions)}" for r in f.model_runs)
    return f"Items with a prediction: {runs}", "ModelRun.predictions"


def ai_samples(f: Facts) -> tuple[str, str]:
    if not f.model_runs:
        return "N/A: no model predictions imported", "ModelRun (none)"
    names = Counter(r.name for r in f.model_runs)
    return "; ".join(f"{name}: {_n(n, 'run')}, one answer per item each" for name, n in names.items()), "ModelRun"


# --- 1. Baseline design and implementation -------------------------------------------------------------


def baseliners(f: Facts) -> tuple[str, str]:
    by_state = ", ".join(f"{n} {state}" for state, n in sorted(f.states.items()))
    return f"{len(f.slots)} took a slot ({by_state or 'none'})", "Participation (previews and declines left out)"


def baseline_test_size(f: Facts) -> tuple[str, str]:
    return f"{len(f.answers_per_item)} distinct test items answered", "Response (locked test items)"


def test_sampling(f: Facts) -> tuple[str, str]:
    sampled = [c for c in f.conditions if c.test_sample]
    if sampled:
        return (
            f"Simple random sample of {len(sampled[0].test_sample)} items per condition, drawn once with seed "
            f"{sampled[0].sample_seed}",
            "Condition.test_sample, Condition.sample_seed",
        )
    return "The whole test set (no sampling)", "Study.test_sample_size (empty)"


def samples_per_item(f: Facts) -> tuple[str, str]:
    if not f.answers_per_item:
        return "No test item answered yet", "Response"
    counts = f.answers_per_item
    return (
        f"Mean {statistics.fmean(counts):.2f} answers per item (min {min(counts)}, max {max(counts)})",
        "Response (locked test items per item)",
    )


def items_per_baseliner(f: Facts) -> tuple[str, str]:
    parts = [
        f"{c.shots}-shot: {_training_items(c)} training + {_test_items(f, c)} test + {f.checks} checks"
        for c in f.conditions
    ]
    return "; ".join(parts) or "no condition", "the conditions' training and test sets, AttentionCheck"


def iterative_design(f: Facts) -> tuple[str, str]:
    jobs = f.study.rehearsal_jobs.all()
    passed = sum(1 for j in jobs if j.passed)
    previews = Participation.all_objects.filter(study=f.study, is_preview=True).count()
    if not jobs and not previews:
        return "No rehearsal or staff preview recorded", "RehearsalJob, staff previews (none)"
    return (
        f"Partial: {_n(len(jobs), 'rehearsal')} with a simulated crowd ({passed} with every invariant holding), "
        f"{_n(previews, 'staff preview')}",
        "RehearsalJob, Participation.is_preview",
    )


def ethics(f: Facts) -> tuple[str, str]:
    s = f.study
    if not s.ethics_review:
        return "Unknown/Unreported: not recorded on the study", "Study.ethics_review (empty)"
    detail = ", ".join(x for x in (s.ethics_board, s.ethics_reference and f"reference {s.ethics_reference}") if x)
    return f"Yes: {s.get_ethics_review_display()}" + (f" ({detail})" if detail else ""), "Study.ethics_*"


def preregistration(f: Facts) -> tuple[str, str]:
    ref = f.study.preregistration.strip()
    said = f"Yes: {ref}" if ref else "No: no public pre-registration recorded"
    plan = f.plan
    if plan.sha256 is None:
        frozen = "no analysis plan frozen (the study has not opened for its full launch)"
    elif plan.matches:
        frozen = f"the analysis plan frozen at the full launch (SHA-256 {plan.sha256}) matches the reported analysis"
    else:
        parts = ", ".join(d.part for d in plan.differences)
        frozen = (
            f"the analysis plan frozen at the full launch (SHA-256 {plan.sha256}) differs from the reported "
            f"analysis in {_n(len(plan.differences), 'part')}: {parts}"
        )
    return f"{said}; {frozen}", "Study.preregistration, AnalysisPlan (frozen when the study opened)"


# --- 2. Recruitment --------------------------------------------------------------------------------------


def sampling_strategy(f: Facts) -> tuple[str, str]:
    platforms = Counter(p.worker.platform for p in f.slots)
    kinds = {"prolific": "Crowdsource (Prolific)", "mturk": "Crowdsource (MTurk)", "inhouse": "Convenience sample"}
    parts = [f"{kinds.get(k, k)}: {n}" for k, n in sorted(platforms.items())]
    return "; ".join(parts) or "nobody recruited yet", "Worker.platform"


def recruitment_qc(f: Facts) -> tuple[str, str]:
    rules = ["a worker takes part in a task at most once"]
    if f.study.comprehension:
        rules.append(f"a comprehension check of {_n(len(f.study.comprehension), 'question')} (two attempts)")
    if f.study.consent_required:
        rules.append("consent before any slot")
    return "Yes: " + "; ".join(rules), "Study.comprehension, Study.consent_required, the one-task-per-worker rule"


def recruitment_exclusions(f: Facts) -> tuple[str, str]:
    screened = f.exclusions.get(Participation.ExclusionKind.COMPREHENSION, 0)
    return (
        f"{screened} screened out by the comprehension check; {f.declined} declined the consent",
        "Participation.exclusion_kind, ConsentDecline",
    )


def contamination(f: Facts) -> tuple[str, str]:
    group = hasattr(f.study.task, "prolific_group")
    return (
        "Partial: nobody answered the task in two conditions or studies (one participation per worker and task)"
        + ("; a Prolific participant group blocks past participants of the task" if group else "")
        + "; prior exposure to the dataset elsewhere was not screened",
        "the participation_one_per_worker_and_task constraint" + (", ProlificGroup" if group else ""),
    )


def training(f: Facts) -> tuple[str, str]:
    levels = [str(c.shots) for c in f.conditions if c.shots]
    if not levels:
        return "No: zero-shot only", "Condition.shots"
    return f"Yes: {'/'.join(levels)} examples by condition", "Condition.shots, Condition.training_set"


def training_type(f: Facts) -> tuple[str, str]:
    if not any(c.shots for c in f.conditions):
        return "N/A: no training step", "Condition.shots"
    return (
        "Solved examples: each answer locked when submitted, then the gold shown (never changeable)",
        "the training step (annotation.services.session.reveal)",
    )


def training_pay(f: Facts) -> tuple[str, str]:
    if not any(c.shots for c in f.conditions):
        return "N/A: no training step", "Condition.shots"
    return (
        f"Yes: paid time runs from the slot taken, training included, at {f.study.hourly_rate} {f.study.currency}/h",
        "the pay rule (annotation.services.money.pay), Study.hourly_rate",
    )


def testing_pay(f: Facts) -> tuple[str, str]:
    effective = [r.effective_hourly for r in f.table.annotators if r.effective_hourly is not None]
    median = f", median effective {statistics.median(effective):.2f} {f.study.currency}/h" if effective else ""
    return f"Yes: {f.study.hourly_rate} {f.study.currency}/h for the time spent{median}", "Study.hourly_rate, pay"


def bonus(f: Facts) -> tuple[str, str]:
    if f.study.base_reward:
        return (
            f"No performance bonus: a bonus tops the posted reward ({f.study.base_reward} {f.study.currency}) up "
            "to the hourly rate for the time spent, whatever the score",
            "Study.base_reward, the pay rule",
        )
    return "No: pay is for time, never for score", "the pay rule"


def pay_structure(f: Facts) -> tuple[str, str]:
    return f"Yes: one rate for every worker ({f.study.hourly_rate} {f.study.currency}/h)", "Study.hourly_rate"


# --- 3. Execution ----------------------------------------------------------------------------------------


def instrument_length(f: Facts) -> tuple[str, str]:
    sizes = [_training_items(c) + _test_items(f, c) + f.checks for c in f.conditions]
    return f"One sitting of {', '.join(map(str, sizes)) or '0'} items by condition", "the conditions' sets"


def randomization(f: Facts) -> tuple[str, str]:
    shuffled = f.study.test_order == Study.TestOrder.SHUFFLED
    return ("Yes: test items shuffled per worker (seed recorded)" if shuffled else "No: a fixed order"), (
        "Study.test_order"
    )


def execution_qc(f: Facts) -> tuple[str, str]:
    s = f.study
    rules = []
    if f.checks:
        limit = f"fail limit {s.attention_fail_limit}" if s.attention_fail_limit else "no fail limit"
        rules.append(f"{_n(f.checks, 'attention check')} ({limit})")
    limits = (s.integrity_max_copies, s.integrity_max_fast_share, s.integrity_max_hidden_share)
    if any(limit is not None for limit in limits):
        rules.append(f"the integrity rule (copies, fast answers, hidden page; action: {s.integrity_action})")
    if s.filter_rule != Study.FilterRule.NONE:
        rules.append(f"the training filter ({s.filter_rule}, threshold {s.filter_threshold})")
    if not rules:
        return "No: no attention check, integrity rule or training filter", "Study (rules unset)"
    return "Yes: " + "; ".join(rules), "Study.attention_*, integrity_*, filter_*; AttentionCheck"


def execution_exclusions(f: Facts) -> tuple[str, str]:
    kinds = {k: n for k, n in f.exclusions.items() if k != Participation.ExclusionKind.COMPREHENSION}
    if not kinds:
        return "0 excluded", "Participation.exclusion_kind"
    parts = ", ".join(f"{n} by {k or 'an unrecorded rule'}" for k, n in sorted(kinds.items()))
    return f"{sum(kinds.values())} of {len(f.slots)} excluded: {parts}", "Participation.exclusion_kind"


def tool_enforcement(f: Facts) -> tuple[str, str]:
    copies = Response.objects.filter(participation__in=f.slots, copy_count__gt=0).count()
    signal = f"copying is recorded per item ({copies} items with a copy); other tool use cannot be seen"
    languages = study_texts.ai_instruction_languages(f.study)
    if not languages:
        return f"Partial: no instruction on AI tools was shown; {signal}", "Study.ai_instruction (empty), Response"
    return (
        f'Partial: workers were told "{f.study.ai_instruction.strip()}" (in {", ".join(languages)}) with the '
        f"instructions; {signal}",
        "Study.ai_instruction and its translations, Response.copy_count (the page's signals)",
    )


def explanations(f: Facts) -> tuple[str, str]:
    text = [q for q in f.study.survey or [] if isinstance(q, dict) and q.get("type") == "text"]
    if not text:
        return "No: no free-text question", "Study.survey"
    return f"Partial: {_n(len(text), 'free-text survey question')}", "Study.survey"


# --- 4. Analysis -----------------------------------------------------------------------------------------


def significance(f: Facts) -> tuple[str, str]:
    if not f.model_runs:
        return "N/A: no model to compare with", "ModelRun (none)"
    return "Yes: a paired bootstrap interval of each human-model gap", "the table's gaps"


def significance_test(f: Facts) -> tuple[str, str]:
    if not f.model_runs:
        return "N/A: no model to compare with", "ModelRun (none)"
    intervals = f.table.intervals
    detail = f"{intervals.resamples} resamples, seed {intervals.seed}" if intervals else "intervals off"
    return f"Paired percentile bootstrap over test items ({detail})", "the table's interval options"


def uncertainty(f: Facts) -> tuple[str, str]:
    intervals = f.table.intervals
    if intervals:
        return (
            f"Yes: {intervals.level:.0%} two-way percentile bootstrap intervals (annotators and items resampled) and "
            "the SD over annotators",
            "the table's interval options",
        )
    return "Partial: the SD over annotators (intervals turned off)", "the table's options"


def estimate_type(f: Facts) -> tuple[str, str]:
    return ("Point and interval estimate" if f.table.intervals else "Point estimate"), "the table's options"


def metric_equivalence(f: Facts) -> tuple[str, str]:
    if not f.model_runs:
        return "N/A: no model row", "ModelRun (none)"
    return "Yes: S1 per item for both, the humans' per-annotator mean beside the model's", "the table"


def scoring_equivalence(f: Facts) -> tuple[str, str]:
    if not f.model_runs:
        return "N/A: no model row", "ModelRun (none)"
    return "Yes: one scorer (tasks_app.scoring.s1) for the humans' answers and the model's", "the table"


def qc_robustness(f: Facts) -> tuple[str, str]:
    finished = {r.participation_id for r in f.table.annotators if r.state in (State.COMPLETED, State.EXCLUDED)}
    if not f.exclusions:
        return "N/A: nobody was excluded", "Participation.exclusion_kind"
    by_shots: dict[int, tuple[list[float], list[float]]] = {}
    for r in f.table.annotators:
        if r.participation_id in finished and r.test_s1 is not None and r.test_items == r.test_total:
            kept, everyone = by_shots.setdefault(r.shots, ([], []))
            everyone.append(r.test_s1)
            if r.state == State.COMPLETED:
                kept.append(r.test_s1)
    lines = [
        f"{shots}-shot {100 * statistics.fmean(kept):.1f} reported, {100 * statistics.fmean(everyone):.1f} with "
        "the excluded who finished the test"
        for shots, (kept, everyone) in sorted(by_shots.items())
        if kept and everyone
    ]
    return ("Partial: " + "; ".join(lines)) if lines else "No: no cell to compare", "the table's annotators"


# --- 5. Documentation ------------------------------------------------------------------------------------


def demographics(f: Facts) -> tuple[str, str]:
    questions = demographic_questions(f.study)
    if not questions:
        return "No: the survey asks no demographic question", "Study.survey"
    answered = max((q.answered for q in summarise(f.study)), default=0)
    return f"Yes: {_n(len(questions), 'question')} as suppressed counts ({answered} answered)", "SurveyResponse"


def instructions(f: Facts) -> tuple[str, str]:
    return (
        f"Yes: the exact texts in {', '.join(shown_languages(f.study))} (manage.py study_appendix)",
        "Task and Study texts",
    )


def completion_time(f: Facts) -> tuple[str, str]:
    minutes = [r.active_minutes for r in f.table.annotators if r.state == State.COMPLETED]
    if not minutes:
        return "No: nobody completed yet", "Response.active_ms"
    return f"Yes: median {statistics.median(minutes):.1f} active minutes per completed worker", "Response.active_ms"


def completion_rate(f: Facts) -> tuple[str, str]:
    done = f.states.get(State.COMPLETED, 0)
    return (
        f"Yes: {done} of {len(f.slots)} completed; {f.states.get(State.ABANDONED, 0)} left; "
        f"{f.states.get(State.EXCLUDED, 0)} excluded",
        "Participation.state",
    )


def analysis_code(f: Facts) -> tuple[str, str]:
    return f"Yes: the platform that computed it, version {settings.APP_VERSION}", "settings.APP_VERSION"


# Each item answered from the data; the others (the paper, ...) are the authors' to answer.
FROM_DATA: dict[str, Callable[[Facts], tuple[str, str]]] = {
    "0.6": mode,
    "0.7": language,
    "0.8": dataset_size,
    "0.9": ai_test_size,
    "0.10": ai_samples,
    "1.1": baseliners,
    "1.2": baseline_test_size,
    "1.2.1": test_sampling,
    "1.3": samples_per_item,
    "1.4": items_per_baseliner,
    "1.6": iterative_design,
    "1.9": ethics,
    "1.10": preregistration,
    "2.2": sampling_strategy,
    "2.3": recruitment_qc,
    "2.3.1": recruitment_qc,
    "2.3.2": recruitment_exclusions,
    "2.5": contamination,
    "2.6": training,
    "2.6.1": training_type,
    "2.6.2": training_pay,
    "2.6.2.1": training_pay,
    "2.7": testing_pay,
    "2.7.1": testing_pay,
    "2.7.2": bonus,
    "2.7.2.1": bonus,
    "2.7.3": pay_structure,
    "2.7.3.1": pay_structure,
    "3.1": instrument_length,
    "3.1.1": randomization,
    "3.2": execution_qc,
    "3.2.1": execution_qc,
    "3.2.2": execution_exclusions,
    "3.5.1": tool_enforcement,
    "3.6": explanations,
    "4.1": significance,
    "4.1.1": significance_test,
    "4.2": uncertainty,
    "4.2.1": estimate_type,
    "4.3": metric_equivalence,
    "4.4": scoring_equivalence,
    "4.5": scoring_equivalence,
    "4.6": qc_robustness,
    "5.1.1": demographics,
    "5.1.2": instructions,
    "5.1.3": completion_time,
    "5.1.5": completion_rate,
    "5.4": analysis_code,
}


def answer_checklist(study: Study, table: Table, plan: PlanCheck | None = None) -> list[Answer]:
    """Every item, in order: from the data, the authors' answer on the study, or "not filled". ``plan``: the
    frozen analysis plan against the analysis run (the statement's; default: the default options')."""
    facts = Facts(study, table, plan or plan_check(study, MetricOptions(), IntervalOptions()))
    own = study.checklist_answers or {}
    answers = []
    for number, title, question in CHECKLIST:
        filled = str(own.get(number, "")).strip()
        compute = FROM_DATA.get(number)
        if compute is not None:
            text, basis = compute(facts)
            if filled:
                text, basis = f"{text}. The authors add: {filled}", f"{basis}; Study.checklist_answers"
            answers.append(Answer(number, title, question, text, DATA, basis))
        elif filled:
            answers.append(Answer(number, title, question, filled, AUTHORS, "filled by the authors on the study"))
        else:
            how = f'configure_study {study.slug} --checklist-file FILE with {{"{number}": "..."}}'
            answers.append(Answer(number, title, question, f"not filled ({how})", NOT_FILLED, ""))
    return answers


def checklist_markdown(answers: list[Answer]) -> str:
    lines = [
        "| item | | answer | from |",
        "|---|---|---|---|",
    ]
    for a in answers:
        source = {DATA: f"data: {a.basis}", AUTHORS: "filled by the authors", NOT_FILLED: "not filled"}[a.source]
        lines.append(f"| {a.number} | {a.title} | {a.answer.replace('|', '/')} | {source.replace('|', '/')} |")
    return "\n".join(lines)


def checklist_latex(answers: list[Answer]) -> str:
    """A description list: it fits one column of a two-column paper, where a four-column table would not."""
    # \sloppy: the answers name dotted fields (Condition.test_sample) that a narrow column cannot hyphenate.
    lines = [rf"\paragraph{{{latex_escape(HEADING)}}}", r"{\sloppy\small", r"\begin{description}"]
    for a in answers:
        source = {DATA: f"data: {a.basis}", AUTHORS: "filled by the authors", NOT_FILLED: "not filled"}[a.source]
        # The label is the number alone: a bold title does not break, and the longest overflow a column.
        lines.append(
            rf"\item[{a.number}] \textit{{{latex_escape(a.title)}}}: {latex_escape(a.answer)} ({latex_escape(source)})"
        )
    lines += [r"\end{description}", r"\par}"]
    return "\n".join(lines)


def checklist_json(answers: list[Answer]) -> list[dict[str, str]]:
    return [a.as_dict() for a in answers]
