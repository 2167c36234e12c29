"""Reports API (admins only): the table, per-annotator scores, the human-evaluation statement, export jobs.

Thin views over annotation.reporting; every number comes from the same
services the command line, the admin and the dashboard use. Errors are the
API's one shape (annotation.api.errors): a ReportError (unknown study, bad
option) is a 400 ``invalid``.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotation.api.errors import ErrorResponsesSchema, ErrorSerializer
from annotation.api.permissions import RolePermission, require
from annotation.models import ExportJob, Study
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.exports import EXPORT_KINDS, export_job_create, export_operation
from annotation.reporting.fewclue_table import build_fewclue_table
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.scores import annotator_rows
from annotation.reporting.selection import select_studies
from annotation.reporting.statement import STATEMENT_FORMATS, build_statement, render_statement, statement_datasheet
from annotation.reporting.tables import build_table
from annotation.services.roles.operations import Operation
from tasks_app.scoring import SKIP_POLICIES

_METRIC_PARAMETERS = [
    OpenApiParameter(
        "skip_policy",
        OpenApiTypes.STR,
        enum=list(SKIP_POLICIES),
        description="How a skipped test item is scored: zero (default), empty (as the empty answer) or "
        "exclude (left out, coverage reported).",
    ),
    OpenApiParameter(
        "exclude_skips",
        OpenApiTypes.BOOL,
        description="Deprecated alias: true is skip_policy=exclude.",
        deprecated=True,
    ),
    OpenApiParameter("ddof", OpenApiTypes.INT, enum=[0, 1], description="0: population std (default), 1: sample std."),
]
_INTERVAL_PARAMETERS = [
    OpenApiParameter("seed", OpenApiTypes.INT, description="Bootstrap seed (default 20211206)."),
    OpenApiParameter("resamples", OpenApiTypes.INT, description="Bootstrap resamples, 100 to 20000 (default 2000)."),
    OpenApiParameter(
        "intervals", OpenApiTypes.INT, enum=[1, 0], description="Markdown/LaTeX print the 95% intervals (1, default)."
    ),
]
_BENCHMARK_PARAMETER = OpenApiParameter(
    "benchmark",
    OpenApiTypes.STR,
    enum=["clues", "fewclue"],
    description="The table's shape: clues (default: shot levels x tasks, with intervals) or fewclue (Human rows "
    "per worker and by majority vote over FewCLUE's nine tasks and their mean, and the paper's row).",
)
_STUDIES_PARAMETER = OpenApiParameter(
    "studies", OpenApiTypes.STR, required=True, description="Comma-separated study slugs or ids, or 'all'."
)


def _studies_from_query(request: Request, benchmark: str | None = None) -> list[Study]:
    """The studies named, or ``all``: every study (of ``benchmark``'s tasks, for a table in its shape)."""
    raw = request.query_params.get("studies", "")
    if raw.strip() == "all":
        return select_studies(all_studies=True, benchmark=benchmark)
    return select_studies(refs=raw.split(","))


class AnnotatorSerializer(serializers.Serializer):
    participation_id = serializers.IntegerField()
    study_slug = serializers.CharField()
    task_slug = serializers.CharField()
    shots = serializers.IntegerField()
    platform = serializers.CharField()
    worker_id = serializers.CharField()
    state = serializers.CharField()
    test_s1 = serializers.FloatField(allow_null=True, help_text="0..1")
    test_items = serializers.IntegerField()
    test_total = serializers.IntegerField()
    skips = serializers.IntegerField()
    coverage = serializers.FloatField(allow_null=True)
    training_s1 = serializers.FloatField(allow_null=True)
    training_items = serializers.IntegerField()
    active_ms = serializers.IntegerField()
    paid_seconds = serializers.FloatField()
    pay = serializers.DecimalField(max_digits=10, decimal_places=2)
    bonus = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)  # null: reward not set
    effective_hourly = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)
    below_rate = serializers.BooleanField()


