"""The worker's session as JSON: what the worker page does, scripted clients can do.

Authentication is the worker's Django session: the entry link
(``GET /join/<slug>/?worker_id=...``) stores ``participation_id`` in it, and
every route here acts on that participation only. Without it, every route
answers 403 ``no_session``. Unsafe methods need the CSRF token: a scripted
client GETs the join URL (session cookie), then ``GET /api/session/current/``
(sets the ``csrftoken`` cookie), and sends the cookie's value back in the
``X-CSRFToken`` header.

Errors are ``{"error": code, "detail": message}`` with 400 (invalid answer),
403 (no session, not your item, no reveal for it) or 409 (not your current
item, already locked, not in a step); a refused request stores nothing. A
repeated submission answers 409 ``already_locked`` with the stored ``answer``.
There is no route that updates or deletes an answer.

No test-step response carries a gold answer, a score or a hint: gold only
leaves the server through ``reveal`` and the training-step submit response.
"""
from __future__ import annotations

from django.db import transaction
from django.middleware.csrf import get_token
from django.utils.cache import add_never_cache_headers
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.authentication import CSRFCheck
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response as JSONResponse
from rest_framework.views import APIView

from annotation.models import Participation, Response
from annotation.services import answers, lifecycle, reveal, steps, timing, training_filter
from annotation.services.answers import AnswerError, InvalidAnswer, NotInStep, NotYourItem

SESSION_KEY = "participation_id"
TAGS = ["worker session"]


# --- Authentication: the session's participation, and CSRF ---------------------


class HasWorkerSession(BasePermission):
    """The request's session names a participation; it is loaded once onto the request."""

    message = "open the study's link from your crowd platform first (no worker session)"
    code = "no_session"

    def has_permission(self, request, view) -> bool:
        return view.participation is not None


def load_participation(session) -> Participation | None:
    participation_id = session.get(SESSION_KEY)
    if not isinstance(participation_id, int):
        return None
    return (
        Participation.objects.select_related("condition", "study", "task", "worker")
        .filter(pk=participation_id)
        .first()
    )


class WorkerSessionView(APIView):
    authentication_classes: list = []
    permission_classes = [HasWorkerSession]
    participation: Participation | None = None

    def initial(self, request, *args, **kwargs):
        if request.method not in SAFE_METHODS:
            reason = CSRFCheck(lambda _request: None).process_view(request._request, None, (), {})
            if reason:
                raise exceptions.PermissionDenied(f"CSRF failed: {reason}", code="csrf_failed")
        self.participation = load_participation(request.session)
        super().initial(request, *args, **kwargs)

    def handle_exception(self, exc):
        if isinstance(exc, AnswerError):
            body = {"error": exc.code, "detail": exc.detail}
            if isinstance(exc, answers.AlreadyLocked):
                body["answer"] = exc.stored
            return JSONResponse(body, status=exc.status)
        if isinstance(exc, exceptions.APIException):
            codes = exc.get_codes()
            code = codes if isinstance(codes, str) else "invalid_payload"
            detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
            return JSONResponse({"error": code, "detail": str(detail)}, status=exc.status_code)
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        add_never_cache_headers(response)  # a worker's items and answers are never cached
        return response

    def body(self) -> dict:
        data = self.request.data
        if not isinstance(data, dict):
            raise InvalidAnswer("invalid_payload", "send a JSON object")
        return data

    def item_id(self, data: dict):
        item = data.get("item")
        if isinstance(item, bool) or not isinstance(item, int):
            raise InvalidAnswer("invalid_item", "item must be the integer id of your current item")
        return item


# --- Payloads (never gold) -------------------------------------------------------


def task_payload(participation: Participation) -> dict:
    task = participation.task
    labels = [
        {"name": label.name, "definition": label.definition, "example": label.example, "key": str(i + 1)}
        for i, label in enumerate(task.labels.all())
    ]
    return {
        "slug": task.slug,
        "name": task.name,
        "kind": task.kind,
        "description": task.description,
        "instructions": task.instructions,
        "multiple_spans": task.multiple_spans,
        "labels": labels,
    }


