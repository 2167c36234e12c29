"""The team's dashboard: live progress per study, condition and worker; the table, the plot, every export.

Every view names the operation it is (annotation.web.roles, docs/team.md): watching for the pages, an
export's kind for an export or a download, rehearsing for the Rehearse button. A page shows each control
only to a user the view it sends to lets in, by the same check (``may`` in the templates, ``_exportable``,
``_prolific_links``); where a role may not, a note says who may.

Read-only pages over the reporting services, plus two POSTs that queue a job:
an export (the same service the admin action and the API call) and a
rehearsal of a study (annotation.reporting.rehearsal_jobs), whose progress a
small JSON endpoint gives and whose report is downloaded when done.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.models import ExportJob, RehearsalJob, Study
from annotation.reporting import page_figures
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.exports import (
    CSV_KINDS,
    EXPORT_KINDS,
    export_filename,
    export_job_create,
    export_operation,
    export_to_bytes,
    export_with_provenance,
    iter_annotation_lines,
    kind_benchmark,
    provenance_json,
    provenance_sidecar_name,
    record_export,
)
from annotation.reporting.figure_keys import study_keys
from annotation.reporting.monitoring import live_payload, needs_attention, notices_by_study, progress
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.planning import pilot_section
from annotation.reporting.plots import PLOT_FORMATS, all_tasks_plot, task_plot
from annotation.reporting.provenance import reproducibility_header
from annotation.reporting.rehearsal_jobs import REPORT_FORMATS, job_status, rehearsal_job_create
from annotation.reporting.selection import of_benchmark, select_studies
from annotation.reporting.statement import STATEMENT_FORMATS, build_statement, render_statement
from annotation.services.roles.operations import Operation, holders, may, prolific_operation
from annotation.services.studies import launch, preview
from annotation.services.verdicts import integrity
from annotation.web.roles import denied, requires, team_context
from tasks_app.scoring import SKIP_EMPTY, SKIP_EXCLUDE, SKIP_ZERO

LIVE_SECONDS = 5  # how often the pages poll their live feed


def _selection(request: HttpRequest, benchmark: str | None = None) -> tuple[list[Study], MetricOptions, str]:
    """The studies asked for (``all`` by default: of ``benchmark``'s tasks, when one is given)."""
    raw = request.GET.get("studies", "all")
    if raw == "all":
        studies = select_studies(all_studies=True, benchmark=benchmark)
    else:
        studies = select_studies(refs=raw.split(","))
    return studies, MetricOptions.from_params(request.GET), raw


def _benchmark_tables(studies: list[Study], options: MetricOptions) -> dict:
    """The CLUES table of the studies of CLUES-shaped tasks and FewCLUE's of FewCLUE's: each its own tasks
    (kept until their data changes: annotation.reporting.page_figures)."""
    clues, fewclue = of_benchmark(studies, "clues"), of_benchmark(studies, "fewclue")
    keys = study_keys(studies)
    tables: dict = {"table": page_figures.table(clues, keys, options) if clues else None}
    if fewclue:
        found = page_figures.fewclue_table(fewclue, keys, options)
        tables["fewclue_error" if isinstance(found, str) else "fewclue_table"] = found
    return tables


AGREEMENT_NAMES = {"fleiss_kappa": "Fleiss’ κ", "pairwise_s1": "pairwise S1"}


def _agreement_text(row: dict) -> dict:
    """The agreement of one condition in words: the measure's name, and why it is missing when it is."""
    agreement = dict(row.get("agreement") or {})
    agreement["name"] = AGREEMENT_NAMES.get(agreement.get("measure", ""), agreement.get("measure", ""))
    if agreement.get("value") is None:
        if row.get("annotators", 0) < 2:
            agreement["why"] = "needs two or more completed annotators"
        elif not agreement.get("items"):
            agreement["why"] = "no item has an answer from every annotator"
        else:
            agreement["why"] = "undefined: every answer falls in one category"
    return {**row, "agreement": agreement}


def _option_links(studies_raw: str | None, options: MetricOptions) -> dict[str, str]:
    """Query strings that change one metric option and keep the other (and the study selection)."""

    def query(skip_policy: str, ddof: int) -> str:
        parts = [f"studies={studies_raw}"] if studies_raw else []
        if skip_policy != SKIP_ZERO:
            parts.append(f"skip_policy={skip_policy}")
        if ddof:
            parts.append(f"ddof={ddof}")
        return "&".join(parts)

    return {
        "skips_zero": query(SKIP_ZERO, options.ddof),
        "skips_empty": query(SKIP_EMPTY, options.ddof),
        "skips_excluded": query(SKIP_EXCLUDE, options.ddof),
        "population": query(options.skip_policy, 0),
        "sample": query(options.skip_policy, 1),
    }


def _query(studies_raw: str, options: MetricOptions) -> str:
    query = f"studies={studies_raw}"
    if options.skip_policy != SKIP_ZERO:
        query += f"&skip_policy={options.skip_policy}"
    if options.ddof:
        query += f"&ddof={options.ddof}"
    return query


def _exportable(request: HttpRequest) -> dict[str, list[str]]:
    """The export kinds the user may make or download (``kinds``), by the check ``export_now`` and the others
    make; and those it may not (``withheld_kinds``: they name participants)."""
    kinds = [kind for kind in EXPORT_KINDS if may(request.user, export_operation(kind))]
    return {"kinds": kinds, "withheld_kinds": [kind for kind in EXPORT_KINDS if kind not in kinds]}


# The study page's Prolific links, each to its operation's dry run (annotation.views.prolific).
PROLIFIC_LINKS = (
    ("review", "approve submissions"),
    ("bonus", "pay bonuses"),
    ("group", "add the task's participants to its group"),
    ("places", "places follow the design"),
)


def _prolific_links(request: HttpRequest, study: Study) -> dict[str, list[tuple[str, str]]]:
    """(label, URL) of the operations the user may run, by the check ``prolific.operation`` makes; and
    (labels, who may) of the others."""
    links: list[tuple[str, str]] = []
    others: dict[str, list[str]] = {}  # who may -> the operations
    for name, label in PROLIFIC_LINKS:
        operation = prolific_operation(name)
        if may(request.user, operation):
            links.append((label, reverse("dashboard:prolific", args=[study.slug, name])))
        else:
            others.setdefault(holders(operation), []).append(label)
    return {"prolific_links": links, "prolific_not_yours": [(", ".join(ls), who) for who, ls in others.items()]}


def _overview(studies: list[Study], rows: dict) -> list[dict]:
    """The study cards, those that need attention first (most first), the others in their order."""
    cards = []
    by_study = notices_by_study(studies, rows=rows)
    for study in studies:
        found = by_study[study.pk]
        cards.append(
            {"study": study, "conditions": rows[study.pk], "notices": found, "attention": needs_attention(found)}
        )
    return sorted(cards, key=lambda card: -card["attention"])


@requires(Operation.WATCH)
def index(request: HttpRequest) -> HttpResponse:
    try:
        studies, options, raw = _selection(request)
    except ReportError as exc:
        if "no studies" in str(exc):
            return render(request, "dashboard/index.html", {"studies": [], **team_context(request)})
        return HttpResponseBadRequest(str(exc))
    rows = progress(studies)
    return render(
        request,
        "dashboard/index.html",
        {
            "studies": studies,
            "overview": _overview(studies, rows),
            "live_url": f"{reverse('dashboard:live')}?studies={raw}",
            "live_seconds": LIVE_SECONDS,
            "studies_value": raw,
            **_benchmark_tables(studies, options),
            "query": _query(raw, options),
            "options": options,
            "option_links": _option_links(None if raw == "all" else raw, options),
            **_exportable(request),
            "csv_kinds": CSV_KINDS,
            "jobs": ExportJob.objects.all()[:20],
            **team_context(request),
        },
    )


@requires(Operation.WATCH)
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("task"), slug=slug)
    try:
        options = MetricOptions.from_params(request.GET)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    # Figures kept until the data behind them changes (annotation.reporting.page_figures).
    figures = page_figures.study_page(study, options)
    table, analyses, lines = figures.table, figures.analyses, figures.lines
    rows = progress([study])
    return render(
        request,
        "dashboard/study.html",
        {
            "study": study,
            "conditions": rows[study.pk],
            "notices": notices_by_study([study], rows=rows)[study.pk],
            "live_url": f"{reverse('dashboard:live')}?studies={study.slug}",
            "live_seconds": LIVE_SECONDS,
            "preview_links": preview.links(study),
            "attention_checks": study.attention_checks.count(),
            "attention": lines["attention"],
            "integrity": lines["integrity"],
            "integrity_rule": integrity.rule_text(study),
            "table": table,
            "annotators": table.annotators,
            "pay": lines["pay"],
            "query": _query(study.slug, options),
            "studies_value": study.slug,
            "options": options,
            "option_links": _option_links(None, options),
            "aggregation": [_agreement_text(row) for row in analyses["aggregation"]],
            "task_alpha": analyses["task_alpha"],
            "overlaps": analyses["overlaps"],
            "hardest": analyses["hardest"],
            "confidence": analyses["confidence"],
            "timing": analyses["timing"],
            **_exportable(request),
            "csv_kinds": CSV_KINDS,
            "jobs": ExportJob.objects.filter(params__studies=[study.pk])[:20],
            "prolific_enabled": bool(settings.PROLIFIC_API_TOKEN),
            **_prolific_links(request, study),
            "rehearsals": RehearsalJob.objects.filter(study=study)[:5],
            "launch_check": launch.launch_check(study),
            "launch_overrides": study.launch_overrides.all()[:5],
            "pilot": pilot_section(study) if study.in_pilot else None,
            **team_context(request),
        },
    )