class TableView(APIView):
    permission_classes = [RolePermission]
    role_operations = {"get": Operation.EXPORT_IDENTIFIERS}  # its rows name each annotator (and who was set apart)
    schema = ErrorResponsesSchema()

    @extend_schema(
        operation_id="reports_table",
        summary="The human-performance table for the given studies, with bootstrap intervals and model gaps",
        parameters=[_STUDIES_PARAMETER, _BENCHMARK_PARAMETER, *_METRIC_PARAMETERS, *_INTERVAL_PARAMETERS],
        responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        benchmark = request.query_params.get("benchmark", "clues")
        studies = _studies_from_query(request, benchmark)
        options = MetricOptions.from_params(request.query_params)
        if benchmark == "fewclue":
            fewclue = build_fewclue_table(studies=studies, options=options)
            return Response({"studies": [s.slug for s in studies], "options": options.as_dict(), **fewclue.as_dict()})
        if benchmark != "clues":
            raise ReportError(f"benchmark must be clues or fewclue, not {benchmark!r}")
        intervals = IntervalOptions.from_params(request.query_params)
        table = build_table(studies=studies, options=options, intervals=intervals)
        return Response({"studies": [s.slug for s in studies], "options": options.as_dict(), **table.as_dict()})


class AnnotatorsView(APIView):
    permission_classes = [RolePermission]
    role_operations = {"get": Operation.EXPORT_IDENTIFIERS}  # one row per worker, by their platform id
    schema = ErrorResponsesSchema()

    @extend_schema(
        operation_id="reports_annotators",
        summary="Per-annotator scores, time and pay (all states; only completed ones enter the table)",
        parameters=[_STUDIES_PARAMETER, *_METRIC_PARAMETERS],
        responses={200: AnnotatorSerializer(many=True), 400: ErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        studies = _studies_from_query(request)
        options = MetricOptions.from_params(request.query_params)
        return Response(AnnotatorSerializer(annotator_rows(studies=studies, options=options), many=True).data)


class ExportRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(EXPORT_KINDS))
    studies = serializers.ListField(child=serializers.CharField(), allow_empty=True, default=list)
    all = serializers.BooleanField(default=False)
    intervals = serializers.BooleanField(default=True, help_text="Markdown/LaTeX print the 95% intervals.")
    skip_policy = serializers.ChoiceField(choices=list(SKIP_POLICIES), required=False)
    exclude_skips = serializers.BooleanField(default=False, help_text="Deprecated alias: true is skip_policy=exclude.")
    ddof = serializers.ChoiceField(choices=[0, 1], default=0)


class ExportJobSerializer(serializers.ModelSerializer):
    status_url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()
    provenance_url = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = [
            "id",
            "kind",
            "params",
            "status",
            "error",
            "created_at",
            "started_at",
            "heartbeat_at",
            "attempts",
            "finished_at",
            "status_url",
            "download_url",
            "provenance_url",
        ]

    def get_status_url(self, job: ExportJob) -> str:
        return reverse("reports-export-status", args=[job.pk], request=self.context.get("request"))

    def get_download_url(self, job: ExportJob) -> str | None:
        if job.status != ExportJob.Status.DONE or not job.file:
            return None
        return reverse("dashboard:export-download", args=[job.pk], request=self.context.get("request"))

    def get_provenance_url(self, job: ExportJob) -> str | None:
        """The file's provenance as JSON: for a CSV, its only copy (the CSV is a plain table)."""
        if job.status != ExportJob.Status.DONE or job.provenance is None:
            return None
        return reverse("dashboard:export-job-provenance", args=[job.pk], request=self.context.get("request"))


class ExportRequestView(APIView):
    permission_classes = [RolePermission]
    role_operations = {"post": Operation.EXPORT_RESULTS}  # and EXPORT_IDENTIFIERS for a kind that holds them
    schema = ErrorResponsesSchema()

    @extend_schema(
        operation_id="reports_export_create",
        summary="Queue an export (table, raw annotations, payments, analyses, plot)",
        request=ExportRequestSerializer,
        responses={202: ExportJobSerializer, 400: ErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        payload = ExportRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        require(request, export_operation(data["kind"]))
        job = export_job_create(
            kind=data["kind"],
            study_refs=data["studies"],
            all_studies=data["all"],
            options=MetricOptions.from_params(data),
            intervals=IntervalOptions(in_text=data["intervals"]),
            user=request.user,
        )
        return Response(ExportJobSerializer(job, context={"request": request}).data, status=status.HTTP_202_ACCEPTED)


class ExportStatusView(APIView):
    permission_classes = [RolePermission]
    schema = ErrorResponsesSchema()

    @extend_schema(
        operation_id="reports_export_status",
        summary="An export job's status",
        responses={200: ExportJobSerializer, 404: ErrorSerializer},
    )
    def get(self, request: Request, job_id: int) -> Response:
        job = ExportJob.objects.filter(pk=job_id).first()
        if job is None:
            raise NotFound("no such export job")
        return Response(ExportJobSerializer(job, context={"request": request}).data)


class StatementSectionSerializer(serializers.Serializer):
    title = serializers.CharField()
    text = serializers.CharField()


class StatementSerializer(serializers.Serializer):
    study = serializers.CharField()
    markup = serializers.ChoiceField(choices=list(STATEMENT_FORMATS))
    text = serializers.CharField(help_text="The paragraph and table, rendered in the format.")
    sections = StatementSectionSerializer(many=True)
    header = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    datasheet = serializers.DictField(
        help_text="The JSON form: each field mapped to its HEDS 3.0 questions and ACL checklist items "
        "(docs/schemas/statement.schema.json)."
    )


class StatementView(APIView):
    permission_classes = [RolePermission]
    schema = ErrorResponsesSchema()

    @extend_schema(
        operation_id="reports_statement",
        summary="The human-evaluation statement of one study (paragraph + per-condition table)",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.STR, required=True, description="A study slug or id."),
            OpenApiParameter(
                "markup",
                OpenApiTypes.STR,
                enum=list(STATEMENT_FORMATS),
                description="Markdown (default), LaTeX or JSON (the HEDS form).",
            ),
            *_METRIC_PARAMETERS,
            *_INTERVAL_PARAMETERS,
        ],
        responses={200: StatementSerializer, 400: ErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        fmt = request.query_params.get("markup", "markdown")  # not "format": DRF reads that to pick a renderer
        (study,) = select_studies(refs=[request.query_params.get("study", "")])
        options = MetricOptions.from_params(request.query_params)
        intervals = IntervalOptions.from_params(request.query_params)
        statement = build_statement(study=study, options=options, intervals=intervals)
        text = render_statement(statement, fmt)
        return Response(
            {
                "study": study.slug,
                "markup": fmt,
                "text": text,
                "sections": [{"title": s.title, "text": s.text} for s in statement.sections],
                "header": statement.header,
                "rows": statement.rows,
                "datasheet": statement_datasheet(statement),
            }
        )
