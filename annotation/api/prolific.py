"""POST /api/studies/{id}/prolific/{operation}/: a Prolific operation's dry run, or its run (docs/prolific.md)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.errors import ErrorResponsesSchema, ErrorSerializer
from annotation.models import Study
from annotation.services.prolific import operations


class ProlificRunSerializer(serializers.Serializer):
    run = serializers.BooleanField(default=False, help_text="false (default): the dry run only.")


class ProlificRowSerializer(serializers.Serializer):
    participation_id = serializers.IntegerField()
    participant = serializers.CharField()
    study = serializers.CharField()
    action = serializers.CharField()
    state = serializers.ChoiceField(choices=list(operations.STATES))
    note = serializers.CharField(allow_blank=True)
    submission = serializers.CharField(allow_blank=True)
    prolific_study = serializers.CharField(allow_blank=True)
    amount = serializers.CharField(allow_null=True, help_text="Bonus, in the study's currency.")
    currency = serializers.CharField(allow_blank=True)


class ProlificReportSerializer(serializers.Serializer):
    operation = serializers.CharField()
    study = serializers.CharField()
    dry_run = serializers.BooleanField()
    counts = serializers.DictField(child=serializers.IntegerField())
    total = serializers.CharField(help_text="bonus: the bonuses; places: the reward of the places added.")
    notes = serializers.ListField(child=serializers.CharField())
    rows = ProlificRowSerializer(many=True)


class ProlificOperationView(APIView):
    schema = ErrorResponsesSchema()
    permission_classes = [IsAdminUser]

    @extend_schema(
        summary="A Prolific operation on a study: the dry run, or (run: true) the run",
        parameters=[
            OpenApiParameter("id", int, OpenApiParameter.PATH, description="Study id"),
            OpenApiParameter("operation", str, OpenApiParameter.PATH, enum=list(operations.OPERATIONS)),
        ],
        request=ProlificRunSerializer,
        responses={
            200: ProlificReportSerializer,
            400: ErrorSerializer,
            404: OpenApiResponse(ErrorSerializer, description="No such study or operation"),
            409: OpenApiResponse(ErrorSerializer, description="The Prolific integration is off (no token)"),
        },
    )
    def post(self, request: Request, id: int, operation: str) -> Response:
        if operation not in operations.OPERATIONS:
            raise NotFound(f"No operation {operation!r}; one of {', '.join(operations.OPERATIONS)}.")
        study = get_object_or_404(Study.objects.select_related("task"), pk=id)
        data = ProlificRunSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if not operations.enabled():
            raise operations.ProlificDisabled(operations.OFF_MESSAGE)  # 409 prolific_off
        if data.validated_data["run"]:
            report = operations.run(operation=operation, study=study, actor=request.user)
        else:
            report = operations.plan(operation=operation, study=study, actor=request.user)
        return Response(report.as_dict())