@requires(Operation.WATCH, json=True)
def live(request: HttpRequest) -> HttpResponse:
    """The pages' live feed (polled every few seconds): progress and notices of the selected studies."""
    try:
        studies, _, _ = _selection(request)
    except ReportError as exc:
        return JsonResponse({"error": "invalid", "detail": str(exc)}, status=400)
    response = JsonResponse(live_payload(studies))
    response["Cache-Control"] = "no-store"
    return response


@requires(Operation.WATCH)
def statement(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """The study's human-evaluation statement as text, shown in the browser (``?download=1``: a file)."""
    study = get_object_or_404(Study.objects.select_related("task"), slug=slug)
    if fmt not in STATEMENT_FORMATS:
        raise Http404
    try:
        options = MetricOptions.from_params(request.GET)
        intervals = IntervalOptions.from_params(request.GET)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    text = render_statement(build_statement(study=study, options=options, intervals=intervals), fmt)
    if not request.GET.get("download"):
        return HttpResponse(text, content_type="text/plain; charset=utf-8")
    kind = {"markdown": "table-markdown", "latex": "table-latex", "json": "table-json"}[fmt]
    content_type, ext = EXPORT_KINDS[kind]
    response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}_human-evaluation.{ext}"'
    return response


@requires(Operation.WATCH)
def plot(request: HttpRequest, fmt: str) -> HttpResponse:
    if fmt not in PLOT_FORMATS:
        raise Http404
    try:
        studies, options, _ = _selection(request, benchmark="clues")
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    clues = of_benchmark(studies, "clues")  # CLUES's shape: its own tasks
    table = page_figures.table(clues, study_keys(clues), options)  # the page's own, kept
    # One task (a study's page): its learning curve with the model runs beside it.
    content = task_plot(table, 0, fmt) if len(table.tasks) == 1 else all_tasks_plot(table, fmt)
    return HttpResponse(content, content_type=EXPORT_KINDS[f"plot-{fmt}"][0])


