"""The entry link crowd platforms call: ``GET /join/<slug>/?<platform parameters>``.

An admitted worker's participation id goes into a signed cookie
(annotation.worker_cookie) and the browser moves on to the worker pages at /work/. Every refusal is a page that says
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
from django.views.decorators.http import require_GET

from annotation import worker_cookie
from annotation.csp import csp_update
from annotation.models import Study
from annotation.services import entry, languages, presentation
from annotation.services.entry import Outcome
from annotation.services.platforms import BadEntry, CompletionTarget, parse_entry
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


@xframe_options_exempt  # MTurk shows external questions, and their preview, in an iframe; this page has no actions
# ... and only MTurk may frame it (CSP, not X-Frame-Options); a full study's page may post the HIT back to MTurk.
@csp_update(frame_ancestors=settings.MTURK_ORIGINS, form_action=["'self'", *settings.MTURK_ORIGINS])
@never_cache
@require_GET
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
    result = entry.join_study(study=study, params=params)
    if result.outcome == Outcome.PREVIEW:
        texts = texts_for(study.task, language, labels=())
        task = presentation.worker_task(study, language=language)
        return render(request, "entry/preview.html", {"study": study, "task": task, "texts": texts})
    if result.outcome == Outcome.NOT_OPEN:
        return _not_open(request, result.study)
    if result.admitted:
        assert result.participation is not None, "an admitted worker has a participation"
        if request.headers.get("Sec-Fetch-Dest") == "iframe":
            # MTurk shows the HIT in an iframe, where browsers do not send our (SameSite=Lax) worker
            # cookie: the worker continues in a tab of their own, where the same link resumes the slot.
            return render(request, "entry/open_in_tab.html", {"study": study, "link": request.get_full_path()})
        response = HttpResponseRedirect(WORKER_HOME)
        worker_cookie.remember(response, result.participation.pk)
        languages.remember_for_study(response, study)
        return response
    status, title, message = _REFUSALS[result.outcome]
    completion = entry.refusal_target(result=result, params=params)
    return _message(request, study, status=status, title=title, message=message, completion=completion)