def item_payload(participation: Participation, response: Response) -> dict:
    example = response.example
    task = participation.task
    question_types = {qt.get("code"): qt.get("name", "") for qt in task.question_types or []}
    payload = {
        "item": response.pk,
        "phase": response.phase,
        "position": response.position,
        "question": example.question,
        "question_type": example.question_type,
        "question_type_name": question_types.get(example.question_type, ""),
        "context": example.context,
        "context_kind": "pair" if example.is_sentence_pair else "text",
        "answer_kind": "label" if task.is_classification else "spans",
        "multiple_spans": task.multiple_spans,
        "skip_allowed": response.phase == Response.Phase.TEST,
        "locked": response.is_locked,
    }
    if response.is_locked:
        payload["your_answer"] = answers.stored_answer(response)
    return payload


def completion_payload(participation: Participation) -> dict | None:
    if participation.state != Participation.State.COMPLETED:
        return None
    from annotation.services.entry import completion_target  # the cohorts engineer's service

    target = completion_target(participation)
    return {"code": target.code, "kind": target.kind, "url": target.url, "fields": dict(target.fields)}


def settle(participation: Participation) -> None:
    """A step with no pending item left but not moved on (an interrupted last submit): move it on now."""
    if participation.state == Participation.State.TRAINING:
        training_filter.finish_training(participation)
    elif participation.state == Participation.State.TEST:
        lifecycle.finish_test(participation)


def session_payload(participation: Participation) -> dict:
    item = steps.current_item(participation=participation)
    if item is None and steps.phase_for(participation) is not None:
        settle(participation)
        item = steps.current_item(participation=participation)
    if item is not None:
        timing.mark_shown(item)
    progress = steps.progress(participation=participation)
    return {
        "state": participation.state,
        "shots": participation.condition.shots,
        "task": task_payload(participation),
        "progress": progress.as_dict() if progress else None,
        "item": item_payload(participation, item) if item is not None else None,
        "completion": completion_payload(participation),
    }


# --- Schema helpers ---------------------------------------------------------------

ERROR = inline_serializer("SessionError", {"error": serializers.CharField(), "detail": serializers.CharField()})
SPAN = inline_serializer(
    "SpanInput",
    {
        "start": serializers.IntegerField(help_text="Start offset, inclusive."),
        "end": serializers.IntegerField(help_text="End offset, exclusive."),
        "text": serializers.CharField(help_text="Must equal context[start:end]."),
    },
)
SUBMIT = inline_serializer(
    "SubmitInput",
    {
        "item": serializers.IntegerField(help_text="The current item's id."),
        "label": serializers.CharField(required=False, help_text="Classification: one of the task's labels."),
        "spans": serializers.ListField(child=SPAN, required=False, help_text="Span tasks: the selected spans."),
        "offset_unit": serializers.ChoiceField(
            ["codepoint", "utf16"], required=False, default="codepoint",
            help_text="codepoint: Python str indices (default); utf16: JavaScript string offsets.",
        ),
        "no_answer": serializers.BooleanField(required=False, default=False, help_text="Span tasks: the empty answer."),
        "confidence": serializers.IntegerField(min_value=1, max_value=5, help_text="1 strongly disagree .. 5 strongly agree."),
    },
)
SKIP = inline_serializer(
    "SkipInput",
    {"item": serializers.IntegerField(), "confidence": serializers.IntegerField(required=False, min_value=1, max_value=5)},
)
EVENT = inline_serializer(
    "EventInput",
    {"item": serializers.IntegerField(), "type": serializers.ChoiceField(list(timing.EVENT_KINDS))},
)

def _obj(name: str, fields: dict, **kwargs):
    return inline_serializer(name, fields, **kwargs)


