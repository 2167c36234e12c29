"""Every export, as one function per kind writing to a binary file, and the export job that runs one.

Kinds: table-csv, table-json, table-markdown, table-latex, fewclue-csv, fewclue-json,
fewclue-markdown, fewclue-latex (the table in FewCLUE's shape, fewclue_table.py), training-csv,
training-json, training-markdown, training-latex (the training analyses in the
appendix's shape), annotators-csv (per-annotator scores, time and pay),
annotations-jsonl, payments-csv, analyses-json, survey-csv and survey-json
(consent records and survey answers, annotation.reporting.survey_export), attention-csv and
attention-json (per worker: attention checks passed and failed, and the rule's decision), integrity-csv
and integrity-json (per worker: the integrity signals summed and the integrity rule's decision), plot-png,
plot-svg (all tasks together) and plots-zip (every per-task and all-task plot, PNG and SVG). Each carries
the reproducibility header (see provenance.py) inside, except the CSV files: they are plain
header-first tables, and their provenance is a JSON sidecar. The raw annotations are streamed
from a server-side cursor in chunks, so memory stays flat whatever the size.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import tempfile
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from annotation.models import AnswerSpan, AuditEntry, ExportJob, Response, Study
from annotation.reporting.analyses import study_analyses
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.fewclue_table import FEWCLUE_FORMATS, build_fewclue_table
from annotation.reporting.formats import TABLE_FORMATS
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.pay import condition_pay
from annotation.reporting.plots import all_tasks_plot, plots_zip
from annotation.reporting.provenance import reproducibility_header
from annotation.reporting.scores import annotator_rows
from annotation.reporting.selection import select_studies
from annotation.reporting.survey_export import survey_csv, survey_section
from annotation.reporting.tables import build_table
from annotation.reporting.training_table import TRAINING_FORMATS, build_training_table
from annotation.services import audit, jobs
from annotation.services.money.pay import PAY_RULE_VERSION, pay_lines
from annotation.services.roles.operations import Operation, check_job
from annotation.services.verdicts import attention, integrity
from tasks_app import scoring

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User  # AUTH_USER_MODEL

EXPORT_KINDS: dict[str, tuple[str, str]] = {
    "table-csv": ("text/csv", "csv"),
    "table-json": ("application/json", "json"),
    "table-markdown": ("text/markdown", "md"),
    "table-latex": ("application/x-latex", "tex"),
    "fewclue-csv": ("text/csv", "csv"),
    "fewclue-json": ("application/json", "json"),
    "fewclue-markdown": ("text/markdown", "md"),
    "fewclue-latex": ("application/x-latex", "tex"),
    "training-csv": ("text/csv", "csv"),
    "training-json": ("application/json", "json"),
    "training-markdown": ("text/markdown", "md"),
    "training-latex": ("application/x-latex", "tex"),
    "annotators-csv": ("text/csv", "csv"),
    "annotations-jsonl": ("application/x-ndjson", "jsonl"),
    "payments-csv": ("text/csv", "csv"),
    "analyses-json": ("application/json", "json"),
    "plot-png": ("image/png", "png"),
    "plot-svg": ("image/svg+xml", "svg"),
    "plots-zip": ("application/zip", "zip"),
    "survey-csv": ("text/csv", "csv"),
    "survey-json": ("application/json", "json"),
    "attention-csv": ("text/csv", "csv"),
    "attention-json": ("application/json", "json"),
    "integrity-csv": ("text/csv", "csv"),
    "integrity-json": ("application/json", "json"),
}
# The kinds whose file can name a participant by their platform id (a worker per line, or the JSON table's
# list of who was set apart): an assistant may not make them (docs/team.md). tests/roles/test_roles.py
# writes every kind for a study with a worker done and one still in, and checks this set holds each kind
# whose file names one.
IDENTIFIER_KINDS = frozenset(
    {
        "table-json",
        "annotations-jsonl",
        "payments-csv",
        "annotators-csv",
        "survey-csv",
        "attention-csv",
        "attention-json",
        "integrity-csv",
        "integrity-json",
    }
)


def export_operation(kind: str) -> Operation:
    """The team's operation an export of ``kind`` is (annotation.services.roles)."""
    return Operation.EXPORT_IDENTIFIERS if kind in IDENTIFIER_KINDS else Operation.EXPORT_RESULTS


ANNOTATION_FIELDS = (
    "pk",
    "participation_id",
    "participation__worker__platform",
    "participation__worker__external_id",
    "participation__study__slug",
    "participation__condition__shots",
    "participation__state",
    "example__source_id",
    "example_id",
    "phase",
    "position",
    "status",
    "label",
    "answer",
    "confidence",
    "score",
    "shown_at",
    "submitted_at",
    "revealed_at",
    "active_ms",
    "blur_count",
)


