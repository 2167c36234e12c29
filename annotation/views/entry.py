"""The entry link crowd platforms call: ``/join/<slug>/?<platform parameters>``.

GET shows the start page (what the study is, at a glance, and its consent text
with Agree / Decline, or a Start button) and writes nothing; the form posts to
the same link, and that POST is what takes a slot (annotation.services.admission.entry).
An admitted worker's participation id goes into a signed cookie
(annotation.web.worker_cookie) and the browser moves on to the worker pages at /work/. Every refusal is a page that says
why, with a status code to match, and writes nothing.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.utils.functional import Promise
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from annotation.models import Study
from annotation.services.admission import consent, entry
from annotation.services.admission.entry import Outcome
from annotation.services.session import presentation
from annotation.services.state.platforms import BadEntry, CompletionTarget, EntryParams, parse_entry
from annotation.services.texts import languages, study_texts
from annotation.views.consent_survey import render_markdown
from annotation.web import worker_cookie
from annotation.web.csp import csp_update
from tasks_app.texts import texts_for

StrOrPromise = str | Promise
WORKER_HOME = "/work/"  # the worker pages (URL name "worker:home"), by path so entry does not depend on them

# outcome -> (HTTP status, page title, message), translated when the page renders
_REFUSALS: dict[Outcome, tuple[int, StrOrPromise, StrOrPromise]] = {
    Outcome.FULL: (
        409,
        _("This study is full"),
        _(
            "All places in this study have been taken. Thank you for your interest: please return the study "
            "on your platform so that you are not penalised."
        ),
    ),
    Outcome.ALREADY_TOOK_PART: (
        403,
        _("You have already taken part in this task"),
        _(
            "Our records show that you have already taken part in this task. Each person can take part only "
            "once, so that the results stay valid. Thank you for your help: please return the study on your "
            "platform."
        ),
    ),
    Outcome.SLOT_RELEASED: (
        403,
        _("Your place in this study was released"),
        _(
            "Your place in this study was given to another participant after a long time without activity, "
            "and each person can take part in this task only once, so you cannot continue. If you think this is "
            "a mistake, please contact the researchers through your platform."
        ),
    ),
    Outcome.BLOCKED: (
        403,
        _("You cannot take part in this study"),
        _(
            "This account cannot take part in our studies. If you think this is a mistake, please contact the "
            "researchers."
        ),
    ),
    Outcome.DECLINED: (
        200,
        _("You have chosen not to take part"),
        _("Thank you for considering this study. Nothing more is asked of you, and no place was kept for you."),
    ),
}
# The same refusals where the platform has a code to go back with: the page then asks for that one thing,
# never both "return the study" and "go back with this code" (templates/worker/_paid.html gives the way).
_REFUSALS_WITH_CODE: dict[Outcome, StrOrPromise] = {
    Outcome.FULL: _(
        "All places in this study have been taken. Thank you for your interest: go back to your platform as "
        "shown below, so that you are not penalised."
    ),
    Outcome.ALREADY_TOOK_PART: _(
        "Our records show that you have already taken part in this task. Each person can take part only "
        "once, so that the results stay valid. Thank you for your help: go back to your platform as shown "
        "below."
    ),
}


def _message(
    request: HttpRequest,
    study: Study | None,
    *,
    status: int,
    title: StrOrPromise,
    message: StrOrPromise,
    completion: CompletionTarget | None = None,
) -> HttpResponse:
    context = {
        # Workers see the study's neutral title, never its name (which names the dataset).
        "study_title": presentation.title_for(study, language=get_language()) if study is not None else "",
        "title": title,
        "message": message,
        "completion": completion,
    }
    return render(request, "entry/message.html", context, status=status)


def _not_open(request: HttpRequest, study: Study) -> HttpResponse:
    if study.status == Study.Status.CLOSED:
        return _message(
            request,
            study,
            status=410,
            title=_("This study has closed"),
            message=_("This study is no longer accepting participants. Thank you for your interest."),
        )
    if study.status == Study.Status.PAUSED:
        return _message(
            request,
            study,
            status=403,
            title=_("This study is paused"),
            message=_("This study is not accepting new participants at the moment. Please try again later."),
        )
    return _message(
        request,
        study,
        status=403,
        title=_("This study has not started yet"),
        message=_("This study is not open for participants yet."),
    )


def _start_page(
    request: HttpRequest, study: Study, *, language: str, error: StrOrPromise = "", status: int = 200
) -> HttpResponse:
    """What the study is, before any slot: at a glance, the task, and the consent text or a Start button."""
    n_train, n_test = presentation.most_items(study)
    context = {
        "study": study,
        "task": presentation.worker_task(study, language=language),
        "n_train": n_train,
        "n_test": n_test,
        "estimate": presentation.estimate(study, n_train + n_test),
        "action": request.get_full_path(),
        "error": error,
    }
    if consent.is_asked(study):
        text = study_texts.consent_text(study, language)
        context.update(consent_html=render_markdown(text), text_hash=consent.text_hash(text))
    return render(request, "entry/start.html", context, status=status)


def _take_part(
    request: HttpRequest, study: Study, params: EntryParams, language: str
) -> HttpResponse | entry.JoinResult:
    """The start page's form: agree or decline the consent text, or Start; a page to show again, or the result."""
    choice = request.POST.get("choice")
    asked = consent.is_asked(study)
    if choice not in (("agree", "decline") if asked else ("start",)):
        error = _("Choose whether you agree.") if asked else _("Press Take part to join the study.")
        return _start_page(request, study, language=language, error=error, status=400)
    if choice == "decline":
        return entry.decline(study=study, params=params)
    try:
        return entry.join_study(
            study=study, params=params, consent_hash=request.POST.get("text_hash"), language=language
        )
    except consent.ConsentError:  # the text changed since the page was shown
        message = _("The consent text has changed since this page was shown. Please read it again.")
        return _start_page(request, study, language=language, error=message, status=409)


