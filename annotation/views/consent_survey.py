"""The consent, comprehension check and survey pages: plain forms, off the item pages' hot path.

``/work/`` shows them when the participation calls for them (consent, for a
participation that did not answer it at the entry link: a staff preview; the
comprehension check after consent; the survey before training or after the test step); their forms
post here, and every answer goes through annotation.services.admission.consent, .comprehension and
.survey, as the session API's do. A refused answer re-shows
the page with the reason and stores nothing.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from markdown_it import MarkdownIt

from annotation.models import Participation
from annotation.services.admission import closing, comprehension, consent, survey
from annotation.services.session import presentation
from annotation.services.texts import languages, study_texts
from annotation.web.worker_cookie import load_worker_state

# CommonMark without raw HTML: the researcher's text is escaped, and markdown-it refuses javascript: links.
_markdown = MarkdownIt("commonmark", {"html": False})


def render_markdown(text: str) -> SafeString:
    """The consent text as HTML (plain text reads as paragraphs)."""
    return mark_safe(_markdown.render(text))


def consent_page(
    request: HttpRequest, participation: Participation, context: dict[str, Any], *, error: str = "", status: int = 200
) -> HttpResponse:
    text = study_texts.consent_text(participation.study, get_language())
    context = {
        **context,
        "consent_html": render_markdown(text),
        "text_hash": consent.text_hash(text),
        "error": error,
    }
    return render(request, "worker/consent.html", context, status=status)


def _questions(participation: Participation, answers: dict[str, Any], errors: dict[str, str]) -> list[dict]:
    """The survey's questions with what the worker entered and the error of each, for the template."""
    rows = []
    for q in study_texts.texts_for(participation.study, get_language()).survey:
        value = answers.get(q["key"])
        chosen = value if isinstance(value, list) else [value] if value not in (None, "") else []
        rows.append(
            {
                **q,
                "value": "" if value is None or isinstance(value, list) else value,
                "chosen": chosen,
                "error": errors.get(q["key"], ""),
            }
        )
    return rows


def survey_page(
    request: HttpRequest,
    participation: Participation,
    context: dict[str, Any],
    *,
    answers: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    errors = errors or {}
    context = {
        **context,
        "questions": _questions(participation, answers or {}, errors),
        "form_error": errors.get(""),
        "placement": survey.due(participation),
    }
    return render(request, "worker/survey.html", context, status=status)


def comprehension_page(
    request: HttpRequest,
    participation: Participation,
    context: dict[str, Any],
    *,
    answers: dict[str, list[str]] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The check's questions under the instructions; after a failed first attempt, the wrong ones marked."""
    errors, answers = errors or {}, answers or {}
    failed = comprehension.last_failed(participation)
    wrong = set(failed.wrong) if failed is not None else set()
    questions = [
        {
            **q,
            "chosen": answers.get(q["key"], []),
            "error": errors.get(q["key"], ""),
            "was_wrong": q["key"] in wrong,
        }
        for q in participation.study.comprehension
    ]
    context = {
        **context,
        "questions": questions,
        "form_error": errors.get(""),
        "retry": failed is not None,
        "n_wrong": len(wrong),
    }
    return render(request, "worker/comprehension.html", context, status=status)


def _session(request: HttpRequest) -> tuple[Participation | None, dict[str, Any]]:
    worker = load_worker_state(request)
    if worker is None:
        return None, {}
    participation = worker.participation
    language = languages.activate_for_study(request, participation.study)
    return participation, {
        "participation": participation,
        "task": presentation.worker_task(participation.study, participation.task, language=language),
        "study": participation.study,
    }


def _home() -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("worker:home"))


@never_cache
@require_POST
def consent_answer(request: HttpRequest) -> HttpResponse:
    participation, context = _session(request)
    if participation is None:
        return render(request, "worker/no_session.html", status=403)
    try:
        closing.check_can_work(participation)
    except closing.StudyClosed:
        return _home()
    choice = request.POST.get("choice")
    if choice not in ("agree", "decline"):
        return consent_page(request, participation, context, error=_("Choose whether you agree."), status=400)
    try:
        if choice == "agree":
            consent.agree(participation, shown_hash=request.POST.get("text_hash", ""), language=get_language())
        else:
            consent.decline(participation)
    except consent.ConsentError as exc:
        if exc.code == "consent_changed":
            message = _("The consent text has changed since this page was shown. Please read it again.")
            return consent_page(request, participation, context, error=message, status=409)
    return _home()  # answered (now, or by an earlier click): /work/ shows what comes next


def _posted_answers(request: HttpRequest, participation: Participation) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for q in participation.study.survey:
        key = q["key"]
        if q["type"] == "multiple":
            answers[key] = request.POST.getlist(key)
        else:
            answers[key] = request.POST.get(key, "")
    return answers


@never_cache
@require_POST
def survey_answer(request: HttpRequest) -> HttpResponse:
    participation, context = _session(request)
    if participation is None:
        return render(request, "worker/no_session.html", status=403)
    if consent.required(participation) or survey.due(participation) is None:
        return _home()
    answers = _posted_answers(request, participation)
    try:
        survey.submit(participation=participation, answers=answers)
    except survey.InvalidSurveyAnswers as exc:
        return survey_page(request, participation, context, answers=answers, errors=exc.errors, status=400)
    except survey.SurveyNotDue:
        pass  # a double submit: the first one stands
    return _home()


@never_cache
@require_POST
def comprehension_answer(request: HttpRequest) -> HttpResponse:
    participation, context = _session(request)
    if participation is None:
        return render(request, "worker/no_session.html", status=403)
    try:
        closing.check_can_work(participation)
    except closing.StudyClosed:
        return _home()
    if consent.required(participation) or not comprehension.due(participation):
        return _home()
    answers = {q["key"]: request.POST.getlist(q["key"]) for q in participation.study.comprehension}
    try:
        comprehension.submit(participation=participation, answers=answers)
    except comprehension.InvalidComprehensionAnswers as exc:
        return comprehension_page(request, participation, context, answers=answers, errors=exc.errors, status=400)
    except comprehension.ComprehensionNotDue:
        pass  # a double submit: the first one stands
    return _home()  # passed: the start page; failed once: the check again; twice: the screened-out page
