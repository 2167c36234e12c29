"""Form widgets of the study admin: the outcome codes as a form (one row per outcome) and the survey as
a text area with its format shown, so that researchers edit neither as raw JSON."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotation.protocol.outcomes import Outcome

OUTCOME_HELP = {
    Outcome.COMPLETED: "finished the study (paid)",
    Outcome.SCREENED_OUT: "excluded by the training filter or an admin",
    Outcome.ATTENTION_FAILED: "excluded for failed attention checks",
    Outcome.DECLINED: "declined the consent text",
    Outcome.FULL: "found no free slot",
    Outcome.ALREADY_TOOK_PART: "had taken part already",
}


class OutcomeCodesWidget(forms.Widget):
    """``Study.outcome_codes`` as a table: per outcome a code and an optional return URL.

    Posted as ``<name>__<outcome>__code`` and ``__url``; an empty code is left out, so the study generates
    one on save (``annotation.protocol.outcomes.with_defaults``)."""

    @staticmethod
    def _codes(value: Any) -> dict:
        if isinstance(value, str):
            try:
                value = json.loads(value or "{}")
            except ValueError:
                return {}
        return value if isinstance(value, dict) else {}

    def render(self, name: str, value: Any, attrs: dict | None = None, renderer: Any = None) -> SafeString:
        codes = self._codes(value)
        rows = format_html_join(
            "",
            '<tr><th scope="row">{}<br><span class="help">{}</span></th>'
            '<td><input type="text" name="{}__{}__code" value="{}" maxlength="64" size="12" class="outcome-code" '
            'aria-label="{} code"></td>'
            '<td><input type="url" name="{}__{}__url" value="{}" maxlength="500" size="40" class="outcome-url" '
            'aria-label="{} return URL"></td></tr>',
            (
                (
                    outcome.value,
                    OUTCOME_HELP.get(outcome, ""),
                    name,
                    outcome.value,
                    (codes.get(outcome.value) or {}).get("code", ""),
                    outcome.value,
                    name,
                    outcome.value,
                    (codes.get(outcome.value) or {}).get("url", ""),
                    outcome.value,
                )
                for outcome in Outcome
            ),
        )
        return format_html(
            '<table class="outcome-codes" id="{}"><thead><tr><th>Outcome</th><th>Code</th>'
            "<th>Return URL (optional)</th></tr></thead><tbody>{}</tbody></table>",
            (attrs or {}).get("id", name),
            rows,
        )

    def value_from_datadict(self, data: Any, files: Any, name: str) -> str:
        if name in data and not any(key.startswith(f"{name}__") for key in data):
            return data[name]  # a JSON object posted as such (scripts, older forms) is still understood
        codes = {}
        for outcome in Outcome:
            code = (data.get(f"{name}__{outcome.value}__code") or "").strip()
            url = (data.get(f"{name}__{outcome.value}__url") or "").strip()
            if code or url:
                codes[outcome.value] = {"code": code, "url": url}
        return json.dumps(codes)  # the JSONField's form field parses it and the model checks it

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return name not in data and not any(key.startswith(f"{name}__") for key in data)


SURVEY_HELP = (
    "One question per line: <code>key | kind | question | options; separated; by; semicolons</code>, then "
    "optionally <code>| required=no</code>, <code>| min=18</code>, <code>| max=99</code>. The kind is single, "
    "multiple, number or text (options only for single and multiple). E.g.<br>"
    "<code>age | number | How old are you? | min=18 | max=99</code><br>"
    "<code>native | single | Is English your first language? | Yes; No</code><br>"
    "Empty: no survey. The study's texts in other languages translate the questions."
)
_SETTINGS = ("required", "min", "max")


def survey_lines(survey: Any) -> str:
    """A study's survey (a list of questions) as the lines the form edits."""
    lines = []
    for q in survey if isinstance(survey, list) else []:
        if not isinstance(q, dict):
            continue
        parts = [str(q.get("key", "")), str(q.get("type", "")), str(q.get("label", ""))]
        if q.get("options"):
            parts.append("; ".join(str(o) for o in q["options"]))
        if q.get("required") is False:
            parts.append("required=no")
        parts += [f"{bound}={q[bound]}" for bound in ("min", "max") if q.get(bound) is not None]
        lines.append(" | ".join(parts))
    return "\n".join(lines)


def _setting(name: str, raw: str, where: str) -> Any:
    if name == "required":
        if raw.lower() not in ("yes", "no"):
            raise ValidationError(f"{where}: required=yes or required=no, not {raw!r}.")
        return raw.lower() == "yes"
    try:
        number = float(raw)
    except ValueError:
        raise ValidationError(f"{where}: {name} is a number, not {raw!r}.") from None
    return int(number) if number.is_integer() else number


def parse_survey(text: str) -> list[dict[str, Any]]:
    """The lines back to the survey's questions; a malformed line is a ValidationError naming it.
    (What a question may be, its kinds and bounds, the model checks: annotation.protocol.survey.)"""
    questions = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"Survey, line {number}"
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 3 or not all(parts[:3]):
            raise ValidationError(f"{where}: write key | kind | question [| options], not {line.strip()!r}.")
        question: dict[str, Any] = {"key": parts[0], "type": parts[1], "label": parts[2]}
        for part in parts[3:]:
            name, sep, raw = (p.strip() for p in part.partition("="))
            if sep and name in _SETTINGS:
                question[name] = _setting(name, raw, where)
            elif part:
                question["options"] = [o.strip() for o in part.split(";") if o.strip()]
        questions.append(question)
    return questions


class SurveyField(forms.CharField):
    """``Study.survey`` edited as lines (``SURVEY_HELP``), stored as the list of questions."""

    widget = forms.Textarea(attrs={"rows": 6, "cols": 100, "class": "survey-lines"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, help_text=SURVEY_HELP, **kwargs)

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip().startswith("[") else value
            except ValueError:
                return value
        return value if isinstance(value, str) else survey_lines(value)

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value) or ""
        if text.lstrip().startswith("["):  # the JSON list itself is still understood
            try:
                return json.loads(text)
            except ValueError:
                raise ValidationError("Enter a valid JSON list, or write the survey as lines (see below).") from None
        return parse_survey(text)
