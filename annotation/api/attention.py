"""The admins' API for attention checks: /api/attention-checks/ and the per-worker report.

Thin, as the rest of the admins' API: serializers check shapes, ``annotation.services.verdicts.attention`` checks
the rules (the span in the text, the label among the task's, the position within the test set) and a
refused definition is a 400 that names the field and stores nothing.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.api.errors import ErrorResponsesSchema, ErrorSerializer
from annotation.api.permissions import RolePermission
from annotation.models import AttentionCheck, Study
from annotation.services.roles.operations import Operation
from annotation.services.verdicts import attention

INT_MAX = 2147483647


class AttentionCheckSerializer(serializers.ModelSerializer[AttentionCheck]):
    study = serializers.SlugRelatedField(slug_field="slug", queryset=Study.objects.all())
    position = serializers.IntegerField(min_value=1, max_value=INT_MAX)
    context = serializers.CharField(max_length=attention.definitions.MAX_TEXT)  # type: ignore[assignment]
    question = serializers.CharField(max_length=attention.definitions.MAX_TEXT)
    expected_label = serializers.CharField(max_length=50, required=False, allow_blank=True, default="")
    expected_spans = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, default=list, max_length=50
    )

    class Meta:
        model = AttentionCheck
        fields = [
            "id",
            "study",
            "position",
            "context",
            "question",
            "expected_label",
            "expected_spans",
            "source",
            "created_at",
        ]
        read_only_fields = ["id", "source", "created_at"]


class GenerateSerializer(serializers.Serializer):
    study = serializers.SlugRelatedField(slug_field="slug", queryset=Study.objects.all())
    every = serializers.IntegerField(min_value=1, max_value=INT_MAX, required=False)
    positions = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=INT_MAX), required=False, max_length=1000
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("every" in attrs) == ("positions" in attrs):
            raise ValidationError("Give either every (one check every N items) or positions, not both.")
        return attrs


class WorkerReportSerializer(serializers.Serializer):
    participation = serializers.IntegerField()
    worker = serializers.CharField()
    platform = serializers.CharField()
    shots = serializers.IntegerField()
    state = serializers.CharField()
    checks = serializers.IntegerField()
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    pending = serializers.IntegerField()
    decision = serializers.CharField(help_text="passed, review, excluded; empty before the end of the test step")


_STUDY = OpenApiParameter("study", str, description="Study slug")


@extend_schema_view(
    list=extend_schema(summary="List attention checks", parameters=[_STUDY]),
    retrieve=extend_schema(summary="An attention check"),
    create=extend_schema(summary="Add an attention check written by the researcher"),
    update=extend_schema(summary="Replace an attention check no worker has been given"),
    partial_update=extend_schema(summary="Change an attention check no worker has been given"),
    destroy=extend_schema(summary="Delete an attention check no worker has been given"),
)
class AttentionCheckViewSet(viewsets.ModelViewSet[AttentionCheck]):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    role_operations = {
        "list": Operation.WATCH,
        "retrieve": Operation.WATCH,
        "create": Operation.CONFIGURE,
        "update": Operation.CONFIGURE,
        "partial_update": Operation.CONFIGURE,
        "destroy": Operation.CONFIGURE,
        "generate": Operation.CONFIGURE,
        "report": Operation.EXPORT_IDENTIFIERS,  # one row per worker, by their platform id
    }
    serializer_class = AttentionCheckSerializer

    def get_queryset(self) -> QuerySet[AttentionCheck]:
        qs = AttentionCheck.objects.select_related("study").order_by("study_id", "position")
        if slug := self.request.query_params.get("study"):
            qs = qs.filter(study__slug=slug)
        return qs

    def perform_create(self, serializer: serializers.BaseSerializer[AttentionCheck]) -> None:
        # An AttentionCheckError is answered 400 invalid with its field (errors.exception_handler).
        serializer.instance = attention.definitions.create_check(actor=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer: serializers.BaseSerializer[AttentionCheck]) -> None:
        check = serializer.instance
        assert check is not None
        data = dict(serializer.validated_data)
        if data.pop("study", check.study) != check.study:
            raise ValidationError({"study": ["A check cannot move to another study."]})
        serializer.instance = attention.definitions.update_check(check, actor=self.request.user, **data)

    def perform_destroy(self, instance: AttentionCheck) -> None:
        attention.definitions.delete_check(instance, actor=self.request.user)

    @extend_schema(
        summary="Add template attention checks: one every N test items, or at the positions given",
        request=GenerateSerializer,
        responses={201: AttentionCheckSerializer(many=True), 400: ErrorSerializer},
    )
    @action(detail=False, methods=["post"])
    def generate(self, request: Request) -> Response:
        serializer = GenerateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        study = serializer.validated_data["study"]
        if "every" in serializer.validated_data:
            taken = set(study.attention_checks.values_list("position", flat=True))
            positions = [p for p in attention.definitions.positions_every(study, serializer.validated_data["every"])]
            positions = [p for p in positions if p not in taken]
        else:
            positions = serializer.validated_data["positions"]
        made = attention.definitions.generate(study=study, positions=positions, actor=request.user)
        return Response(AttentionCheckSerializer(made, many=True).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Per worker of a study: attention checks passed and failed, and the rule's decision",
        parameters=[OpenApiParameter("study", str, required=True, description="Study slug")],
        responses={
            200: WorkerReportSerializer(many=True),
            400: ErrorSerializer,
            404: OpenApiResponse(ErrorSerializer, description="No study with that slug"),
        },
    )
    @action(detail=False, methods=["get"])
    def report(self, request: Request) -> Response:
        slug = request.query_params.get("study", "")
        if not slug:
            raise ValidationError({"study": ["Give the study slug, e.g. ?study=sst2-split1."]})
        study = get_object_or_404(Study, slug=slug)
        rows = [r.as_dict() for r in attention.reports.report(study)]
        return Response(WorkerReportSerializer(rows, many=True).data)
