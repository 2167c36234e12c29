"""The worker's session as JSON: what the worker page does, scripted clients can do.

Authentication is the worker's signed cookie (annotation.worker_cookie): the
entry link's form (``POST /join/<slug>/?worker_id=...`` with ``choice=start``, or ``agree``) sets it to
the worker's participation, and every route here acts on that participation only. Without
it, every route answers 403 ``no_session``. Unsafe methods need the CSRF
token: a scripted client posts to the join URL (the worker cookie), then ``GET
/api/session/current/`` (sets the ``csrftoken`` cookie), and sends the
cookie's value back in the ``X-CSRFToken`` header. Bodies are JSON (anything
else is 415 ``unsupported_media_type``), at most 64 KiB (413 ``too_large``) and
32 levels deep (400 ``too_deep``); answers are JSON whatever ``Accept``.

Errors are the API's one shape (annotation.api.errors),
``{"error": code, "detail": message}``, with 400 (invalid answer),
403 (no session, not your item, no reveal for it) or 409 (not your current
item, already locked, not in a step, ``study_closed``); a refused request
stores nothing. ``study_closed``: the study was closed and the grace period
it gave the workers already in (``closes_at`` in the session) is over; start,
submit and skip are refused, and the participation is closed out
(annotation.services.closing): ``GET current`` then carries its state and,
for a worker who had started, the completion code. A
repeated submission answers 409 ``already_locked`` with the stored ``answer``.
There is no route that updates or deletes an answer.

No test-step response carries a gold answer, a score or a hint: gold only
leaves the server through ``reveal`` and the training-step submit response.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponseBase
from django.http.multipartparser import MultiPartParserError
from django.middleware.csrf import get_token
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework.authentication import CSRFCheck
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response as JSONResponse
from rest_framework.views import APIView

from annotation import sqlite_queue, worker_cookie
from annotation.api import errors
from annotation.api.parsers import SessionJSONParser
from annotation.api.session_schema import (
    CONSENT,
    ERROR,
    ERRORS,
    EVENT,
    LOCKED,
    NOT_FOUND,
    PROGRESS_BOTH,
    RECORDED,
    REVEAL,
    SESSION,
    SKIP,
    SUBMIT,
    SURVEY,
)
from annotation.models import Participation, Response
from annotation.services import (
    answers,
    closing,
    consent,
    languages,
    lifecycle,
    outcomes,
    presentation,
    reveal,
    step_end,
    steps,
    study_texts,
    survey,
    timing,
)
from annotation.services.answers import AnswerError, InvalidAnswer, NotInStep, NotYourItem
from annotation.services.entry import completion_target
from annotation.services.steps import Progress
from annotation.services.worker_sql import StepHead, WorkerState
from tasks_app.texts import question_type_names, texts_for

TAGS = ["worker session"]
logger = logging.getLogger(__name__)


# --- Authentication: the session's participation, and CSRF ---------------------


class HasWorkerSession(BasePermission):
    """The worker cookie names a participation; the view has read it (``WorkerSessionView.worker``)."""

    message = _("Open the study's link from your crowd platform first (no worker session).")
    code = "no_session"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(view, WorkerSessionView) and view.worker is not None


def load_worker_state(request: HttpRequest) -> WorkerState | None:
    """The request's participation as the worker cookie names it, read in one statement; None without one."""
    participation_id = worker_cookie.participation_id(request)
    if participation_id is None:
        return None
    return steps.read_worker_state(participation_id)