@xframe_options_exempt  # MTurk shows external questions, and their preview, in an iframe; this page only links out
# ... and only MTurk may frame it (CSP, not X-Frame-Options); a full study's page may post the HIT back to MTurk.
@csp_update(frame_ancestors=settings.MTURK_ORIGINS, form_action=["'self'", *settings.MTURK_ORIGINS])
@never_cache
# No CSRF token: the entry trusts no cookie (the link's parameters name the worker), and anyone who can make
# a browser post here could as well open the link, which is how a worker cookie is given anyway.
@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def join(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("task"), slug=slug)
    language = languages.activate_for_study(request, study)
    try:
        params = parse_entry(request.GET, raw_query=request.META.get("QUERY_STRING", ""))
    except BadEntry as exc:
        return _message(
            request,
            study,
            status=400,
            title=_("This link is incomplete"),
            message=gettext("%(problem)s Please open the study from your platform's page again.") % {"problem": exc},
        )
    if request.method == "POST" and not params.preview:
        taken = _take_part(request, study, params, language)
        if isinstance(taken, HttpResponse):
            return taken
        result = taken
    else:
        result = entry.look(study=study, params=params)
    if result.outcome == Outcome.PREVIEW:
        texts = texts_for(study.task, language, labels=())
        task = presentation.worker_task(study, language=language)
        return render(request, "entry/preview.html", {"study": study, "task": task, "texts": texts})
    if result.outcome == Outcome.NOT_OPEN:
        return _not_open(request, result.study)
    in_iframe = request.headers.get("Sec-Fetch-Dest") == "iframe"
    if result.outcome == Outcome.START:
        if in_iframe:  # the worker cookie would not stick in MTurk's frame: take part in a tab of their own
            return render(request, "entry/open_in_tab.html", {"study": study, "link": request.get_full_path()})
        return _start_page(request, study, language=language)
    if result.admitted:
        assert result.participation is not None, "an admitted worker has a participation"
        if in_iframe:
            # MTurk shows the HIT in an iframe, where browsers do not send our (SameSite=Lax) worker
            # cookie: the worker continues in a tab of their own, where the same link resumes the slot.
            context = {"study": study, "link": request.get_full_path(), "reserved": True}
            return render(request, "entry/open_in_tab.html", context)
        response = HttpResponseRedirect(WORKER_HOME)
        worker_cookie.remember(response, result.participation.pk)
        languages.remember_for_study(response, study)
        return response
    status, title, message = _REFUSALS[result.outcome]
    completion = entry.refusal_target(result=result, params=params)
    if completion is not None and (completion.code or completion.kind in ("redirect", "form_post")):
        message = _REFUSALS_WITH_CODE.get(result.outcome, message)
    return _message(request, study, status=status, title=title, message=message, completion=completion)