@requires(Operation.WATCH)
def export_now(request: HttpRequest, kind: str) -> HttpResponseBase:
    """Download an export directly (the raw annotations stream; the rest are small)."""
    if kind not in EXPORT_KINDS:
        raise Http404
    if refused := denied(request, export_operation(kind)):
        return refused
    try:
        studies, options, _ = _selection(request, benchmark=kind_benchmark(kind))
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    content_type = EXPORT_KINDS[kind][0]
    filename = export_filename(kind, studies, stamp=False)
    response: HttpResponseBase
    if kind == "annotations-jsonl":
        record_export(actor=request.user, kind=kind, studies=studies, options=options)
        response = StreamingHttpResponse(
            iter_annotation_lines(studies=studies, options=options), content_type=content_type
        )
    else:
        try:
            intervals = IntervalOptions.from_params(request.GET)
        except ReportError as exc:
            return HttpResponseBadRequest(str(exc))
        record_export(actor=request.user, kind=kind, studies=studies, options=options)
        body = export_to_bytes(kind=kind, studies=studies, options=options, intervals=intervals)
        response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    if kind in CSV_KINDS:  # the CSV is a plain table; its provenance is one link away
        sidecar = reverse("dashboard:export-provenance", args=[kind])
        response["Link"] = f'<{sidecar}?{request.GET.urlencode()}>; rel="describedby"; type="application/json"'
    return response