class JSONAlways(DefaultContentNegotiation):
    """The session API answers JSON whatever the Accept header says (one renderer: nothing to choose)."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def _no_view(request: HttpRequest) -> HttpResponseBase:
    raise AssertionError("the CSRF check is only asked for its verdict: there is no view to call")


class WorkerSessionView(APIView):
    authentication_classes: list = []
    permission_classes = [HasWorkerSession]
    parser_classes = [SessionJSONParser]  # anything else is 415; nesting and size limited (parsers)
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JSONAlways
    # What the request read at its start; its ``step`` holds only until the request writes.
    worker: WorkerState | None = None
    # Django's request, for the helpers that take one (DRF's Request keeps it only under a private name).
    http_request: HttpRequest

    def setup(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        super().setup(request, *args, **kwargs)
        self.http_request = request

    @property
    def session(self) -> WorkerState:
        """What the request read at its start, once HasWorkerSession has let it through."""
        assert self.worker is not None, "HasWorkerSession lets no request without a worker session through"
        return self.worker

    @property
    def participation(self) -> Participation:
        """The session's participation (the views run only once HasWorkerSession has let them)."""
        return self.session.participation

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method not in SAFE_METHODS:
            # As DRF's SessionAuthentication checks it: outside the middleware chain, with no view (so no
            # csrf_exempt); CSRFCheck answers the reason of a refusal instead of a response.
            try:
                reason = CSRFCheck(_no_view).process_view(self.http_request, _no_view, (), {})
            except MultiPartParserError:  # Django reads a form body for its token: a broken one is no JSON either
                raise exceptions.UnsupportedMediaType(request.content_type) from None
            if reason:
                raise exceptions.PermissionDenied(f"CSRF failed: {reason}", code="csrf_failed")
        self.worker = load_worker_state(self.http_request)
        # The study's language for this request's messages and texts (no query: the study came with the read).
        languages.activate_for_study(self.http_request, self.worker.participation.study if self.worker else None)
        super().initial(request, *args, **kwargs)

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], JSONResponse | None]:
        return errors.exception_handler  # the API's one error shape, whatever the settings name

    def handle_exception(self, exc: Exception) -> JSONResponse:
        if isinstance(exc, AnswerError | closing.StudyClosed):
            self.log_refusal(exc)
        return super().handle_exception(exc)  # a service's refusal is answered by errors.exception_handler

    def log_refusal(self, exc: AnswerError | closing.StudyClosed) -> None:
        # Debug only: refusals are routine (double clicks, stale pages). The code, never the answer's text.
        if self.worker is None or not logger.isEnabledFor(logging.DEBUG):
            return  # the worker's id is read only when it will be logged
        participation = self.worker.participation
        worker = participation.worker
        logger.debug(
            "refused %s %s: %s (participation %s, %s worker %s)",
            self.request.method,
            self.request.path,
            exc.code,
            participation.pk,
            worker.platform,
            worker.external_id,
        )

    def finalize_response(self, request: Request, response: JSONResponse, *args: Any, **kwargs: Any) -> JSONResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        add_never_cache_headers(response)  # a worker's items and answers are never cached
        return response

    def body(self) -> dict[str, Any]:
        data = self.request.data
        if not isinstance(data, dict):
            raise InvalidAnswer("invalid_payload", gettext("Send a JSON object."))
        return data

    def item_id(self, data: dict[str, Any]) -> int:
        item = data.get("item")
        if isinstance(item, bool) or not isinstance(item, int):
            raise InvalidAnswer("invalid_item", gettext("item must be the integer id of your current item."))
        return item


# --- Payloads (never gold) -------------------------------------------------------


def task_payload(participation: Participation) -> dict:
    """The task as workers see it: a neutral title, never the dataset's name or slug (services.presentation),
    its texts in the request's language (tasks_app.texts)."""
    task = participation.task
    shown = presentation.worker_task(participation.study, task, language=get_language())
    texts = texts_for(task, get_language(), labels=task.labels.all())
    labels = [
        {"name": name, "text": help.text, "definition": help.definition, "example": help.example, "key": str(i + 1)}
        for i, (name, help) in enumerate(texts.labels.items())
    ]
    return {
        "name": shown.name,
        "kind": task.kind,
        "description": shown.description,
        "instructions": shown.instructions,
        "multiple_spans": task.multiple_spans,
        "labels": labels,
    }


def item_payload(participation: Participation, response: Response) -> dict:
    example = response.example
    task = participation.task
    question_types = question_type_names(task, get_language())
    payload = {
        "item": response.pk,
        "phase": response.phase,
        "position": response.position,
        "question": presentation.question_for(task, example, get_language()),
        "question_type": example.question_type,
        "question_type_name": question_types.get(example.question_type, ""),
        "context": example.context,
        "context_kind": "pair" if example.is_sentence_pair else "text",
        "answer_kind": "label" if task.is_classification else "spans",
        "multiple_spans": task.multiple_spans,
        # The page refuses what the server would: overlapping selections, more spans than the cap.
        "overlapping_spans": task.overlapping_spans,
        "empty_answer_allowed": not task.is_classification and task.empty_answer_allowed,
        "max_spans": answers.span_limit(example.context_text, overlapping=task.overlapping_spans),
        "skip_allowed": response.phase == Response.Phase.TEST,
        "locked": response.is_locked,
    }
    if response.is_locked:
        payload["your_answer"] = answers.stored_answer(response)
    return payload