def check_kind(kind: str) -> None:
    if kind not in EXPORT_KINDS:
        raise ReportError(f"unknown export kind {kind!r}; one of: {', '.join(EXPORT_KINDS)}")


def export_filename(kind: str, studies: list[Study], *, stamp: bool = True) -> str:
    """``sst2-a_table-csv_<time>.csv``; over more than three studies the name counts them all
    (``6-studies_...``) rather than naming some and hiding the rest."""
    check_kind(kind)
    stem = "-".join(s.slug for s in studies) if len(studies) <= 3 else f"{len(studies)}-studies"
    when = f"_{timezone.now():%Y%m%dT%H%M%S}" if stamp else ""
    return f"{stem}_{kind}{when}.{EXPORT_KINDS[kind][1]}"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def iter_annotation_lines(*, studies: list[Study], options: MetricOptions, chunk_size: int = 2000) -> Iterator[str]:
    """The raw annotations as JSONL lines: a {"meta": ...} line, then one line per response."""
    header = reproducibility_header(studies=studies, options=options, export="annotations-jsonl")
    yield json.dumps({"meta": header}, ensure_ascii=False) + "\n"
    rows = (
        Response.objects.filter(participation__study__in=studies)
        .order_by("participation__study_id", "participation_id", "phase", "position")
        .values_list(*ANNOTATION_FIELDS)
    )
    batch: list[tuple] = []
    for row in rows.iterator(chunk_size=chunk_size):
        batch.append(row)
        if len(batch) >= chunk_size:
            yield from _annotation_batch(batch, options)
            batch = []
    if batch:
        yield from _annotation_batch(batch, options)


def _annotation_batch(batch: list[tuple], options: MetricOptions) -> Iterator[str]:
    spans: dict[int, list[dict[str, Any]]] = {}
    for response_id, start, end, text in (
        AnswerSpan.objects.filter(response_id__in=[r[0] for r in batch])
        .order_by("response_id", "start", "end")
        .values_list("response_id", "start", "end", "text")
    ):
        spans.setdefault(response_id, []).append({"start": start, "end": end, "text": text})
    for row in batch:
        r = dict(zip(ANNOTATION_FIELDS, row, strict=True))
        yield (
            json.dumps(
                {
                    "response_id": r["pk"],
                    "participation_id": r["participation_id"],
                    "platform": r["participation__worker__platform"],
                    "worker_id": r["participation__worker__external_id"],
                    "study": r["participation__study__slug"],
                    "condition_shots": r["participation__condition__shots"],
                    "participation_state": r["participation__state"],
                    "item_id": r["example__source_id"],
                    "example_id": r["example_id"],
                    "phase": r["phase"],
                    "position": r["position"],
                    "status": r["status"],
                    "skipped": r["status"] == Response.Status.SKIPPED,
                    "label": r["label"] or None,
                    "answer": r["answer"],
                    "spans": spans.get(r["pk"], []),
                    "confidence": r["confidence"],
                    "score": r["score"],
                    "policy_score": scoring.policy_score(
                        r["score"], skipped=r["status"] == Response.Status.SKIPPED, policy=options.skip_policy
                    ),
                    "shown_at": _iso(r["shown_at"]),
                    "submitted_at": _iso(r["submitted_at"]),
                    "revealed_at": _iso(r["revealed_at"]),
                    "active_ms": r["active_ms"],
                    "blur_count": r["blur_count"],
                },
                ensure_ascii=False,
            )
            + "\n"
        )


def _money(value: Decimal | None) -> str:
    """An amount to the cent; empty when unknown (the study's posted reward is not set)."""
    return "" if value is None else f"{value:.2f}"