SPAN_OUT = _obj("SpanOutput", {
    "start": serializers.IntegerField(help_text="Python str index, inclusive."),
    "end": serializers.IntegerField(help_text="Python str index, exclusive."),
    "text": serializers.CharField(),
    "utf16_start": serializers.IntegerField(help_text="The same offset in UTF-16 code units (JavaScript)."),
    "utf16_end": serializers.IntegerField(),
})
STORED = _obj("StoredAnswer", {
    "item": serializers.IntegerField(),
    "phase": serializers.ChoiceField(["training", "test"]),
    "status": serializers.ChoiceField(["answered", "no_answer", "skipped"]),
    "label": serializers.CharField(),
    "answer": serializers.ListField(child=serializers.CharField(), help_text="The answer set as strings."),
    "spans": SPAN_OUT.__class__(many=True),
    "confidence": serializers.IntegerField(allow_null=True),
    "submitted_at": serializers.DateTimeField(),
})
PROGRESS = _obj("Progress", {
    "phase": serializers.CharField(), "done": serializers.IntegerField(), "total": serializers.IntegerField(),
    "number": serializers.IntegerField(), "finished": serializers.BooleanField(),
    "text": serializers.CharField(help_text='e.g. "Item 37 of 210".'),
})
LABEL = _obj("LabelHelp", {
    "name": serializers.CharField(), "definition": serializers.CharField(), "example": serializers.CharField(),
    "key": serializers.CharField(help_text="Keyboard key on the page."),
})
TASK = _obj("SessionTask", {
    "slug": serializers.CharField(), "name": serializers.CharField(), "kind": serializers.CharField(),
    "description": serializers.CharField(), "instructions": serializers.CharField(),
    "multiple_spans": serializers.BooleanField(), "labels": LABEL.__class__(many=True),
})
ITEM = _obj("SessionItem", {
    "item": serializers.IntegerField(help_text="Send this id with submit, skip and events."),
    "phase": serializers.ChoiceField(["training", "test"]),
    "position": serializers.IntegerField(),
    "question": serializers.CharField(),
    "question_type": serializers.CharField(),
    "question_type_name": serializers.CharField(),
    "context": serializers.JSONField(help_text="A string, or [sentence 1, sentence 2] for sentence pairs."),
    "context_kind": serializers.ChoiceField(["text", "pair"]),
    "answer_kind": serializers.ChoiceField(["label", "spans"]),
    "multiple_spans": serializers.BooleanField(),
    "skip_allowed": serializers.BooleanField(),
    "locked": serializers.BooleanField(),
    "your_answer": STORED.__class__(required=False, help_text="Only for a locked item."),
}, allow_null=True)
COMPLETION = _obj("Completion", {
    "code": serializers.CharField(),
    "kind": serializers.ChoiceField(["redirect", "form_post", "code"]),
    "url": serializers.CharField(), "fields": serializers.DictField(child=serializers.CharField()),
}, allow_null=True)
SESSION = _obj("Session", {
    "state": serializers.CharField(), "shots": serializers.IntegerField(), "task": TASK,
    "progress": PROGRESS.__class__(allow_null=True), "item": ITEM, "completion": COMPLETION,
})
REVEAL = _obj("Reveal", {
    "item": serializers.IntegerField(),
    "your_answer": STORED,
    "gold": _obj("Gold", {
        "answers": serializers.ListField(child=serializers.CharField()),
        "spans": SPAN_OUT.__class__(many=True),
        "empty": serializers.BooleanField(help_text="The gold answer is the empty set."),
    }),
    "matches": _obj("Match", {"text": serializers.CharField(), "in_gold": serializers.BooleanField()}, many=True),
    "score": serializers.FloatField(help_text="The item's S1."),
    "verdict": serializers.ChoiceField(["correct", "partly correct", "incorrect"]),
    "correct": serializers.BooleanField(),
})
LOCKED = _obj("Locked", {
    "answer": STORED,
    "step_finished": serializers.BooleanField(),
    "state": serializers.CharField(help_text="The participation's state after this answer."),
    "reveal": REVEAL.__class__(required=False, help_text="Training items only."),
})
PROGRESS_BOTH = _obj("SessionProgress", {
    "state": serializers.CharField(),
    "training": PROGRESS.__class__(allow_null=True), "test": PROGRESS.__class__(allow_null=True),
})
RECORDED = _obj("EventRecorded", {"recorded": serializers.BooleanField(help_text="False for a locked item.")})
ERRORS = {400: ERROR, 403: ERROR, 409: ERROR}


# --- Views ------------------------------------------------------------------------


class CurrentView(WorkerSessionView):
    @extend_schema(
        tags=TAGS, summary="The session: state, task, progress and the current item (sets the CSRF cookie)",
        responses={200: SESSION, 403: ERROR},
    )
    def get(self, request):
        get_token(request._request)  # sets the csrftoken cookie for scripted clients
        return JSONResponse(session_payload(self.participation))


class StartView(WorkerSessionView):
    @extend_schema(tags=TAGS, summary="Start after reading the description (training, or the test step for 0-shot)",
                   request=None, responses={200: SESSION, **ERRORS})
    def post(self, request):
        participation = self.participation
        if participation.state == Participation.State.CLAIMED:
            with transaction.atomic():
                lifecycle.begin(participation)
                steps.lay_out_current(participation=participation)
        elif steps.phase_for(participation) is None:
            raise NotInStep("not_in_step", f"your participation is {participation.state}")
        return JSONResponse(session_payload(participation))