FINISHED_WITH_CODE = (Participation.State.COMPLETED, Participation.State.EXCLUDED, Participation.State.DECLINED)


def completion_payload(participation: Participation) -> dict | None:
    """The completion code and where to send it: for finished workers, excluded ones (paid too) and those
    who declined the consent text (the platform's "no consent" code); the outcome names which."""
    if participation.state not in FINISHED_WITH_CODE:
        return None
    target = completion_target(participation)
    outcome = outcomes.outcome_for(participation)
    return {
        "code": target.code,
        "kind": target.kind,
        "url": target.url,
        "fields": dict(target.fields),
        "outcome": outcome.value if outcome is not None else outcomes.Outcome.COMPLETED.value,
    }


def consent_payload(participation: Participation) -> dict | None:
    """The consent text while the worker still has to answer it, else None."""
    if not consent.required(participation):
        return None
    text = study_texts.consent_text(participation.study, get_language())
    return {"text": text, "text_hash": consent.text_hash(text)}


def survey_payload(participation: Participation) -> dict | None:
    """The survey while the worker owes it (before training, or after the test), else None."""
    placement = survey.due(participation)
    if placement is None:
        return None
    # Labels in the page's language; the options stay the study's own (they are the answers' values).
    shown = study_texts.texts_for(participation.study, get_language()).survey
    questions = [{k: v for k, v in q.items() if k != "choices"} for q in shown]
    return {"placement": placement, "questions": questions}


def pending_payload(participation: Participation) -> dict[str, Any]:
    """What the worker must do before anything else: consent first, then a survey that is due."""
    consent_body = consent_payload(participation)
    survey_body = None if consent_body is not None else survey_payload(participation)
    pending = "consent" if consent_body is not None else "survey" if survey_body is not None else None
    return {"pending": pending, "consent": consent_body, "survey": survey_body}


def session_payload(participation: Participation, known: StepHead | None = None) -> dict:
    """The session's JSON; ``known`` is the step as the request read it, if nothing was written since
    (the activity touch writes only the participation's own row)."""
    # A GET: each write below happens only when due, and takes the SQLite write turn only then.
    if participation.state in Participation.ACTIVE_STATES and lifecycle.touch_due(participation, timezone.now()):
        with sqlite_queue.write_turn():
            lifecycle.touch(participation)
    head = steps.current_step(participation=participation, known=known)
    if head is not None and head.current is None:  # an interrupted last submit: end the step now
        with sqlite_queue.write_turn():
            step_end.end_step(participation)
        head = steps.current_step(participation=participation)
    item: Response | None = None
    progress: Progress | None
    if head is not None and head.current is not None:
        item = head.current
        _mark_shown(item)
        assert head.size is not None  # read with the pending rows, of which the current item is one
        progress = steps.progress_at(item, head.size)
    else:
        progress = steps.progress(participation=participation)
    return {
        "state": participation.state,
        "shots": participation.condition.shots,
        "task": task_payload(participation),
        "progress": progress.as_dict() if progress else None,
        "item": item_payload(participation, item) if item is not None else None,
        "completion": completion_payload(participation),
        "closes_at": closes_at(participation),
        **pending_payload(participation),
    }


def _mark_shown(item: Response) -> None:
    """``timing.mark_shown`` in the write turn, taken only when the item has not been shown yet."""
    if item.shown_at is None and not item.is_locked:
        with sqlite_queue.write_turn():
            timing.mark_shown(item)


def closes_at(participation: Participation) -> str | None:
    """When the study stops taking this worker's answers (ISO 8601), once it has been closed; else None."""
    deadline = closing.grace_deadline(participation.study)
    return deadline.isoformat() if deadline is not None else None


# --- Views ------------------------------------------------------------------------


