"""The admins' JSON API for studies, conditions, participations and workers.

Thin: input serializers check shapes, services do the work, and a service's
ValidationError becomes a 400 with the message under the field it concerns.
Everything here is for the team, each operation for the roles that may do it (annotation.web.roles);
workers use the session API.
Errors are the API's one shape (annotation.api.errors).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotAuthenticated, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from annotation.api.errors import ErrorResponsesSchema, ErrorSerializer
from annotation.api.permissions import RolePermission, require
from annotation.models import (
    AttentionDecision,
    Condition,
    FilterDecision,
    IntegrityDecision,
    Participation,
    ParticipationEvent,
    Study,
    Worker,
)
from annotation.protocol.languages import study_language_choices
from annotation.services.admission import blocklist, closing
from annotation.services.roles.operations import Operation
from annotation.services.state import lifecycle, slots
from annotation.services.studies import launch, studies
from annotation.services.verdicts import overrides
from tasks_app.models import Task

if TYPE_CHECKING:
    from django.contrib.auth.models import User  # AUTH_USER_MODEL


def _admin(request: Request) -> User:
    """The signed-in admin who makes the request (RolePermission lets no anonymous request through)."""
    user = request.user
    if not user.is_authenticated:
        raise NotAuthenticated()
    return user


# The columns' ranges (PositiveSmallIntegerField, PositiveIntegerField) on every database: SQLite stores any
# 64-bit integer, so without these a huge number reached the database (and overflowed) instead of a 400.
SMALL_MAX = 32767
INT_MAX = 2147483647


def _as_400(exc: DjangoValidationError) -> ValidationError:
    if hasattr(exc, "error_dict"):
        return ValidationError({k: [str(m) for e in v for m in e.messages] for k, v in exc.error_dict.items()})
    return ValidationError(exc.messages)  # about the request as a whole: non_field_errors


# --- Serializers -----------------------------------------------------------------------


class ConditionCountsSerializer(serializers.Serializer):
    condition_id = serializers.IntegerField()
    shots = serializers.IntegerField()
    slots = serializers.IntegerField()
    filled = serializers.IntegerField()
    free = serializers.IntegerField()
    claimed = serializers.IntegerField()
    in_training = serializers.IntegerField()
    in_test = serializers.IntegerField()
    completed = serializers.IntegerField()
    excluded = serializers.IntegerField()
    abandoned = serializers.IntegerField()
    declined = serializers.IntegerField(help_text="Declined the consent text (their slots are free again).")


class ConditionSerializer(serializers.ModelSerializer[Condition]):
    study: serializers.SlugRelatedField[Study] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Condition
        fields = ["id", "study", "shots", "training_set", "sample_seed", "training_sample", "test_sample"]


LANGUAGE_HELP = (
    'The worker pages\' language: a shipped code (e.g. "en", "de"), or "" for the worker\'s browser language.'
)
_SHIPPED = ", ".join(repr(code) for code, _ in study_language_choices() if code)
LANGUAGE_ERROR = "Unknown language {input!r}: use one of " + _SHIPPED + ', or "" (the worker\'s browser language).'


class StudySerializer(serializers.ModelSerializer[Study]):
    task = serializers.SlugRelatedField(slug_field="slug", queryset=Task.objects.all())
    language = serializers.ChoiceField(
        choices=study_language_choices(),
        required=False,
        allow_blank=True,
        help_text=LANGUAGE_HELP,
        error_messages={"invalid_choice": LANGUAGE_ERROR},
    )
    shots = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=SMALL_MAX),
        write_only=True,
        required=False,
        help_text="The conditions' shot levels, e.g. [0, 10, 20, 30] (the default).",
    )
    conditions = ConditionSerializer(many=True, read_only=True)
    entry_path = serializers.SerializerMethodField()

    class Meta:
        model = Study
        fields = [
            "id",
            "slug",
            "name",
            "task",
            "split_number",
            "status",
            "shots",
            "conditions",
            "entry_path",
            *(f for f in studies.EDITABLE_FIELDS if f != "name"),
            "protocol",
            "test_sample_size",
            "closes_at",
            "pilot_opened_at",
            "rest_opened_at",
            "created_at",
            "updated_at",
        ]
        # The protocol and the test sample are set by the design that creates the study
        # (services.studies.studies.create_sampled_design), never changed afterwards.
        read_only_fields = [
            "status",
            "protocol",
            "test_sample_size",
            "closes_at",
            "pilot_opened_at",
            "rest_opened_at",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = {
            "workers_per_condition": {"max_value": SMALL_MAX},
            "abandon_after_minutes": {"max_value": INT_MAX},
        }

    def get_entry_path(self, study: Study) -> str:
        return f"/join/{study.slug}/"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is not None and "task" in attrs and attrs["task"] != self.instance.task:
            raise ValidationError({"task": "The task of a study cannot change; create a new study."})
        if self.instance is not None and "slug" in attrs and attrs["slug"] != self.instance.slug:
            raise ValidationError({"slug": "The slug is part of the entry links already handed out; it cannot change."})
        return attrs


class StatusChangeSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Study.Status.choices)
    grace_minutes = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=closing.MAX_GRACE_MINUTES,
        help_text="Closing only: how long the workers already in may go on (the study's closes_at = now + this; "
        f"default {closing.DEFAULT_GRACE_MINUTES}, 0 for none). After it their answers are refused "
        "(409 study_closed). Pausing refuses new entries only.",
    )
    override_blockers = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Opening a draft only: open it although its launch check names blockers (GET .../launch-check/); "
        "the override is recorded with who asked and the blockers. Without it such a study is refused (400).",
    )
    pilot = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Opening a draft only: launch it as a pilot, with its pilot_workers_per_condition of each "
        "condition's slots (docs/studies.md, A pilot launch).",
    )
    rest = serializers.BooleanField(
        required=False,
        default=False,
        help_text='With "status": "open": open the rest of a running pilot\'s slots (a paused pilot opens too). '
        "Refused (400) for a study not in a pilot.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("pilot") or attrs.get("rest")) and attrs["status"] != Study.Status.OPEN:
            raise ValidationError({"status": 'A pilot, or the rest after it, is opened: "status": "open".'})
        if attrs.get("pilot") and attrs.get("rest"):
            raise ValidationError({"rest": "Open a study as a pilot, or open the rest of its pilot: not both."})
        return attrs


class LaunchFindingSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="placeholder, no_posted_reward, missing_texts, too_long, no_fail_limit, ...")
    message = serializers.CharField()
    fix = serializers.CharField(help_text="The command or the place that sets it right.")


class LaunchCheckSerializer(serializers.Serializer):
    study = serializers.CharField()
    ready = serializers.BooleanField(help_text="Nothing blocks the launch.")
    blockers = LaunchFindingSerializer(many=True)
    look = LaunchFindingSerializer(many=True, help_text="What deserves a look before the launch; none blocks.")


class StandardDesignSerializer(serializers.Serializer):
    task = serializers.SlugRelatedField(slug_field="slug", queryset=Task.objects.all())
    split_number = serializers.IntegerField(min_value=1, max_value=5, default=1)
    slug = serializers.SlugField(required=False, allow_blank=True)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    workers_per_condition = serializers.IntegerField(min_value=1, max_value=SMALL_MAX, default=studies.STANDARD_WORKERS)
    language = serializers.ChoiceField(
        choices=study_language_choices(),
        default="",
        allow_blank=True,
        help_text=LANGUAGE_HELP,
        error_messages={"invalid_choice": LANGUAGE_ERROR},
    )
    open = serializers.BooleanField(
        default=False,
        help_text="Open the study right away, through its launch check: a blocker (e.g. no base_reward) refuses "
        "the whole request (400, nothing created) unless override_blockers.",
    )
    base_reward = serializers.DecimalField(
        max_digits=8,
        decimal_places=2,
        min_value=Decimal("0"),
        required=False,
        allow_null=True,
        default=None,
        help_text="The reward posted on the platform per participant (0 if none was posted); empty: not yet set.",
    )
    override_blockers = serializers.BooleanField(
        default=False, help_text="With open: open although the launch check names blockers (recorded)."
    )
    filter_rule = serializers.ChoiceField(
        choices=Study.FilterRule.choices, default=Study.FilterRule.NONE, help_text="The training filter's rule."
    )
    filter_threshold = serializers.FloatField(
        default=0.0,
        help_text="Absolute: the minimum training S1 (0..1); relative: the largest distance below the group.",
    )
    filter_reference = serializers.ChoiceField(
        choices=Study.FilterReference.choices,
        default=Study.FilterReference.MEAN,
        help_text="Relative rule: the others' mean or median.",
    )


class EventSerializer(serializers.ModelSerializer[ParticipationEvent]):
    actor: serializers.StringRelatedField[User] = serializers.StringRelatedField(
        allow_null=True, help_text="The admin who made it; null: the system."
    )

    class Meta:
        model = ParticipationEvent
        fields = ["from_state", "to_state", "at", "reason", "actor"]


class FilterDecisionSerializer(serializers.ModelSerializer[FilterDecision]):
    decided_by: serializers.StringRelatedField[User] = serializers.StringRelatedField(
        allow_null=True, help_text="The overriding admin; null: the filter."
    )

    class Meta:
        model = FilterDecision
        fields = [
            "training_s1",
            "rule",
            "threshold",
            "reference",
            "reference_mean",
            "group_training_s1",
            "pending_group",
            "passed",
            "is_override",
            "reason",
            "decided_by",
            "rule_version",
            "at",
        ]


class AttentionDecisionSerializer(serializers.ModelSerializer[AttentionDecision]):
    class Meta:
        model = AttentionDecision
        fields = ["checks", "passed_count", "failed_count", "fail_limit", "action", "decision", "reason", "at"]
        read_only_fields = fields


class IntegrityDecisionSerializer(serializers.ModelSerializer[IntegrityDecision]):
    class Meta:
        model = IntegrityDecision
        fields = [
            "items",
            "answered",
            "with_signals",
            "copied_items",
            "fast_items",
            "hidden_items",
            "max_copies",
            "max_fast_share",
            "max_hidden_share",
            "hidden_seconds",
            "action",
            "decision",
            "reason",
            "at",
        ]
        read_only_fields = fields


class ParticipationSerializer(serializers.ModelSerializer[Participation]):
    worker: serializers.StringRelatedField[Worker] = serializers.StringRelatedField()
    study: serializers.SlugRelatedField[Study] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    shots = serializers.IntegerField(source="condition.shots", read_only=True)
    events = EventSerializer(many=True, read_only=True)
    filter_decisions = FilterDecisionSerializer(many=True, read_only=True)
    attention_decisions = AttentionDecisionSerializer(many=True, read_only=True)
    integrity_decisions = IntegrityDecisionSerializer(many=True, read_only=True)
    exclusion_kind = serializers.CharField(
        read_only=True,
        help_text="Why an excluded worker was excluded: training_filter, attention, integrity, closed or admin; "
        "empty otherwise (and for exclusions recorded before this existed).",
    )

    class Meta:
        model = Participation
        fields = [
            "id",
            "study",
            "condition",
            "shots",
            "worker",
            "slot_index",
            "state",
            "exclusion_kind",
            "test_seed",
            "completion_code",
            "consented_at",
            "consent_hash",
            "platform_data",
            "created_at",
            "last_activity_at",
            "finished_at",
            "events",
            "filter_decisions",
            "attention_decisions",
            "integrity_decisions",
        ]
        read_only_fields = fields


class OverrideSerializer(serializers.Serializer):
    admit = serializers.BooleanField(help_text="true: readmit to the test step; false: exclude.")
    reason = serializers.CharField(max_length=400, help_text="Logged with the decision.")


class WorkerSerializer(serializers.ModelSerializer[Worker]):
    class Meta:
        model = Worker
        fields = ["id", "platform", "external_id", "blocked", "blocked_reason", "created_at"]
        read_only_fields = fields


class BlockSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=250)


# --- Views --------------------------------------------------------------------------------


@extend_schema_view(
    list=extend_schema(summary="List studies"),
    retrieve=extend_schema(summary="A study with its conditions"),
    create=extend_schema(summary="Create a draft study (conditions from `shots`)"),
    partial_update=extend_schema(summary="Change a study's settings (split and conditions only before anyone joined)"),
    update=extend_schema(summary="Replace a study's settings"),
    destroy=extend_schema(summary="Delete a study nobody has joined"),
)
class StudyViewSet(viewsets.ModelViewSet[Study]):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    role_operations = {
        "list": Operation.WATCH,
        "retrieve": Operation.WATCH,
        "launch_check": Operation.WATCH,
        "counts": Operation.WATCH,
        "create": Operation.CONFIGURE,
        "update": Operation.CONFIGURE,
        "partial_update": Operation.CONFIGURE,
        "destroy": Operation.CONFIGURE,
        "standard_design": Operation.CONFIGURE,
        "status": Operation.CHANGE_STATUS,
    }
    serializer_class = StudySerializer
    queryset = Study.objects.select_related("task").prefetch_related("conditions")

    def perform_create(self, serializer: BaseSerializer[Study]) -> None:
        data = dict(serializer.validated_data)
        try:
            serializer.instance = studies.study_create(
                task=data.pop("task"),
                slug=data.pop("slug"),
                name=data.pop("name", ""),
                split_number=data.pop("split_number", 1),
                shots=data.pop("shots", studies.STANDARD_SHOTS),
                actor=self.request.user,
                **data,
            )
        except DjangoValidationError as exc:
            raise _as_400(exc) from None

    def perform_update(self, serializer: BaseSerializer[Study]) -> None:
        study = serializer.instance
        assert study is not None  # an update's serializer is bound to the study it updates
        data = dict(serializer.validated_data)
        for fixed in ("task", "slug"):
            data.pop(fixed, None)
        try:
            serializer.instance = studies.study_update(
                study=study,
                split_number=data.pop("split_number", None),
                shots=data.pop("shots", None),
                actor=self.request.user,
                **data,
            )
        except DjangoValidationError as exc:
            raise _as_400(exc) from None

    def perform_destroy(self, instance: Study) -> None:
        try:
            studies.study_delete(study=instance, actor=self.request.user)
        except DjangoValidationError as exc:
            raise _as_400(exc) from None

    @extend_schema(summary="Open, pause or close a study", request=StatusChangeSerializer, responses=StudySerializer)
    @action(detail=True, methods=["post"])
    def status(self, request: Request, pk: str | None = None) -> Response:
        serializer = StatusChangeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if data["override_blockers"] and data["status"] == Study.Status.OPEN:
            require(request, Operation.OPEN_DESPITE_BLOCKERS)
        try:
            if data["rest"]:
                # audit: open_rest before=status,rest_opened_at after=status,rest_opened_at
                study = launch.open_rest(study=self.get_object())
            elif data["status"] == Study.Status.OPEN and data.get("grace_minutes") is None:
                study = launch.open_study(
                    study=self.get_object(), override=data["override_blockers"], by=request.user, pilot=data["pilot"]
                )
            else:
                study = studies.change_status(
                    study=self.get_object(),
                    to_status=data["status"],
                    grace_minutes=data.get("grace_minutes"),
                    actor=request.user,
                )
        except DjangoValidationError as exc:
            raise _as_400(exc) from None
        return Response(StudySerializer(self.get_queryset().get(pk=study.pk)).data)

    @extend_schema(summary="What blocks the study's launch and what deserves a look", responses=LaunchCheckSerializer)
    @action(detail=True, methods=["get"], url_path="launch-check")
    def launch_check(self, request: Request, pk: str | None = None) -> Response:
        return Response(LaunchCheckSerializer(launch.launch_check(self.get_object()).as_dict()).data)

    @extend_schema(
        summary="Per condition: slots filled, in training, in test, completed, excluded, abandoned",
        responses=ConditionCountsSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def counts(self, request: Request, pk: str | None = None) -> Response:
        study = self.get_object()
        return Response(ConditionCountsSerializer(slots.condition_counts([study])[study.pk], many=True).data)

    @extend_schema(
        summary="Create the standard CLUES design (0/10/20/30 shots x 3 workers) for a task",
        request=StandardDesignSerializer,
        responses={201: StudySerializer},
    )
    @action(detail=False, methods=["post"], url_path="standard-design")
    def standard_design(self, request: Request) -> Response:
        serializer = StandardDesignSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if data["open"]:
            require(request, Operation.CHANGE_STATUS)
        if data["open"] and data["override_blockers"]:
            require(request, Operation.OPEN_DESPITE_BLOCKERS)
        try:
            with transaction.atomic():  # refused to open: nothing is created
                study = studies.create_standard_design(
                    task=data["task"],
                    split_number=data["split_number"],
                    slug=data.get("slug") or None,
                    name=data.get("name", ""),
                    workers_per_condition=data["workers_per_condition"],
                    filter_rule=data["filter_rule"],
                    filter_threshold=data["filter_threshold"],
                    filter_reference=data["filter_reference"],
                    language=data["language"],
                    base_reward=data["base_reward"],
                    actor=request.user,
                )
                if data["open"]:
                    study = launch.open_study(study=study, override=data["override_blockers"], by=request.user)
        except DjangoValidationError as exc:
            raise _as_400(exc) from None
        return Response(StudySerializer(self.get_queryset().get(pk=study.pk)).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    list=extend_schema(
        summary="List conditions", parameters=[OpenApiParameter("study", str, description="Study slug")]
    ),
    retrieve=extend_schema(summary="A condition"),
)
class ConditionViewSet(viewsets.ReadOnlyModelViewSet[Condition]):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    role_operations = {"list": Operation.WATCH, "retrieve": Operation.WATCH}
    serializer_class = ConditionSerializer

    def get_queryset(self) -> QuerySet[Condition]:
        qs = Condition.objects.select_related("study").order_by("study_id", "shots")
        if slug := self.request.query_params.get("study"):
            qs = qs.filter(study__slug=slug)
        return qs


@extend_schema_view(
    list=extend_schema(
        summary="List participations",
        parameters=[
            OpenApiParameter("study", str, description="Study slug"),
            OpenApiParameter("state", str, enum=Participation.State.values),
        ],
        responses={200: ParticipationSerializer(many=True), 400: ErrorSerializer},
    ),
    retrieve=extend_schema(summary="A participation with its events and filter decisions"),
)
class ParticipationViewSet(viewsets.ReadOnlyModelViewSet[Participation]):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    # A participation names its worker: listing them is an export of identifiers.
    role_operations = {
        "list": Operation.EXPORT_IDENTIFIERS,
        "retrieve": Operation.EXPORT_IDENTIFIERS,
        "override": Operation.READMIT,  # and EXCLUDE when it excludes (both the PI's)
    }
    serializer_class = ParticipationSerializer

    def get_queryset(self) -> QuerySet[Participation]:
        qs = Participation.objects.select_related("study", "condition", "worker").prefetch_related(
            "events__actor", "filter_decisions__decided_by", "attention_decisions", "integrity_decisions"
        )
        if slug := self.request.query_params.get("study"):
            qs = qs.filter(study__slug=slug)
        if state := self.request.query_params.get("state"):
            if state not in Participation.State.values:
                raise ValidationError({"state": f"Unknown state {state!r}; one of {Participation.State.values}."})
            qs = qs.filter(state=state)
        return qs

    @extend_schema(
        summary="Override the training filter: readmit or exclude, with a logged reason",
        request=OverrideSerializer,
        responses=ParticipationSerializer,
    )
    @action(detail=True, methods=["post"])
    def override(self, request: Request, pk: str | None = None) -> Response:
        serializer = OverrideSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        require(request, Operation.READMIT if serializer.validated_data["admit"] else Operation.EXCLUDE)
        participation = self.get_object()
        try:
            overrides.override(
                participation,
                admit=serializer.validated_data["admit"],
                reason=serializer.validated_data["reason"],
                actor=_admin(request),
            )
        except (lifecycle.InvalidTransition, ValueError, IntegrityError) as exc:
            raise ValidationError({"state": [str(exc)]}) from None
        return Response(ParticipationSerializer(self.get_queryset().get(pk=participation.pk)).data)


_YES_NO = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


@extend_schema_view(
    list=extend_schema(summary="List workers", parameters=[OpenApiParameter("blocked", bool)]),
    retrieve=extend_schema(summary="A worker"),
)
class WorkerViewSet(viewsets.ReadOnlyModelViewSet[Worker]):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    role_operations = {
        "list": Operation.EXPORT_IDENTIFIERS,
        "retrieve": Operation.EXPORT_IDENTIFIERS,
        "block": Operation.BLOCK,
        "unblock": Operation.BLOCK,
    }
    serializer_class = WorkerSerializer

    def get_queryset(self) -> QuerySet[Worker]:
        qs = Worker.objects.all()
        blocked = self.request.query_params.get("blocked")
        if blocked is not None:
            # Anything but a yes or a no is refused rather than read as "not blocked".
            answer = _YES_NO.get(blocked.strip().lower())
            if answer is None:
                raise ValidationError({"blocked": [f"Give true or false, not {blocked!r}."]})
            qs = qs.filter(blocked=answer)
        return qs

    @extend_schema(summary="Block a worker from every study", request=BlockSerializer, responses=WorkerSerializer)
    @action(detail=True, methods=["post"])
    def block(self, request: Request, pk: str | None = None) -> Response:
        serializer = BlockSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            worker = blocklist.block_worker(
                worker=self.get_object(), reason=serializer.validated_data["reason"], actor=_admin(request)
            )
        except DjangoValidationError as exc:
            raise _as_400(exc) from None
        return Response(WorkerSerializer(worker).data)

    @extend_schema(summary="Unblock a worker", request=None, responses=WorkerSerializer)
    @action(detail=True, methods=["post"])
    def unblock(self, request: Request, pk: str | None = None) -> Response:
        return Response(
            WorkerSerializer(blocklist.unblock_worker(worker=self.get_object(), actor=_admin(request))).data
        )


class _FormatIsOurs(DefaultContentNegotiation):
    """``?format=`` names the export's shape here, not a DRF renderer; errors are JSON."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


