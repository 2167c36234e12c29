"""The worker's session as JSON: what the worker page does, scripted clients can do.

Authentication is the worker's signed cookie (annotation.web.worker_cookie, checked by the
views' base, annotation.api.worker_auth): the entry link's form (``POST /join/<slug>/?worker_id=...``
with ``choice=start``, or ``agree``) sets it to the worker's participation, and every route here acts
on that participation only. Without it, every route answers 403 ``no_session``. Unsafe methods
need the CSRF token: a scripted client posts to the join URL (the worker cookie), then ``GET
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
(annotation.services.admission.closing): ``GET current`` then carries its state and,
for a worker who had started, the completion code. A
repeated submission answers 409 ``already_locked`` with the stored ``answer``.
There is no route that updates or deletes an answer.

No test-step response carries a gold answer, a score or a hint: gold only
leaves the server through ``reveal`` and the training-step submit response.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.middleware.csrf import get_token
from django.utils import timezone
from django.utils.translation import get_language, gettext
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response as JSONResponse

from annotation.api.session_schema import (
    COMPREHENSION,
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
from annotation.api.worker_auth import WorkerSessionView
from annotation.db import sqlite_queue
from annotation.models import Participation, Response
from annotation.services.admission import closing, comprehension, consent, survey
from annotation.services.session import answers, reveal, steps, timing
from annotation.services.session.answers import InvalidAnswer, NotInStep, NotYourItem
from annotation.services.session.session_payloads import locked_body, session_body
from annotation.services.session.steps import Progress
from annotation.services.session.worker_sql import LabelText, StepHead
from annotation.services.state import lifecycle
from annotation.services.verdicts import step_end

TAGS = ["worker session"]


# --- The session's GET: the writes it may owe, then the payload (services.session.session_payloads) ---


def session_payload(
    participation: Participation, known: StepHead | None = None, labels: Iterable[LabelText] | None = None
) -> dict:
    """The session's JSON; ``known`` is the step as the request read it, if nothing was written since
    (the activity touch writes only the participation's own row); ``labels`` the task's, as it read them."""
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
    return session_body(participation, progress=progress, item=item, labels=labels)


def _mark_shown(item: Response) -> None:
    """``timing.mark_shown`` in the write turn, taken only when the item has not been shown yet."""
    if item.shown_at is None and not item.is_locked:
        with sqlite_queue.write_turn():
            timing.mark_shown(item)


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
        if settings.CSRF_COOKIE_NAME not in request.COOKIES:
            # Sets the csrftoken cookie for scripted clients. A browser that sends it keeps it: minting a
            # masked token (and a Set-Cookie) on every poll of the session would only renew its expiry.
            get_token(self.http_request)
        known = self.session.step
        try:
            closing.check_can_work(self.participation)
        except closing.StudyClosed:
            known = None  # closed out: the payload tells its state and, if they had started, the code
        return JSONResponse(session_payload(self.participation, known=known, labels=self.session.labels))


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
        if comprehension.due(participation):
            raise NotInStep("comprehension_required", "pass the comprehension check first (POST comprehension)")
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
        return JSONResponse(session_payload(participation, known=known, labels=self.session.labels))


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
            page_signals=data.get("signals"),
            known=self.session,
        )
        return JSONResponse(locked_body(self.participation, result))


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
            page_signals=data.get("signals"),
            known=self.session,
        )
        return JSONResponse(locked_body(self.participation, result))


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
        return JSONResponse(session_body(participation, progress=progress, item=response, labels=self.session.labels))


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
        return JSONResponse(session_payload(participation, labels=self.session.labels))


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
        closing.check_can_work(participation)  # a closed study's worker is closed out, as by every other answer
        if consent.required(participation):
            raise NotInStep("consent_required", "agree to the consent text first (POST consent)")
        if comprehension.due(participation):
            raise NotInStep("comprehension_required", "pass the comprehension check first (POST comprehension)")
        survey.submit(participation=participation, answers=data.get("answers"))
        return JSONResponse(session_payload(participation, labels=self.session.labels))


class ComprehensionView(WorkerSessionView):
    @extend_schema(
        tags=TAGS,
        summary="Answer the comprehension check (the session's pending is comprehension)",
        description="answers maps question keys to the option chosen (a list of options where the question's "
        "multiple is true); every question needs an answer. The reply is the session, with attempt_result: "
        "passed, and the keys of the wrong questions (never the right options). A failed first attempt leaves "
        "comprehension pending with attempt 2; a failed second one screens the worker out: state excluded, "
        "the slot freed, and completion carries the study's screened_out code (the worker is paid for the time "
        "spent). 400 invalid_comprehension names each malformed answer under errors and stores nothing; 409 "
        "comprehension_not_due when there is no check to answer now.",
        request=COMPREHENSION,
        responses={200: SESSION, **ERRORS},
    )
    def post(self, request: Request) -> JSONResponse:
        data = self.body()
        participation = self.participation
        closing.check_can_work(participation)
        if consent.required(participation):
            raise NotInStep("consent_required", "agree to the consent text first (POST consent)")
        result = comprehension.submit(participation=participation, answers=data.get("answers"))
        attempt = {"number": result.number, "passed": result.passed, "wrong": result.wrong}
        return JSONResponse({**session_payload(participation, labels=self.session.labels), "attempt_result": attempt})