class CurrentView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="The session: state, task, progress and the current item (sets the CSRF cookie)",
        description="Scripted clients: POST choice=start (or agree) to the study's join URL "
        "(/join/<slug>/?worker_id=...) to take a slot and get the worker "
        "cookie, then this route to get the csrftoken cookie, and send its value as X-CSRFToken on every POST. "
        "Test-step items never carry gold, scores or hints.",
        responses={200: SESSION, 403: ERROR},
    )
    def get(self, request: Request) -> JSONResponse:
        get_token(self.http_request)  # sets the csrftoken cookie for scripted clients
        known = self.session.step
        try:
            closing.check_can_work(self.participation)
        except closing.StudyClosed:
            known = None  # closed out: the payload tells its state and, if they had started, the code
        return JSONResponse(session_payload(self.participation, known=known))


class StartView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Start after reading the description (training, or the test step for 0-shot)",
        request=None,
        responses={200: SESSION, **ERRORS},
    )
    def post(self, request: Request) -> JSONResponse:
        participation, known = self.participation, self.session.step
        closing.check_can_work(participation)
        if consent.required(participation):
            raise NotInStep("consent_required", "agree to the consent text first (POST consent)")
        if survey.due(participation) is not None:
            raise NotInStep("survey_required", "answer the survey first (POST survey)")
        if participation.state == Participation.State.CLAIMED:
            known = None  # begin writes: the step is read afresh
            try:
                with transaction.atomic():
                    lifecycle.begin(participation)
                    steps.lay_out_current(participation=participation)
            except lifecycle.InvalidTransition:
                participation.refresh_from_db()  # a double click: the first request started it
        if steps.phase_for(participation) is None:
            raise NotInStep(
                "not_in_step", gettext("There is no step to work on now (%(state)s).") % {"state": participation.state}
            )
        return JSONResponse(session_payload(participation, known=known))


class SubmitView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Submit and lock the answer to the current item",
        description="Training items: the response carries the reveal (gold, verdict, S1). Test items: only the "
        "stored answer. 409 already_locked returns the stored answer and changes nothing. At most the item's "
        "max_spans spans (400 too_many_spans), no span twice at the same offsets (400 duplicate_span), overlapping "
        "spans only where the item's overlapping_spans is on (400 overlapping_spans); the body is at most "
        "64 KiB (413 too_large) and nests at most 32 levels (400 too_deep).",
        request=SUBMIT,
        responses={200: LOCKED, **ERRORS},
    )
    def post(self, request: Request) -> JSONResponse:
        data = self.body()
        result = answers.submit(
            participation=self.participation,
            item_id=self.item_id(data),
            label=data.get("label"),
            spans=data.get("spans"),
            offset_unit=data.get("offset_unit", "codepoint"),
            confidence=data.get("confidence"),
            no_answer=data.get("no_answer", False),
            known=self.session,
        )
        return JSONResponse(_locked_body(self.participation, result))


class SkipView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Skip the current test item (recorded as a skip)",
        request=SKIP,
        responses={200: LOCKED, **ERRORS},
    )
    def post(self, request: Request) -> JSONResponse:
        data = self.body()
        result = answers.skip(
            participation=self.participation,
            item_id=self.item_id(data),
            confidence=data.get("confidence"),
            known=self.session,
        )
        return JSONResponse(_locked_body(self.participation, result))


def _locked_body(participation: Participation, result: answers.SubmitResult) -> dict[str, Any]:
    body: dict[str, Any] = {
        "answer": answers.stored_answer(result.response, result.spans),
        "step_finished": result.step_finished,
        "state": result.state,
    }
    if result.response.phase == Response.Phase.TRAINING:
        body["reveal"] = reveal.reveal_payload(result.response, result.spans)
    elif result.next is not None:
        body["next"] = {
            "progress": result.next.progress.as_dict(),
            "item": item_payload(participation, result.next.response),
        }
    return body