class SubmitView(WorkerSessionView):
    @extend_schema(
        tags=TAGS, summary="Submit and lock the answer to the current item",
        description="Training items: the response carries the reveal (gold, verdict, S1). Test items: only the "
        "stored answer. 409 already_locked returns the stored answer and changes nothing.",
        request=SUBMIT, responses={200: LOCKED, **ERRORS},
    )
    def post(self, request):
        data = self.body()
        result = answers.submit(
            participation=self.participation,
            item_id=self.item_id(data),
            label=data.get("label"),
            spans=data.get("spans"),
            offset_unit=data.get("offset_unit", "codepoint"),
            confidence=data.get("confidence"),
            no_answer=data.get("no_answer", False),
        )
        return JSONResponse(_locked_body(result))


class SkipView(WorkerSessionView):
    @extend_schema(tags=TAGS, summary="Skip the current test item (recorded as a skip)",
                   request=SKIP, responses={200: LOCKED, **ERRORS})
    def post(self, request):
        data = self.body()
        result = answers.skip(
            participation=self.participation, item_id=self.item_id(data), confidence=data.get("confidence")
        )
        return JSONResponse(_locked_body(result))


def _locked_body(result: answers.SubmitResult) -> dict:
    body = {
        "answer": answers.stored_answer(result.response, result.spans),
        "step_finished": result.step_finished,
        "state": result.state,
    }
    if result.response.phase == Response.Phase.TRAINING:
        body["reveal"] = reveal.reveal_payload(result.response, result.spans)
    return body


class ItemView(WorkerSessionView):
    @extend_schema(tags=TAGS, summary="One of your items: the current one, or a locked one with your answer",
                   responses={200: SESSION, 403: ERROR, 409: ERROR})
    def get(self, request, item_id: int):
        participation = self.participation
        response = Response.objects.select_related("example").filter(pk=item_id, participation=participation).first()
        if response is None:
            raise NotYourItem("not_your_item", "this item is not assigned to you")
        if not response.is_locked:
            current = steps.current_item(participation=participation)
            if current is None or current.pk != response.pk:
                raise answers.NotCurrentItem("not_current_item", "this is not your current item")
            timing.mark_shown(response)
        progress = steps.progress(participation=participation, phase=response.phase)
        return JSONResponse({
            "state": participation.state,
            "shots": participation.condition.shots,
            "task": task_payload(participation),
            "progress": progress.as_dict(),
            "item": item_payload(participation, response),
            "completion": completion_payload(participation),
        })


class RevealView(WorkerSessionView):
    @extend_schema(tags=TAGS, summary="Gold for one of your locked training items (409 before lock, 403 for test)",
                   responses={200: REVEAL, 403: ERROR, 409: ERROR})
    def get(self, request, item_id: int):
        return JSONResponse(reveal.reveal(participation=self.participation, item_id=item_id))


class ProgressView(WorkerSessionView):
    @extend_schema(tags=TAGS, summary="Progress in the training and test steps",
                   responses={200: PROGRESS_BOTH, 403: ERROR})
    def get(self, request):
        participation = self.participation
        phases = {}
        for phase in (Response.Phase.TRAINING, Response.Phase.TEST):
            progress = steps.progress(participation=participation, phase=phase)
            phases[phase] = progress.as_dict() if progress.total else None
        return JSONResponse({"state": participation.state, **phases})


class EventView(WorkerSessionView):
    @extend_schema(
        tags=TAGS, summary="Heartbeat, focus and blur of the page on an item (time on item, focus losses)",
        request=EVENT, responses={200: RECORDED, **ERRORS},
    )
    def post(self, request):
        data = self.body()
        item_id = self.item_id(data)
        kind = data.get("type")
        if kind not in timing.EVENT_KINDS:
            raise InvalidAnswer("invalid_event", f"type must be one of {', '.join(timing.EVENT_KINDS)}")
        response = Response.objects.filter(pk=item_id, participation=self.participation).first()
        if response is None:
            raise NotYourItem("not_your_item", "this item is not assigned to you")
        recorded = timing.record_event(participation=self.participation, response=response, kind=kind)
        return JSONResponse({"recorded": recorded})
