"""The human-baselines reporting checklist (Wei et al., "Human Baselines in Model Evaluations Need Rigor
and Transparency", ICML 2025; its repository's ``reporting_checklist/``): its items, numbered as there.

The vocabulary only: the study's answers are computed in ``annotation.reporting.checklist``; the authors'
own answers (``Study.checklist_answers``) are checked here, since the model validates them.
"""

from __future__ import annotations

from typing import Any

# (number, title, the question in short), in the checklist's order.
CHECKLIST: tuple[tuple[str, str, str], ...] = (
    ("0.1", "Paper Title", "The paper's title."),
    ("0.2", "Paper Link", "Where the paper is."),
    ("0.3", "Publication Year", "When it was published."),
    ("0.4", "Publication Venue", "Where it was published."),
    ("0.5", "Type of Eval", "Knowledge, capabilities, propensity, agent."),
    ("0.6", "Mode of Eval", "Text, visual, audio, other."),
    ("0.7", "Language of Eval", "The evaluation's language(s)."),
    ("0.8", "Evaluation Dataset Size", "Items in the evaluation dataset."),
    ("0.9", "AI Test Set Size", "Items the AI evaluation is run on."),
    ("0.10", "AI Samples per Item", "AI responses collected per item."),
    ("1.1", "Number of Baseliners", "How many baseliners in total."),
    ("1.2", "Baseline Test Set Size", "Items the human baseline is run on."),
    ("1.2.1", "Baseline Test Set Sampling Strategy", "How the items were selected."),
    ("1.3", "Baseline Samples per Item", "Human responses per item."),
    ("1.4", "Items per Baseliner", "Items each baseliner responded to."),
    ("1.5", "Explicit Human/AI Adjustment", "Do instructions and items account for both humans and AI?"),
    ("1.6", "Iterative Design", "Pilot, expert validation of the items, etc."),
    ("1.7", "Amount of Effort", "Does the baseline control for effort (cost, time) by humans and AIs?"),
    ("1.8", "Power Analysis", "Was a power analysis done to set the baseline's size?"),
    ("1.8.1", "Minimum Detectable Effect Size", "If yes: the minimum detectable effect and power."),
    ("1.9", "Ethics Review", "Approved or exempted by an IRB or other ethics review?"),
    ("1.10", "Pre-Registration", "Was the design publicly pre-registered before running it?"),
    ("2.1", "Population of Interest Identification", "Does the report identify the population of interest?"),
    ("2.1.1", "Population of Interest Identification Criteria", "The factors scoping that population."),
    ("2.2", "Baseliner Sampling Strategy", "How the baseliners were recruited."),
    ("2.3", "Quality Control in Recruitment", "Pre-qualified or excluded while recruiting?"),
    ("2.3.1", "Quality Control Criteria for Baseliners", "The inclusion/exclusion criteria."),
    ("2.3.2", "Recruitment Exclusion Rate", "How many were excluded by them."),
    ("2.4", "Author Baseliners", "Did authors or the research team serve as baseliners?"),
    ("2.5", "Baseliner Train/Test Contamination", "Were baseliners exposed to the items before?"),
    ("2.6", "Baseliner Training", "Did baseliners receive training?"),
    ("2.6.1", "Baseliner Training Type", "What training."),
    ("2.6.2", "Baseliner Training Compensation", "Were they paid for the training?"),
    ("2.6.2.1", "Baseliner Training Compensation Amount", "How much."),
    ("2.7", "Baseliner Testing Compensation", "Were they paid for the baseline?"),
    ("2.7.1", "Baseliner Testing Compensation Amount", "How much."),
    ("2.7.2", "Baseliner Testing Performance Bonus", "Was a performance bonus offered?"),
    ("2.7.2.1", "Baseliner Testing Performance Bonus Amount", "How much, and how determined."),
    ("2.7.3", "Baseliner Testing Compensation Structure", "The same rates for every baseliner?"),
    ("2.7.3.1", "Baseliner Testing Compensation Structure Details", "If not equal: how set."),
    ("3.1", "Instrument Length", "Items completed in one sitting."),
    ("3.1.1", "Item Randomization", "Was the order randomized?"),
    ("3.2", "Quality Control in Execution", "Quality checks or exclusions during collection?"),
    ("3.2.1", "Quality Control in Execution Criteria", "What decided quality."),
    ("3.2.2", "Execution Exclusion Rate", "How many were excluded by them."),
    ("3.3", "UI Equivalence", "Did baseliners and AIs have the same UI for each item?"),
    ("3.3.1", "GUI vs. API", "Humans had a graphical UI, the AIs only API inputs?"),
    ("3.3.2", "UI Equivalence Adjustment", "If not: does the eval adjust for the differences?"),
    ("3.4", "Instruction Equivalence", "The same instructions/prompt for humans and AIs?"),
    ("3.4.1", "Instruction Equivalence Adjustment", "If not: does the eval adjust for the differences?"),
    ("3.5", "Tool Access Equivalence", "The same tools for humans and AIs?"),
    ("3.5.1", "Tool Access Equivalence Enforcement", "Oversight of the tools humans used?"),
    ("3.6", "Explanations", "Were explanations collected from the baseliners afterwards?"),
    ("4.1", "Statistical Significance", "Tested for significant AI-human differences?"),
    ("4.1.1", "Statistical Significance Test", "Which test."),
    ("4.2", "Uncertainty Estimate", "A measure of uncertainty for AI and human results?"),
    ("4.2.1", "Estimate Type", "Point, interval or distribution estimate."),
    ("4.3", "Evaluation Metric Equivalence", "The same metric for humans and AIs?"),
    ("4.4", "Evaluation Scoring Criteria Equivalence", "The same rubric for both?"),
    ("4.5", "Evaluation Scoring Method Equivalence", "The same scoring method for both?"),
    ("4.6", "Quality Control Robustness", "Robust to other exclusion criteria?"),
    ("5.1.1", "Reporting Sample Demographics", "Within-sample demographics reported?"),
    ("5.1.2", "Reporting Baseline Instructions", "The baseliners' instructions reported?"),
    ("5.1.3", "Reporting Time to Completion", "Time to completion reported?"),
    ("5.1.4", "AI Tool Versions", "AI tools and versions, if baseliners had AI access."),
    ("5.1.5", "Completion Rate", "How many were recruited but did not complete?"),
    ("5.2", "Baseline Data Availability", "Is the anonymized human data public?"),
    ("5.2.1", "Individual Baseline Data Availability", "Per baseliner?"),
    ("5.2.2", "Baseline Data Non-Availability Justification", "If not public: why."),
    ("5.3", "Experimental Materials Availability", "Are the experimental materials public?"),
    ("5.4", "Analysis Code Availability", "Is the analysis code public?"),
)
NUMBERS = tuple(number for number, _, _ in CHECKLIST)


def checklist_answers_errors(value: Any) -> list[str]:
    """Why a ``Study.checklist_answers`` value is malformed (empty when it is fine)."""
    if not isinstance(value, dict):
        return ['the checklist answers are an object of item number -> text, e.g. {"0.1": "Title"}']
    errors = [f"unknown checklist item {key!r}" for key in value if key not in NUMBERS]
    errors += [f"item {key}: the answer is text" for key, v in value.items() if not isinstance(v, str)]
    return errors
