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


class _LinesField(forms.CharField):
    """A JSON list edited as lines: ``to_lines`` shows it, ``parse`` reads the lines back; a JSON list posted
    as such is still understood. Subclasses name the help text and what the list is (for the error)."""

    help = ""
    what = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, help_text=self.help, **kwargs)

    @staticmethod
    def to_lines(value: Any, /) -> str:
        raise NotImplementedError

    @staticmethod
    def parse(text: str, /) -> list[dict[str, Any]]:
        raise NotImplementedError

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip().startswith("[") else value
            except ValueError:
                return value
        return value if isinstance(value, str) else self.to_lines(value)

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value) or ""
        if text.lstrip().startswith("["):  # the JSON list itself is still understood
            try:
                return json.loads(text)
            except ValueError:
                raise ValidationError(
                    f"Enter a valid JSON list, or write the {self.what} as lines (see below)."
                ) from None
        return self.parse(text)


class SurveyField(_LinesField):
    """``Study.survey`` edited as lines (``SURVEY_HELP``), stored as the list of questions."""

    widget = forms.Textarea(attrs={"rows": 6, "cols": 100, "class": "survey-lines"})
    help, what = SURVEY_HELP, "survey"
    to_lines, parse = staticmethod(survey_lines), staticmethod(parse_survey)


COMPREHENSION_HELP = (
    "One question per line: <code>key | question | options; separated; by; semicolons</code>, each right "
    "option marked with a leading <code>*</code>; then <code>| multiple</code> when a worker ticks every "
    "right option instead of choosing one. E.g.<br>"
    "<code>what | What do you mark in each sentence? | *People's names; Places; Dates</code><br>"
    "<code>skip | Which items may you skip? | None; *Unclear items; *Very long items; Short items | multiple</code><br>"
    "Empty: no comprehension check."
)


def comprehension_lines(check: Any) -> str:
    """A study's comprehension check (a list of questions) as the lines the form edits."""
    lines = []
    for q in check if isinstance(check, list) else []:
        if not isinstance(q, dict):
            continue
        correct = set(q.get("correct") or [])
        options = "; ".join(f"*{o}" if o in correct else str(o) for o in q.get("options") or [])
        parts = [str(q.get("key", "")), str(q.get("label", "")), options]
        if q.get("multiple"):
            parts.append("multiple")
        lines.append(" | ".join(parts))
    return "\n".join(lines)


def parse_comprehension(text: str) -> list[dict[str, Any]]:
    """The lines back to the check's questions; a malformed line is a ValidationError naming it. (What a
    question may be, its options and right answers, the model checks: annotation.protocol.comprehension.)"""
    questions = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"Comprehension check, line {number}"
        parts = [part.strip() for part in line.split("|")]
        if len(parts) not in (3, 4) or not all(parts[:3]):
            raise ValidationError(f"{where}: write key | question | options [| multiple], not {line.strip()!r}.")
        if len(parts) == 4 and parts[3] != "multiple":
            raise ValidationError(f"{where}: the fourth part is the word multiple or nothing, not {parts[3]!r}.")
        options = [o.strip() for o in parts[2].split(";") if o.strip()]
        question: dict[str, Any] = {
            "key": parts[0],
            "label": parts[1],
            "options": [o.lstrip("*").strip() for o in options],
            "correct": [o.lstrip("*").strip() for o in options if o.startswith("*")],
        }
        if len(parts) == 4:
            question["multiple"] = True
        questions.append(question)
    return questions


class ComprehensionField(_LinesField):
    """``Study.comprehension`` edited as lines (``COMPREHENSION_HELP``), stored as the list of questions."""

    widget = forms.Textarea(attrs={"rows": 4, "cols": 100, "class": "comprehension-lines"})
    help, what = COMPREHENSION_HELP, "check"
    to_lines, parse = staticmethod(comprehension_lines), staticmethod(parse_comprehension)


# The texts a study translates (annotation.protocol.translations), each with how the form edits it.
TRANSLATED_TEXTS = (
    ("worker_title", "Title workers see", "input"),
    ("worker_description", "Description workers see", "textarea"),
    ("consent_text", "Consent text (Markdown)", "textarea"),
    ("survey", "Survey questions: key | question | options; in; the; survey's; order", "textarea"),
)


