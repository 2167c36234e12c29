"""Where each section of the human-evaluation statement answers the reporting standards (no Django).

``HEDS_QUESTIONS``: the Human Evaluation Datasheet 3.0 questions (Belz and Thomson, 2024; numbered as
in the HEDS 3.0 form at nlp-heds.github.io, texts abridged) that a crowd study of this platform
answers from stored facts.
``ACL_CHECKLIST``: section D of the ACL Responsible NLP Research checklist (human subjects).
``SECTION_STANDARDS``: per statement section (its title), the questions it answers. The JSON form of
the statement (``statement.statement_datasheet``) and its schema (docs/schemas/statement.schema.json)
carry both.
"""

from __future__ import annotations

import re

HEDS_VERSION = "3.0"

HEDS_QUESTIONS = {
    "3.1.1": "How many system outputs (or other evaluation items) are evaluated per system?",
    "3.1.2": "How are the evaluation items selected for inclusion?",
    "3.2.1": "How many evaluators are there in this experiment?",
    "3.2.2.2": "Did participants receive any form of payment?",
    "3.2.3": "How are evaluators recruited?",
    "3.2.4": "What training and/or practice are evaluators given before the evaluation itself?",
    "3.2.5": "What other characteristics do the evaluators have?",
    "3.3.2": "By what medium are responses collected?",
    "3.3.3.1": "What types of quality assurance methods are used?",
    "3.3.3.2": "What methods are used for each type of quality assurance?",
    "3.3.4.1": "Where can the form or interface shown to participants be viewed?",
    "3.3.4.2": "What types of information are evaluators shown when carrying out evaluations?",
    "3.3.5": "How free are evaluators regarding when and how quickly to carry out evaluations?",
    "3.3.7": "What are the conditions in which evaluators carry out the evaluations?",
    "4.3.7": "What is the verbatim question, prompt or instruction given to evaluators?",
    "4.3.8": "What form of response elicitation is used?",
    "4.3.9": "How are raw responses aggregated or otherwise processed to obtain the reported scores?",
    "4.3.10": "What methods are used for determining effect size and significance of findings?",
    "4.3.11.1": "How was the inter-annotator agreement between evaluators measured?",
    "4.3.11.2": "What was the inter-annotator agreement score?",
    "5.1": "Which research ethics committee has approved the evaluation experiment?",
}

ACL_CHECKLIST = {
    "D1": "Full text of instructions given to participants, with screenshots.",
    "D2": "How participants were recruited and paid, and whether the pay is adequate.",
    "D3": "Whether and how consent was obtained from the participants.",
    "D4": "Whether the protocol was approved (or found exempt) by an ethics review board.",
    "D5": "Basic demographic and geographic characteristics of the participants.",
}

# Section title -> (HEDS question ids, ACL checklist ids).
SECTION_STANDARDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Platform": (("3.2.3",), ("D2",)),
    "Workers": (("3.2.1",), ()),
    "Recruitment": (("3.2.3",), ("D2",)),
    "Sample": (("3.1.1", "3.1.2"), ()),
    "Presentation": (("3.3.2", "3.3.4.2", "3.3.7"), ()),
    "Consent": ((), ("D3",)),
    "Ethics approval": (("5.1",), ("D4",)),
    "Data retention": ((), ("D3",)),
    "Instructions": (("4.3.7", "4.3.8", "3.3.4.2"), ("D1",)),
    "Training and filter": (("3.2.4", "3.3.3.1", "3.3.3.2"), ()),
    "Abandonment": (("3.3.5",), ()),
    "Comprehension check": (("3.2.4", "3.3.3.1", "3.3.3.2"), ("D1",)),
    "Attention checks": (("3.3.3.1", "3.3.3.2"), ()),
    "Integrity": (("3.3.3.1", "3.3.3.2"), ()),
    "AI tools": (("3.3.3.1", "3.3.3.2", "3.3.4.2"), ("D1",)),
    "Survey": (("3.2.5",), ()),
    "Demographics": (("3.2.5",), ("D5",)),
    "Time": (("3.3.5",), ()),
    "Pay": (("3.2.2.2",), ("D2",)),
    "Pay adequacy": (("3.2.2.2",), ("D2",)),
    "Metric": (("4.3.9", "4.3.10"), ()),
    "Agreement": (("4.3.11.1", "4.3.11.2"), ()),
    "Best individual, mean and majority": (("4.3.9", "4.3.10"), ()),
    "Robustness to the exclusion rules": (("3.3.3.1", "3.3.3.2"), ()),
    "Pre-registration": (("4.3.9", "4.3.10"), ()),
    "Appendix": (("3.3.4.1",), ("D1",)),
}


def field_key(title: str) -> str:
    """A section's key in the JSON form: "Pay adequacy" -> "pay_adequacy"."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")