def payments_csv(*, studies: list[Study], options: MetricOptions) -> str:
    """One line per worker: platform, worker id, paid minutes, amount; and the pay-fairness columns.

    ``effective_hourly`` is what the worker earned per paid hour, ``below_rate``
    flags it under the study's rate, ``bonus`` is what makes it up (included in
    ``amount``); the condition's median effective hourly pay and its flag repeat
    on each of its workers' lines.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "platform",
            "worker_id",
            "study",
            "shots",
            "state",
            "minutes",
            "amount",
            "currency",
            "base_reward",
            "bonus",
            "effective_hourly",
            "below_rate",
            "hourly_rate",
            "condition_median_effective_hourly",
            "condition_below_rate",
        ]
    )
    for study in studies:
        participations = list(
            study.participations.select_related("worker", "condition").order_by(
                "condition__shots", "slot_index", "created_at"
            )
        )
        lines = pay_lines(study=study, participations=participations)
        medians = {c.shots: c for c in condition_pay(study=study)}
        for p in participations:
            pay = lines[p.pk]
            median = medians[p.condition.shots]
            writer.writerow(
                [
                    p.worker.platform,
                    p.worker.external_id,
                    study.slug,
                    p.condition.shots,
                    p.state,
                    f"{pay.minutes:.2f}",
                    f"{pay.amount:.2f}",
                    study.currency,
                    _money(pay.base),
                    _money(pay.bonus),
                    "" if pay.effective_hourly is None else f"{pay.effective_hourly:.2f}",
                    int(pay.below_rate),
                    f"{study.hourly_rate:.2f}",
                    "" if median.median_effective_hourly is None else f"{median.median_effective_hourly:.2f}",
                    int(median.below_rate),
                ]
            )
    return out.getvalue()


ANNOTATOR_COLUMNS = [
    "study",
    "task",
    "shots",
    "platform",
    "worker_id",
    "state",
    "averaged_in",
    "test_s1",
    "test_items",
    "test_total",
    "skips",
    "coverage",
    "training_s1",
    "training_items",
    "active_minutes",
    "paid_minutes",
    "pay",
    "bonus",
    "currency",
    "effective_hourly",
    "below_rate",
]


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.2f}"


def annotators_csv(*, studies: list[Study], options: MetricOptions) -> str:
    """Every participation (all states) with its test and training S1 (0-100), items, skips, time and pay."""
    out = io.StringIO()
    currency = {s.slug: s.currency for s in studies}
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ANNOTATOR_COLUMNS)
    for row in annotator_rows(studies=studies, options=options):
        writer.writerow(
            [
                row.study_slug,
                row.task_slug,
                row.shots,
                row.platform,
                row.worker_id,
                row.state,
                int(row.is_completed),
                _pct(row.test_s1),
                row.test_items,
                row.test_total,
                row.skips,
                "" if row.coverage is None else f"{row.coverage:.4f}",
                _pct(row.training_s1),
                row.training_items,
                f"{row.active_ms / 60000:.2f}",
                f"{row.paid_seconds / 60:.2f}",
                f"{row.pay:.2f}",
                _money(row.bonus),
                currency[row.study_slug],
                "" if row.effective_hourly is None else f"{row.effective_hourly:.2f}",
                int(row.below_rate),
            ]
        )
    return out.getvalue()


def attention_export(*, studies: list[Study], options: MetricOptions, fmt: str) -> str:
    """Per crowd worker who was given attention checks: passed, failed, pending and the rule's decision."""
    rows = [{"study": s.slug, **r.as_dict()} for s in studies for r in attention.reports.report(s)]
    if fmt == "json":
        header = reproducibility_header(studies=studies, options=options, export=f"attention-{fmt}")
        return json.dumps({"meta": header, "workers": rows}, ensure_ascii=False, indent=2, default=str)
    out = io.StringIO()  # a plain table: its provenance goes to the sidecar
    writer = csv.DictWriter(out, fieldnames=["study", *attention.reports.REPORT_FIELDS], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def integrity_export(*, studies: list[Study], options: MetricOptions, fmt: str) -> str:
    """Per crowd worker with a locked test item: the integrity signals summed, and the rule's decision."""
    rows = [{"study": s.slug, **r.as_dict()} for s in studies for r in integrity.report(s)]
    if fmt == "json":
        header = reproducibility_header(studies=studies, options=options, export=f"integrity-{fmt}")
        rules = {s.slug: integrity.rule_text(s) for s in studies}
        return json.dumps({"meta": header, "rules": rules, "workers": rows}, ensure_ascii=False, indent=2, default=str)
    out = io.StringIO()  # a plain table: its provenance goes to the sidecar
    writer = csv.DictWriter(out, fieldnames=["study", *integrity.REPORT_FIELDS], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


CSV_KINDS = frozenset(kind for kind, (content_type, _) in EXPORT_KINDS.items() if content_type == "text/csv")


def write_export(
    *, kind: str, studies: list[Study], options: MetricOptions, out: BinaryIO, intervals: IntervalOptions | None = None
) -> dict[str, Any]:
    """Write one export of ``kind`` for ``studies`` to the binary file ``out``; return its provenance.

    The provenance is the reproducibility header plus the notes printed under a table. JSON, JSONL,
    Markdown, LaTeX and the plots carry it inside; a CSV stays a plain header-first table that any
    reader opens, and its provenance goes to a sidecar file (see ``provenance_sidecar_name``).
    ``intervals``: the bootstrap's seed and resamples for the table and plots (default: bootstrap.py's),
    and whether Markdown/LaTeX print the intervals.
    """
    check_kind(kind)
    header = reproducibility_header(studies=studies, options=options, export=kind)
    if kind == "annotations-jsonl":
        for line in iter_annotation_lines(studies=studies, options=options):
            out.write(line.encode())
        return header
    if kind == "payments-csv":
        out.write(payments_csv(studies=studies, options=options).encode())
        return {**header, "notes": [PAYMENTS_NOTE]}
    if kind == "annotators-csv":
        out.write(annotators_csv(studies=studies, options=options).encode())
        return {**header, "notes": [f"{options.describe()} {ANNOTATORS_NOTE}"]}
    if kind == "survey-csv":
        out.write(survey_csv(studies=studies).encode())
        return {**header, "notes": [SURVEY_NOTE]}
    if kind.startswith("attention-"):
        out.write(attention_export(studies=studies, options=options, fmt=kind.removeprefix("attention-")).encode())
        return {**header, "notes": [ATTENTION_NOTE]}
    if kind.startswith("integrity-"):
        out.write(integrity_export(studies=studies, options=options, fmt=kind.removeprefix("integrity-")).encode())
        return {**header, "notes": [INTEGRITY_NOTE]}
    if kind == "analyses-json":
        payload = {"meta": header, "studies": [study_analyses(study=s, options=options) for s in studies]}
        out.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str).encode())
        return header
    if kind == "survey-json":
        payload = {"meta": header, "survey": survey_section(studies=studies)}
        out.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str).encode())
        return header
    if kind.startswith("fewclue-"):
        fewclue = build_fewclue_table(studies=studies, options=options)
        out.write(FEWCLUE_FORMATS[kind.removeprefix("fewclue-")](fewclue, header).encode())
        return {**header, "notes": [fewclue.note, *fewclue.sample_notes]}
    if kind.startswith("training-"):
        render_training = TRAINING_FORMATS[kind.removeprefix("training-")]
        training = build_training_table(studies=studies, options=options)
        out.write(render_training(training, header).encode())
        return {**header, "notes": [training.note]}
    intervals = intervals or IntervalOptions()
    header = {**header, "intervals": intervals.as_dict()}
    table = build_table(studies=studies, options=options, intervals=intervals)
    notes = [table.note] + [text for text in (table.interval_note, table.set_apart_text()) if text]
    if kind == "plots-zip":
        plots_zip(table, header, out)
    elif kind.startswith("plot-"):
        out.write(all_tasks_plot(table, fmt=kind.removeprefix("plot-"), header=header))
    else:
        render = TABLE_FORMATS[kind.removeprefix("table-")][0]
        out.write(render(table, header).encode())
    return {**header, "notes": notes}


