"""Staff dashboard: live progress per study, condition and worker; the table, the plot, every export.

Read-only pages over the reporting services, plus one POST that queues an
export job (the same service the admin action and the API call).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.models import ExportJob, Participation, Study
from annotation.reporting.analyses import (
    confidence_vs_correctness,
    item_difficulty,
    majority_and_agreement,
    time_per_item,
    training_overlaps,
)
from annotation.reporting.exports import EXPORT_KINDS, export_job_create, export_to_bytes, iter_annotation_lines
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.pay import condition_pay
from annotation.reporting.plots import PLOT_FORMATS, all_tasks_plot
from annotation.reporting.selection import select_studies
from annotation.reporting.tables import build_table
from annotation.services import attention, preview, slots

STATES = [s for s, _ in Participation.State.choices]


def _selection(request: HttpRequest) -> tuple[list[Study], MetricOptions, str]:
    raw = request.GET.get("studies", "all")
    studies = select_studies(all_studies=True) if raw == "all" else select_studies(refs=raw.split(","))
    return studies, MetricOptions.from_params(request.GET), raw


def _progress(studies: list[Study]) -> dict[int, list[dict]]:
    """Per study, per condition (by shots): its N slots and how many participations are in each state."""
    return {
        study_id: [
            {"shots": c.shots, "slots": c.slots, "states": [c.in_state(state) for state in STATES]} for c in rows
        ]
        for study_id, rows in slots.condition_counts(studies).items()
    }


def _with_preview_links(study: Study, progress: list[dict]) -> list[dict]:
    """The progress rows, each with its condition's "Preview as worker" link."""
    links = dict(preview.links(study))
    return [{**row, "preview": links.get(row["shots"])} for row in progress]


def _option_links(studies_raw: str | None, options: MetricOptions) -> dict[str, str]:
    """Query strings that change one metric option and keep the other (and the study selection)."""

    def query(exclude_skips: bool, ddof: int) -> str:
        parts = [f"studies={studies_raw}"] if studies_raw else []
        if exclude_skips:
            parts.append("exclude_skips=1")
        if ddof:
            parts.append(f"ddof={ddof}")
        return "&".join(parts)

    return {
        "skips_empty": query(False, options.ddof),
        "skips_excluded": query(True, options.ddof),
        "population": query(options.exclude_skips, 0),
        "sample": query(options.exclude_skips, 1),
    }


def _query(studies_raw: str, options: MetricOptions) -> str:
    query = f"studies={studies_raw}"
    if options.exclude_skips:
        query += "&exclude_skips=1"
    if options.ddof:
        query += f"&ddof={options.ddof}"
    return query


@staff_member_required
def index(request: HttpRequest) -> HttpResponse:
    try:
        studies, options, raw = _selection(request)
    except ReportError as exc:
        if "no studies" in str(exc):
            return render(request, "dashboard/index.html", {"studies": []})
        return HttpResponseBadRequest(str(exc))
    progress = _progress(studies)
    return render(
        request,
        "dashboard/index.html",
        {
            "studies": studies,
            "overview": [{"study": s, "conditions": progress[s.pk]} for s in studies],
            "states": STATES,
            "studies_value": raw,
            "table": build_table(studies=studies, options=options),
            "query": _query(raw, options),
            "options": options,
            "option_links": _option_links(None if raw == "all" else raw, options),
            "kinds": list(EXPORT_KINDS),
            "jobs": ExportJob.objects.all()[:20],
        },
    )


@staff_member_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("task"), slug=slug)
    try:
        options = MetricOptions.from_params(request.GET)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    table = build_table(studies=[study], options=options)
    return render(
        request,
        "dashboard/study.html",
        {
            "study": study,
            "progress": _with_preview_links(study, _progress([study])[study.pk]),
            "attention_checks": study.attention_checks.count(),
            "attention": attention.report(study),
            "states": STATES,
            "table": table,
            "annotators": table.annotators,
            "pay": condition_pay(study=study),
            "query": _query(study.slug, options),
            "studies_value": study.slug,
            "options": options,
            "option_links": _option_links(None, options),
            "aggregation": majority_and_agreement(study=study, options=options),
            "overlaps": training_overlaps(study=study, options=options),
            "hardest": item_difficulty(study=study, limit=10),
            "confidence": confidence_vs_correctness(study=study),
            "timing": time_per_item(study=study),
            "kinds": list(EXPORT_KINDS),
            "jobs": ExportJob.objects.filter(params__studies=[study.pk])[:20],
        },
    )


@staff_member_required
def plot(request: HttpRequest, fmt: str) -> HttpResponse:
    if fmt not in PLOT_FORMATS:
        raise Http404
    try:
        studies, options, _ = _selection(request)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    table = build_table(studies=studies, options=options, include_models=False)
    return HttpResponse(all_tasks_plot(table, fmt), content_type=EXPORT_KINDS[f"plot-{fmt}"][0])


@staff_member_required
def export_now(request: HttpRequest, kind: str) -> HttpResponse:
    """Download an export directly (the raw annotations stream; the rest are small)."""
    if kind not in EXPORT_KINDS:
        raise Http404
    try:
        studies, options, _ = _selection(request)
    except ReportError as exc:
        return HttpResponseBadRequest(str(exc))
    content_type, ext = EXPORT_KINDS[kind]
    filename = f"{'-'.join(s.slug for s in studies[:4])}_{kind}.{ext}"
    if kind == "annotations-jsonl":
        response = StreamingHttpResponse(
            iter_annotation_lines(studies=studies, options=options), content_type=content_type
        )
    else:
        response = HttpResponse(export_to_bytes(kind=kind, studies=studies, options=options), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_member_required
@require_POST
def export_queue(request: HttpRequest) -> HttpResponse:
    refs = [r for r in request.POST.get("studies", "").split(",") if r]
    try:
        job = export_job_create(
            kind=request.POST.get("kind", ""),
            study_refs=refs,
            all_studies=request.POST.get("studies") == "all",
            options=MetricOptions.from_params(request.POST),
            user=request.user,
        )
    except ReportError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Export #{job.pk} ({job.kind}) queued.")
    return redirect(request.POST.get("next") or reverse("dashboard:index"))


@staff_member_required
def export_download(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(ExportJob, pk=job_id)
    if job.status != ExportJob.Status.DONE or not job.file:
        raise Http404("this export has no file (yet)")
    return FileResponse(job.file.open("rb"), as_attachment=True, filename=job.file.name.rsplit("/", 1)[-1])
