"""POST /api/participants/withdraw/: a participant's withdrawal, its dry run or its run (docs/participants.md).

The same service function as ``manage.py withdraw_participant`` and the admin's action
(``annotation.services.rights.withdrawal``); its refusals (unknown id, another study's participant, a second
withdrawal) answer in the API's error shape, and nothing changes.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.errors import ErrorResponsesSchema, ErrorSerializer
from annotation.api.permissions import RolePermission
from annotation.models import Worker
from annotation.services.rights import withdrawal
from annotation.services.roles.operations import Operation


class WithdrawalRequestSerializer(serializers.Serializer):
    platform = serializers.ChoiceField(choices=[p.value for p in Worker.Platform if p != Worker.Platform.PREVIEW])
    id = serializers.CharField(max_length=128, help_text="The platform's participant id.")
    study = serializers.CharField(
        max_length=100, required=False, allow_blank=True, help_text="A study's slug: refuse unless they took part."
    )
    run = serializers.BooleanField(default=False, help_text="false (default): the dry run only.")


class WithdrawalReportSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField()
    pseudonym = serializers.CharField(help_text="The keyed hash that stands for their identifier.")
    lines = serializers.ListField(child=serializers.CharField(), help_text="What goes, what is kept.")


class WithdrawalView(APIView):
    schema = ErrorResponsesSchema()
    permission_classes = [RolePermission]
    role_operations = {"post": Operation.WITHDRAW}  # the dry run too: it lists the participant's data

    @extend_schema(
        summary="Withdraw a participant: the dry run, or (run: true) the erasure",
        request=WithdrawalRequestSerializer,
        responses={
            200: WithdrawalReportSerializer,
            400: ErrorSerializer,
            404: OpenApiResponse(ErrorSerializer, description="No such participant or study"),
            409: OpenApiResponse(ErrorSerializer, description="Already withdrawn"),
        },
    )
    def post(self, request: Request) -> Response:
        data = WithdrawalRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        run = withdrawal.withdraw if given["run"] else withdrawal.plan_only
        done = run(
            platform=given["platform"],
            external_id=given["id"],
            study_slug=given.get("study") or None,
            run_by=request.user.get_username(),
            actor=request.user,
        )
        return Response({"dry_run": not given["run"], "pseudonym": done.pseudonym, "lines": done.lines()})