PAYMENTS_NOTE = (
    f"pay rule version {PAY_RULE_VERSION}: paid time from the claim to the end of the work (docs/reports.md, Pay); "
    "amount = base_reward + bonus (the owed amount while base_reward is not set: bonus empty); "
    "effective_hourly is the posted reward per paid hour (the rate when paid by the hour); "
    "below_rate flags it under hourly_rate."
)
ANNOTATORS_NOTE = "averaged_in=1 marks the annotators a table cell averages."
ATTENTION_NOTE = "one row per worker given attention checks: passed, failed, not yet answered, the rule's decision."
INTEGRITY_NOTE = (
    "one row per worker with a locked test item: items copied from, answered faster than the reading-time "
    "estimate, and away (unfocused or hidden) longer than the study's limit; the integrity rule's decision "
    "(docs/studies.md, Integrity signals)."
)
SURVEY_NOTE = "one row per participation and survey answer; consent time and text hash per participation."


def provenance_sidecar_name(filename: str) -> str:
    """Where a CSV's provenance goes: ``table.csv`` → ``table.csv.provenance.json``."""
    return f"{filename}.provenance.json"


def provenance_json(provenance: dict[str, Any]) -> str:
    return json.dumps(provenance, ensure_ascii=False, indent=2, default=str) + "\n"


def export_to_bytes(
    *, kind: str, studies: list[Study], options: MetricOptions, intervals: IntervalOptions | None = None
) -> bytes:
    return export_with_provenance(kind=kind, studies=studies, options=options, intervals=intervals)[0]


