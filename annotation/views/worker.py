"""The worker's pages under /work/: one entry point that shows what the state calls for.

The pages only frame the work; everything the worker does goes through the
JSON session API (annotation.api.session), driven by static/worker/*.js
(worker.js; on the item page also context.js, item.js, spans.js, reveal.js).
The participation comes from the worker cookie set by the entry link only.
The pages keep X-Frame-Options DENY and CSP frame-ancestors 'none' (they have
actions): MTurk workers are sent from the HIT's iframe to a tab of their own by
the entry view, the only page MTurk may frame.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET

from annotation.models import Participation
from annotation.services.admission import closing, comprehension, consent, survey
from annotation.services.session import presentation, timing
from annotation.services.session.session_payloads import completion_payload
from annotation.services.texts import languages
from annotation.views import consent_survey
from annotation.web.csp import csp_update
from annotation.web.worker_cookie import load_worker_state
from tasks_app.models import Example
from tasks_app.texts import texts_for

State = Participation.State

# The keys are the same in every language; what they do is translated when the page renders.
SHORTCUTS_CLASSIFICATION = [
    ("1 … {n}", _("choose a label")),
    ("H", _("help for the chosen label")),
    ("Q W E R T", _("confidence 1 … 5")),
    ("Enter", _("submit / next")),
]
# A task whose items bring their own options (CHID's idioms): options, not labels, and no task-wide help.
SHORTCUTS_OPTIONS = [
    ("1 … {n}", _("choose an option")),
    ("Q W E R T", _("confidence 1 … 5")),
    ("Enter", _("submit / next")),
]
# With more labels than presentation.MANY_LABELS the page offers a searchable list instead of keys 1 … n.
SHORTCUTS_LABEL_SEARCH = ("↑ ↓ Enter", _("type part of a label, then choose it"))
SHORTCUTS_SPANS = [
    (_("Click"), _("select a word (a drag: several words)")),
    ("← →", _("move the word cursor")),
    ("Shift + ← →", _("extend the selection")),
    ("A", _("add the selection as a span")),
    ("M", _("merge two spans side by side")),
    ("Backspace", _("remove the last span")),
    ("N", _("no answer (empty set)")),
    ("Q W E R T", _("confidence 1 … 5")),
    ("Enter", _("submit / next")),
]
SKIP_SHORTCUT = ("S", _("skip this item (press twice)"))

CONFIDENCE_SCALE = [
    (1, _("Strongly disagree"), "Q"),
    (2, _("Disagree"), "W"),
    (3, _("Neutral"), "E"),
    (4, _("Agree"), "R"),
    (5, _("Strongly agree"), "T"),
]


# The finish and excluded pages post an MTurk HIT to turkSubmitTo (www.mturk.com or the sandbox only).
@csp_update(form_action=["'self'", *settings.MTURK_ORIGINS])
@never_cache
@ensure_csrf_cookie
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    worker = load_worker_state(request)
    if worker is None:
        return render(request, "worker/no_session.html", status=403)
    participation = worker.participation
    language = languages.activate_for_study(request, participation.study)
    try:
        closing.check_can_work(participation)
    except closing.StudyClosed:
        return _closed(request, participation)
    # Templates read ``task`` as the worker sees it: a neutral title, never the dataset's name, its texts
    # in the page's language (tasks_app.texts via services.session.presentation).
    context = {
        "participation": participation,
        "task": presentation.worker_task(participation.study, participation.task, language=language),
        "study": participation.study,
        "texts": texts_for(participation.task, language, labels=()),
    }
    deadline = closing.grace_deadline(participation.study)
    if deadline is not None:
        context["closes_at"] = closing.format_deadline(deadline)
    state = participation.state
    if consent.required(participation):
        return consent_survey.consent_page(request, participation, context)
    if comprehension.due(participation):
        return consent_survey.comprehension_page(request, participation, context)
    if survey.due(participation) is not None:
        return consent_survey.survey_page(request, participation, context)
    if state == State.CLAIMED:
        n_train, n_test = presentation.item_counts(participation.condition)
        context.update(
            n_train=n_train,
            n_test=n_test,
            shots=participation.condition.shots,
            estimate=presentation.estimate(participation.study, n_train + n_test),
        )
        return render(request, "worker/start.html", context)
    if state in (State.TRAINING, State.TEST):
        shortcuts = SHORTCUTS_CLASSIFICATION if participation.task.is_classification else SHORTCUTS_SPANS
        if (
            participation.task.is_classification
            and Example.objects.filter(task_id=participation.task_id).exclude(choices=[]).exists()
        ):
            shortcuts = SHORTCUTS_OPTIONS
        if state == State.TEST:
            shortcuts = [*shortcuts[:-1], SKIP_SHORTCUT, shortcuts[-1]]
        n_labels = participation.task.labels.count() if participation.task.is_classification else 0
        if n_labels > presentation.MANY_LABELS:
            shortcuts = [SHORTCUTS_LABEL_SEARCH, *shortcuts[1:]]
        context.update(
            items_base=reverse("session:item", args=[0]).removesuffix("0/"),
            shortcuts=[(str(keys).format(n=n_labels), what) for keys, what in shortcuts],
            heartbeat_seconds=timing.HEARTBEAT_SECONDS,
            confidence_scale=CONFIDENCE_SCALE,
            many_labels=presentation.MANY_LABELS,
        )
        return render(request, "worker/item.html", context)
    if state in (State.EXCLUDED, State.ABANDONED) and closing.was_closed_out(participation):
        return _closed(request, participation)
    if state == State.EXCLUDED:
        # Excluded workers are paid for their time: they submit on their platform with a code too.
        context["completion"] = completion_payload(participation)
        return render(request, "worker/excluded.html", context)
    if state == State.DECLINED:
        context["completion"] = completion_payload(participation)
        return render(request, "worker/declined.html", context)
    if state == State.COMPLETED:
        context["completion"] = completion_payload(participation)
        return render(request, "worker/finish.html", context)
    return render(request, "worker/abandoned.html", context, status=410)


def _closed(request: HttpRequest, participation: Participation) -> HttpResponse:
    """The study closed before this worker finished: a worker who had started gets their completion code
    and the way back to their platform (paid for their time); one who had not is asked to return it."""
    context = {
        "participation": participation,
        "task": presentation.worker_task(participation.study, participation.task, language=get_language()),
        "study": participation.study,
        "completion": completion_payload(participation),
    }
    return render(request, "worker/closed.html", context)