class ParticipantExportView(APIView):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    role_operations = {"get": Operation.EXPORT_IDENTIFIERS}
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _FormatIsOurs

    @extend_schema(
        summary="Every worker who took part in a task, as a Prolific blocklist or an MTurk qualification CSV",
        parameters=[
            OpenApiParameter("task", str, required=True, description="Task slug"),
            OpenApiParameter("format", str, required=True, enum=list(blocklist.FORMATS)),
            OpenApiParameter("qualification", str, description="MTurk qualification name (default took-part-<task>)"),
        ],
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="Prolific: one participant id a line"),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="MTurk worker CSV"),
            400: ErrorSerializer,
            404: OpenApiResponse(ErrorSerializer, description="No task with that slug"),
        },
    )
    def get(self, request: Request) -> HttpResponse:
        slug = request.query_params.get("task", "")
        if not slug:
            raise ValidationError({"task": ["Give the task slug, e.g. ?task=sst2&format=prolific."]})
        task = get_object_or_404(Task, slug=slug)
        try:
            content, content_type, filename = blocklist.export_participants(
                task=task,
                fmt=request.query_params.get("format", ""),
                qualification_name=request.query_params.get("qualification", ""),
                actor=request.user,
            )
        except DjangoValidationError as exc:
            raise _as_400(exc) from None
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
