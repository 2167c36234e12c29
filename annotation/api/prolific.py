"""POST /api/studies/{id}/prolific/{operation}/: a Prolific operation's dry run, or its run (docs/prolific.md);
POST /api/studies/{id}/prolific-messages/: a message to the study's participants, its dry run or its sending."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.errors import ErrorResponsesSchema, ErrorSerializer
from annotation.api.permissions import RolePermission, require
from annotation.models import Study
from annotation.services.prolific import messages, operations
from annotation.services.prolific.message_templates import TEMPLATES
from annotation.services.roles import operations as roles


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
    permission_classes = [RolePermission]  # and the operation's own right (roles.PROLIFIC), dry run or run

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
        require(request, roles.prolific_operation(operation))
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


class MessageRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(messages.KINDS))
    to = serializers.CharField(required=False, allow_blank=True, max_length=128, help_text="kind one: the Prolific id.")
    template = serializers.ChoiceField(choices=sorted(TEMPLATES), required=False, allow_blank=True)
    language = serializers.CharField(required=False, allow_blank=True, max_length=10)
    subject = serializers.CharField(required=False, allow_blank=True, max_length=200)
    text = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    again = serializers.CharField(required=False, allow_blank=True, max_length=50)
    run = serializers.BooleanField(default=False, help_text="false (default): the dry run only.")


class OutgoingSerializer(serializers.Serializer):
    kind = serializers.CharField()
    prolific_study = serializers.CharField()
    recipients = serializers.ListField(child=serializers.CharField())
    subject = serializers.CharField(allow_blank=True)
    body = serializers.CharField()
    key = serializers.CharField(help_text="Our own id of the message (a broadcast's id on Prolific).")
    state = serializers.CharField(help_text="to do, done, uncertain or failed.")
    note = serializers.CharField(allow_blank=True)
    template = serializers.CharField(allow_blank=True)
    language = serializers.CharField(allow_blank=True)


class MessagesReportSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField()
    messages = OutgoingSerializer(many=True)


class ProlificMessageView(APIView):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    role_operations = {"post": roles.Operation.MESSAGE}  # the dry run too: it lists participants

    @extend_schema(
        summary="A message to a study's Prolific participants (one, bulk, broadcast): the dry run, or the run",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH, description="Study id")],
        request=MessageRequestSerializer,
        responses={
            200: MessagesReportSerializer,
            400: ErrorSerializer,
            404: OpenApiResponse(ErrorSerializer, description="No such study"),
            409: OpenApiResponse(ErrorSerializer, description="The Prolific integration is off (no token)"),
        },
    )
    def post(self, request: Request, id: int) -> Response:
        study = get_object_or_404(Study, pk=id)
        data = MessageRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        what = {
            "study": study,
            "kind": given["kind"],
            "text": given.get("text", ""),
            "subject": given.get("subject", ""),
            "template": given.get("template") or None,
            "language": given.get("language") or None,
            "participant": given.get("to") or None,
            "again": given.get("again", ""),
        }
        # Sending without the operations on is 409 prolific_off (make_client); the dry run needs no Prolific.
        sent_by = request.user.get_username()
        if given["run"]:
            items = messages.send(**what, sent_by=sent_by, actor=request.user)
        else:
            items = messages.plan(**what, actor=request.user)
        return Response({"dry_run": not given["run"], "messages": [i.as_dict() for i in items]})