class ItemView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="One of your items: the current one, or a locked one with your answer",
        responses={200: SESSION, 403: ERROR, 404: NOT_FOUND, 409: ERROR},
    )
    def get(self, request: Request, item_id: int) -> JSONResponse:
        participation = self.participation
        response = (
            Response.all_objects.select_related("example").filter(pk=item_id, participation=participation).first()
        )
        if response is None:
            raise NotYourItem("not_your_item", gettext("This item is not assigned to you."))
        if not response.is_locked:
            head = steps.current_step(participation=participation, known=self.session.step)
            current = head.current if head is not None else None
            if current is None or current.pk != response.pk:
                raise answers.NotCurrentItem("not_current_item", gettext("This is not your current item."))
            _mark_shown(response)
        progress = steps.phase_progress(participation=participation, phase=response.phase)
        return JSONResponse(
            {
                "state": participation.state,
                "shots": participation.condition.shots,
                "task": task_payload(participation),
                "progress": progress.as_dict(),
                "item": item_payload(participation, response),
                "completion": completion_payload(participation),
                "closes_at": closes_at(participation),
                **pending_payload(participation),
            }
        )


class RevealView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Gold for one of your locked training items (409 before lock, 403 for test)",
        responses={200: REVEAL, 403: ERROR, 404: NOT_FOUND, 409: ERROR},
    )
    def get(self, request: Request, item_id: int) -> JSONResponse:
        return JSONResponse(reveal.reveal(participation=self.participation, item_id=item_id))


class ProgressView(WorkerSessionView):
    @extend_schema(
        tags=TAGS, summary="Progress in the training and test steps", responses={200: PROGRESS_BOTH, 403: ERROR}
    )
    def get(self, request: Request) -> JSONResponse:
        participation = self.participation
        phases: dict[str, dict[str, Any] | None] = {}
        for phase in (Response.Phase.TRAINING, Response.Phase.TEST):
            progress = steps.phase_progress(participation=participation, phase=phase)
            phases[phase] = progress.as_dict() if progress.total else None
        return JSONResponse({"state": participation.state, **phases})


class EventView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Heartbeat, focus and blur of the page on an item (time on item, focus losses)",
        request=EVENT,
        responses={200: RECORDED, **ERRORS},
    )
    def post(self, request: Request) -> JSONResponse:
        data = self.body()
        item_id = self.item_id(data)
        kind = data.get("type")
        if kind not in timing.EVENT_KINDS:
            raise InvalidAnswer(
                "invalid_event", gettext("type must be one of %(kinds)s.") % {"kinds": ", ".join(timing.EVENT_KINDS)}
            )
        response = Response.all_objects.filter(pk=item_id, participation=self.participation).first()
        if response is None:
            raise NotYourItem("not_your_item", gettext("This item is not assigned to you."))
        recorded = timing.record_event(participation=self.participation, response=response, kind=kind)
        return JSONResponse({"recorded": recorded})


class ConsentView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Agree to or decline the study's consent text (before anything else)",
        description="Send agree=true with the text_hash of the text shown (409 consent_changed if the researcher "
        "changed it since), or agree=false to decline: the participation ends as declined, its slot is freed, "
        "and the session's completion carries the study's declined code.",
        request=CONSENT,
        responses={200: SESSION, **ERRORS},
    )
    def post(self, request: Request) -> JSONResponse:
        data = self.body()
        agree = data.get("agree")
        if not isinstance(agree, bool):
            raise InvalidAnswer("invalid_consent", "agree must be true or false")
        shown = data.get("text_hash")
        if agree and not isinstance(shown, str):
            raise InvalidAnswer("invalid_consent", "send the text_hash of the consent text you were shown")
        participation = self.participation
        closing.check_can_work(participation)
        if agree:
            consent.agree(participation, shown_hash=shown, language=get_language())
        else:
            consent.decline(participation)
        return JSONResponse(session_payload(participation))


class SurveyView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Answer the study's survey when it is due (the session's pending is survey)",
        description="answers maps question keys to answers: a single choice is one of the options, a multiple "
        "choice a list of options, a number a number within min..max, a text a short string. Unanswered "
        "questions are left out unless required. 400 invalid_survey names each wrong answer under errors and "
        "stores nothing; 409 survey_not_due when there is no survey to answer now.",
        request=SURVEY,
        responses={200: SESSION, **ERRORS},
    )
    def post(self, request: Request) -> JSONResponse:
        data = self.body()
        participation = self.participation
        if consent.required(participation):
            raise NotInStep("consent_required", "agree to the consent text first (POST consent)")
        survey.submit(participation=participation, answers=data.get("answers"))
        return JSONResponse(session_payload(participation))
