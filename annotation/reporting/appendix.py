"""The statement's appendix: the exact texts a study's workers saw, in each language it shows.

``appendix_texts`` writes them as Markdown, taken from the same functions the worker pages use
(``presentation.worker_task``, ``study_texts.texts_for``, ``tasks_app.texts.texts_for``), so the
appendix cannot drift from the pages. The screenshots of the pages are taken by the
``study_appendix`` command (a browser is an entry point's business).
"""

from __future__ import annotations

from django.conf import settings
from django.utils import translation

from annotation.models import Study
from annotation.reporting.statement_design import shown_languages, text_languages
from annotation.services.session import presentation
from annotation.services.texts import study_texts
from tasks_app.texts import texts_for


def _block(text: str) -> list[str]:
    """A text exactly as stored, fenced so that its own Markdown is shown, not rendered."""
    fence = "````" if "```" in text else "```"
    return [fence, text.rstrip("\n"), fence, ""]


def language_texts(study: Study, language: str) -> list[str]:
    names = dict(settings.LANGUAGES)
    with translation.override(language):
        task = presentation.worker_task(study, language=language)
    own = study_texts.texts_for(study, language)
    lines = [f"## {names.get(language, language)} ({language})", "", "### Title", "", *_block(task.name)]
    lines += ["### Description (on every page)", "", *_block(task.description or "(none)")]
    if task.instructions.strip():
        lines += ["### Instructions (beside each item)", "", *_block(task.instructions)]
    if task.ai_instruction.strip():
        lines += ["### Instruction on AI tools (with the instructions)", ""]
        if language in study_texts.ai_instruction_languages(study):
            lines += _block(task.ai_instruction)
        else:  # as with the consent: never a copy under another language's heading
            lines += [
                f"None in this language: these pages showed the {study.language or settings.LANGUAGE_CODE} text.",
                "",
            ]
    if task.is_classification:
        labels = list(study.task.labels.order_by("position", "pk"))
        helps = texts_for(study.task, language, labels=labels).labels
        lines += ["### Labels", ""]
        for label in labels:
            help_ = helps[label.name]
            lines += [f"- **{label.name}**: {help_.definition or '(no definition)'}"]
            if help_.example:
                lines += [f"  Example: {help_.example}"]
        lines.append("")
    exists = text_languages(study)
    fallback = study.language or settings.LANGUAGE_CODE
    if study.consent_required:
        if language in exists.get("consent text", [language]):
            lines += ["### Consent text", "", *_block(own.consent_text)]
        else:  # never a copy under another language's heading: say which text these pages showed
            lines += ["### Consent text", "", f"None in this language: these pages showed the {fallback} text.", ""]
    if own.survey and language not in exists.get("survey", [language]):
        lines += ["### Survey", "", f"None in this language: these pages showed the {fallback} survey.", ""]
    elif own.survey:
        lines += [f"### Survey ({study.get_survey_placement_display().lower()})", ""]
        for q in own.survey:
            mark = " (demographic)" if q.get("demographic") else ""
            options = "; ".join(text for _, text in q.get("choices", []))
            lines.append(f"- {q['label']} [{q['type']}]{mark}" + (f": {options}" if options else ""))
        lines.append("")
    return lines


def appendix_texts(study: Study) -> str:
    lines = [
        f"# Appendix: what the workers of {study.task.name} saw",
        "",
        "The texts below are exactly as stored and shown (Markdown in them is shown as written).",
        "",
    ]
    for language in shown_languages(study):
        lines += language_texts(study, language)
    return "\n".join(lines).rstrip("\n") + "\n"