def translated_survey_lines(survey: Any) -> str:
    if not isinstance(survey, dict):
        return ""
    lines = []
    for key, texts in survey.items():
        texts = texts if isinstance(texts, dict) else {}
        parts = [str(key), str(texts.get("label", ""))]
        if texts.get("options"):
            parts.append("; ".join(str(o) for o in texts["options"]))
        lines.append(" | ".join(parts))
    return "\n".join(lines)


def parse_translated_survey(text: str, language: str) -> dict[str, dict[str, Any]]:
    questions: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        if len(parts) not in (2, 3) or not parts[0]:
            raise ValidationError(
                f"Texts in {language}, survey line {number}: write key | question [| options], not {line.strip()!r}."
            )
        own: dict[str, Any] = {"label": parts[1]} if parts[1] else {}
        if len(parts) == 3 and parts[2]:
            own["options"] = [o.strip() for o in parts[2].split(";") if o.strip()]
        questions[parts[0]] = own
    return questions


class TranslationsWidget(forms.Widget):
    """``Study.translations`` as one group of fields per language the site ships (``settings.LANGUAGES``):
    the title, description and consent text workers see, and the survey's questions as lines. Posted as
    ``<name>__<language>__<text>``; a language left empty is left out."""

    def _languages(self) -> list[tuple[str, str]]:
        from django.conf import settings

        return [(code, str(label)) for code, label in settings.LANGUAGES]

    def render(self, name: str, value: Any, attrs: dict | None = None, renderer: Any = None) -> SafeString:
        if isinstance(value, str):
            try:
                value = json.loads(value or "{}")
            except ValueError:
                value = {}
        value = value if isinstance(value, dict) else {}
        groups = []
        for code, label in self._languages():
            texts = value.get(code) if isinstance(value.get(code), dict) else {}
            rows = []
            for field, caption, kind in TRANSLATED_TEXTS:
                current = texts.get(field, "")
                if field == "survey":
                    current = translated_survey_lines(current) if not isinstance(current, str) else current
                control = (
                    format_html('<input type="text" name="{}__{}__{}" value="{}" size="60" lang="{}" aria-label="{}">',
                                name, code, field, current, code, caption)
                    if kind == "input"
                    else format_html('<textarea name="{}__{}__{}" rows="3" cols="80" lang="{}" aria-label="{}">{}'
                                     "</textarea>", name, code, field, code, caption, current)
                )  # fmt: skip
                rows.append(format_html("<p><label>{}</label><br>{}</p>", caption, control))
            groups.append(
                format_html(
                    '<fieldset class="translation" lang="{}"><legend>{} ({})</legend>{}</fieldset>',
                    code,
                    label,
                    code,
                    format_html_join("", "{}", ((row,) for row in rows)),
                )
            )
        return format_html(
            '<div class="translations" id="{}">{}</div>',
            (attrs or {}).get("id", name),
            format_html_join("", "{}", ((group,) for group in groups)),
        )

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        if name in data and not any(key.startswith(f"{name}__") for key in data):
            return data[name]  # a JSON object posted as such (scripts, older forms) is still understood
        texts: dict[str, dict[str, str]] = {}
        for code, _ in self._languages():
            for field, _caption, _kind in TRANSLATED_TEXTS:
                text = (data.get(f"{name}__{code}__{field}") or "").strip()
                if text:
                    texts.setdefault(code, {})[field] = text
        return texts

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return name not in data and not any(key.startswith(f"{name}__") for key in data)


class TranslationsField(forms.Field):
    """``Study.translations`` from ``TranslationsWidget``: the survey lines become the documented shape
    (``{language: {field: text, "survey": {key: {"label", "options"}}}}``); the model checks the rest."""

    widget = TranslationsWidget

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", "Only what differs from the study's own texts; a language left empty is "
                          "shown the study's own texts.")  # fmt: skip
        super().__init__(required=False, **kwargs)

    def to_python(self, value: Any) -> dict[str, Any]:
        if isinstance(value, str):
            if not value.strip():
                return {}
            try:
                value = json.loads(value)
            except ValueError:
                raise ValidationError("Enter a valid JSON object, or fill in the fields per language.") from None
        if not isinstance(value, dict):
            return value
        translations = {}
        for code, texts in value.items():
            if isinstance(texts, dict) and isinstance(texts.get("survey"), str):
                texts = {**texts, "survey": parse_translated_survey(texts["survey"], code)}
            translations[code] = texts
        return translations