@requires(Operation.WATCH)
def export_provenance(request: HttpRequest, kind: str) -> HttpResponse:
    """The provenance sidecar of a direct export: what ``export/<kind>/`` with the same query was made from."""
    if kind not in EXPORT_KINDS:
        raise Http404
    if refused := denied(request, export_operation(kind)):
        return refused
    try:
        studies, options, _ = _selection(request, benchmark=kind_benchmark(kind))
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    if kind == "annotations-jsonl":  # its first line is the provenance; no need to read every annotation
        provenance = reproducibility_header(studies=studies, options=options, export=kind)
    else:
        provenance = export_with_provenance(kind=kind, studies=studies, options=options)[1]
    response = HttpResponse(provenance_json(provenance), content_type="application/json")
    name = provenance_sidecar_name(export_filename(kind, studies, stamp=False))
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@requires(Operation.WATCH)
@require_POST
def export_queue(request: HttpRequest) -> HttpResponse:
    kind = request.POST.get("kind", "")
    if kind in EXPORT_KINDS and (refused := denied(request, export_operation(kind))):
        return refused  # an unknown kind: export_job_create says so
    refs = [r for r in request.POST.get("studies", "").split(",") if r]
    try:
        job = export_job_create(
            kind=kind,
            study_refs=refs,
            all_studies=request.POST.get("studies") == "all",
            options=MetricOptions.from_params(request.POST),
            intervals=IntervalOptions.from_params(request.POST),
            user=request.user,
        )
    except ReportError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Export #{job.pk} ({job.kind}) queued.")
    return redirect(request.POST.get("next") or reverse("dashboard:index"))


@requires(Operation.WATCH)
def export_download(request: HttpRequest, job_id: int) -> HttpResponseBase:
    job = get_object_or_404(ExportJob, pk=job_id)
    if refused := denied(request, export_operation(job.kind)):
        return refused
    if job.status != ExportJob.Status.DONE or not job.file:
        raise Http404("this export has no file (yet)")
    return FileResponse(job.file.open("rb"), as_attachment=True, filename=job.file.name.rsplit("/", 1)[-1])


@requires(Operation.WATCH)
def export_job_provenance(request: HttpRequest, job_id: int) -> HttpResponse:
    """A finished job's provenance sidecar, as recorded when its file was written."""
    job = get_object_or_404(ExportJob, pk=job_id)
    if refused := denied(request, export_operation(job.kind)):
        return refused
    if job.status != ExportJob.Status.DONE or job.provenance is None:
        raise Http404("this export has no provenance (yet)")
    response = HttpResponse(provenance_json(job.provenance), content_type="application/json")
    name = provenance_sidecar_name(job.file.name.rsplit("/", 1)[-1])
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _optional_int(raw: str | None, name: str) -> int | None:
    if raw is None or not raw.strip():
        return None
    try:
        return int(raw)
    except ValueError:
        raise ReportError(f"{name} must be a whole number, not {raw!r}") from None


@require_POST
@requires(Operation.REHEARSE, json=True)  # a POST: 403, no redirect to a login page
def rehearsal_queue(request: HttpRequest, slug: str) -> HttpResponse:
    """The study page's Rehearse button: queue a rehearsal of the study (docs/reports.md)."""
    study = get_object_or_404(Study, slug=slug)
    try:
        job = rehearsal_job_create(
            study=study,
            workers_per_condition=_optional_int(request.POST.get("workers_per_condition"), "workers per condition"),
            seed=_optional_int(request.POST.get("seed"), "the seed") or 0,
            user=request.user,
        )
    except ReportError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Rehearsal #{job.pk} of {study.slug} queued.")
    return redirect(reverse("dashboard:study", args=[study.slug]) + "#rehearsal")


@requires(Operation.WATCH, json=True)
def rehearsal_status(request: HttpRequest, job_id: int) -> HttpResponse:
    """A rehearsal's status and progress, polled by the study page while it runs."""
    job = get_object_or_404(RehearsalJob.objects.select_related("study"), pk=job_id)
    response = JsonResponse(job_status(job))
    response["Cache-Control"] = "no-store"
    return response


@requires(Operation.WATCH)
def rehearsal_report(request: HttpRequest, job_id: int, fmt: str) -> HttpResponse:
    """A finished rehearsal's report as a file (Markdown or JSON)."""
    job = get_object_or_404(RehearsalJob.objects.select_related("study"), pk=job_id)
    if fmt not in REPORT_FORMATS or job.status != RehearsalJob.Status.DONE:
        raise Http404("this rehearsal has no report (yet)")
    content_type, ext = REPORT_FORMATS[fmt]
    text = job.report_markdown if fmt == "markdown" else job.report_json
    response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{job.study.slug}_rehearsal-{job.pk}.{ext}"'
    return response