def export_with_provenance(
    *, kind: str, studies: list[Study], options: MetricOptions, intervals: IntervalOptions | None = None
) -> tuple[bytes, dict[str, Any]]:
    buffer = io.BytesIO()
    provenance = write_export(kind=kind, studies=studies, options=options, out=buffer, intervals=intervals)
    return buffer.getvalue(), provenance


# --- ExportJob: a long job (annotation.services.jobs) whose work is write_export into the job's file ---

EXPORT_JOBS = jobs.JobKind(
    model=ExportJob, task="annotation.run_export", noun="export job", logger=logger, tag=lambda job: job.kind
)


def kind_benchmark(kind: str) -> str:
    """The benchmark an export of all studies covers: FewCLUE's for its table, CLUES-shaped tasks' otherwise."""
    return "fewclue" if kind.startswith("fewclue-") else "clues"


def _job_params(
    *,
    study_refs: Iterable[str | int],
    all_studies: bool,
    benchmark: str,
    options: MetricOptions,
    intervals: IntervalOptions,
) -> dict:
    studies = select_studies(refs=study_refs, all_studies=all_studies, benchmark=benchmark)
    shown = {"seed": intervals.seed, "resamples": intervals.resamples, "intervals": int(intervals.in_text)}
    return {"studies": [s.pk for s in studies], **options.as_dict(), **shown}


def export_job_create(
    *,
    kind: str,
    study_refs: Iterable[str | int] = (),
    all_studies: bool = False,
    options: MetricOptions | None = None,
    intervals: IntervalOptions | None = None,
    user: User | AnonymousUser | None = None,
) -> ExportJob:
    """Validate, store a queued job and queue its Celery task after commit; nothing is stored on bad input."""
    check_kind(kind)
    params = _job_params(
        study_refs=study_refs,
        all_studies=all_studies,
        benchmark=kind_benchmark(kind),
        options=options or MetricOptions(),
        intervals=intervals or IntervalOptions(),
    )
    with transaction.atomic():
        job = ExportJob.objects.create(kind=kind, params=params, created_by=user if user and user.pk else None)
        record_export(actor=user, kind=kind, studies=select_studies(refs=params["studies"]), job=job.pk)
    logger.info("export job %s (%s) queued for %d study(ies)", job.pk, kind, len(params["studies"]))
    jobs.queue(EXPORT_JOBS, job.pk)
    return job


def record_export(
    *, actor: audit.Actor, kind: str, studies: list[Study], options: MetricOptions | None = None, job: int | None = None
) -> None:
    """The audit trail's entry of an export (one per study it covers): every path that hands out an export
    calls it, the queued job at its creation (``export_job_create``), the dashboard's direct download and
    ``human_performance`` as they write."""
    slugs = [s.slug for s in studies]
    shown = {"kind": kind, "studies": slugs, **({"options": options.as_dict()} if options else {})}
    detail = {"job": job} if job is not None else {}
    targets: list[Study | None] = [*studies] or [None]
    for study in targets:
        audit.record(actor=actor, action=AuditEntry.Action.EXPORT, study=study, after=shown, detail=detail)


def _test_delay() -> None:
    delay = getattr(settings, "EXPORT_TEST_DELAY_SECONDS", 0)  # only the test settings have it
    if delay:
        time.sleep(delay)


def _write_job_file(job: ExportJob, progress: jobs.Progress) -> jobs.Finished:
    check_job(job.created_by, export_operation(job.kind))  # its requester lost the right since: nothing written
    _test_delay()
    params = job.params or {}
    studies = select_studies(refs=params.get("studies", []))
    options = MetricOptions.from_params(params)
    with tempfile.TemporaryFile() as tmp:
        intervals = IntervalOptions.from_params(params)
        provenance = write_export(kind=job.kind, studies=studies, options=options, out=tmp, intervals=intervals)
        tmp.seek(0)
        job.file.save(export_filename(job.kind, studies), File(tmp), save=False)
    return jobs.Finished(
        fields={"file": job.file.name, "provenance": provenance},
        note=job.file.name,
        undo=partial(job.file.delete, save=False),  # another attempt's file is the one kept
    )


def export_job_run(*, job_id: int) -> ExportJob:
    """Run a queued (or stale) job; on any error the job is failed with the reason and nothing half-written
    is kept. A delivery of a job that is done, failed or running with a live worker changes nothing."""
    job: ExportJob = jobs.run(EXPORT_JOBS, job_id, _write_job_file)
    return job


def export_jobs_sweep(*, now: datetime | None = None) -> jobs.SweepResult:
    """Recover the export jobs whose worker died (annotation.services.jobs.sweep). Periodic: CELERY_BEAT_SCHEDULE."""
    return jobs.sweep(EXPORT_JOBS, now=now)
