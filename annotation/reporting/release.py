"""A release of a study's human data: what a reader needs to reuse the baseline, and no one's identity.

``build_release`` returns the files (name -> bytes), ``write_release`` writes them with their
checksums (``manage.py release_study``):

- ``answers.csv``: every locked item of every baseliner who worked (declines left out), under a
  pseudonym (``P01``, ``P02``, ... in the order of condition and slot): the answer strings, the
  character offsets of highlighted spans, confidence, time on the item, the stored S1;
- ``participants.csv``: one line per baseliner: condition, how they ended (state and exclusion
  kind), items, skips, the app's test S1, time and pay;
- ``items.csv``: each item answered, with its context, question and gold (attention checks apart);
- ``design.json``: the design and rules (the provenance header's configuration), the metric options
  and the table as the app computes it, so a reader can check a recomputation against it;
- ``texts.md``: the exact instructions, labels, consent and survey texts in every language shown
  (the appendix's), and the attention checks;
- ``demographics.json``: the survey's demographic questions as counts, suppressed as the statement's;
- ``DATA_CARD.md``: what, who, how collected, exclusions, licence (``Study.data_licence``);
- ``SHA256SUMS``: a checksum of every other file (``sha256sum -c SHA256SUMS`` checks them).

Never released: platform ids, platform parameters, completion codes, free-text survey answers, any
survey answer per person. A pseudonym is an ordinal, derived from nothing that names the worker.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

from annotation.models import Participation, Response, Study
from annotation.reporting.appendix import appendix_texts
from annotation.reporting.demographics import SUPPRESSION_NOTE, summarise
from annotation.reporting.exports import record_export
from annotation.reporting.options import MetricOptions
from annotation.reporting.provenance import reproducibility_header
from annotation.reporting.scores import annotator_rows
from annotation.reporting.tables import build_table
from annotation.services import audit

RELEASE_VERSION = 1
CHECKSUMS = "SHA256SUMS"
FILES = (
    "answers.csv",
    "participants.csv",
    "items.csv",
    "design.json",
    "texts.md",
    "demographics.json",
    "DATA_CARD.md",
)


class ReleaseError(Exception):
    """A release that cannot be written as asked (nothing is written)."""


def released_participations(study: Study) -> list[Participation]:
    """The baseliners of a release, in pseudonym order: everyone who took a slot (a decline never worked)."""
    return list(
        Participation.objects.filter(study=study)
        .exclude(state=Participation.State.DECLINED)
        .select_related("condition")
        .order_by("condition__shots", "slot_index", "created_at", "pk")
    )


def pseudonyms(participations: list[Participation]) -> dict[int, str]:
    width = max(2, len(str(len(participations))))
    return {p.pk: f"P{i:0{width}d}" for i, p in enumerate(participations, start=1)}


def _csv(header: list[str], rows: list[list[Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _answers(study: Study, names: dict[int, str]) -> tuple[bytes, dict[int, str]]:
    responses = (
        Response.objects.filter(participation_id__in=names)
        .exclude(status=Response.Status.PENDING)
        .select_related("example", "participation__condition")
        .prefetch_related("spans")
        .order_by("participation__condition__shots", "participation_id", "phase", "position")
    )
    rows: list[list[Any]] = []
    phases: dict[int, str] = {}
    for r in responses:
        spans = [[s.start, s.end] for s in r.spans.all()]
        phases.setdefault(r.example_id, r.phase)
        rows.append(
            [
                names[r.participation_id],
                r.participation.condition.shots,
                r.phase,
                r.position,
                r.example.fingerprint,
                r.status,
                _json(r.answer),
                _json(spans),
                "" if r.confidence is None else r.confidence,
                r.active_ms,
                "" if r.score is None else repr(r.score),
            ]
        )
    header = [
        "participant",
        "shots",
        "phase",
        "position",
        "item_id",
        "status",
        "answer",
        "spans",
        "confidence",
        "active_ms",
        "s1",
    ]
    return _csv(header, rows), phases


def _items(study: Study, phases: dict[int, str]) -> bytes:
    examples = study.task.examples.filter(pk__in=phases).order_by("pk")
    rows = [
        [
            e.fingerprint,
            e.source_id,
            phases[e.pk],
            e.context if isinstance(e.context, str) else _json(e.context),
            e.question,
            _json(e.gold_answers),
            _json(e.alternative_answers),
        ]
        for e in examples
    ]
    return _csv(["item_id", "source_id", "phase", "context", "question", "gold_answers", "alternative_answers"], rows)


def _participants(study: Study, names: dict[int, str], options: MetricOptions) -> bytes:
    exclusion = dict(
        Participation.objects.filter(pk__in=names).values_list("pk", "exclusion_kind")  # not on AnnotatorRow
    )
    rows = []
    by_pk = {row.participation_id: row for row in annotator_rows(studies=[study], options=options)}
    for pk, name in names.items():
        row = by_pk[pk]
        rows.append(
            [
                name,
                row.shots,
                row.state,
                exclusion.get(pk, ""),
                row.test_total,
                row.test_items,
                row.skips,
                "" if row.test_s1 is None else repr(row.test_s1 * 100),
                "" if row.training_s1 is None else repr(row.training_s1 * 100),
                round(row.active_minutes, 2),
                round(row.paid_minutes, 2),
                str(row.pay),
                study.currency,
            ]
        )
    header = [
        "participant",
        "shots",
        "state",
        "exclusion_kind",
        "test_items",
        "test_locked",
        "skips",
        "test_s1",
        "training_s1",
        "active_minutes",
        "paid_minutes",
        "pay",
        "currency",
    ]
    return _csv(header, rows)


def _design(study: Study, options: MetricOptions) -> dict[str, Any]:
    header = reproducibility_header(studies=[study], options=options, export="release")
    table = build_table(studies=[study], options=options, include_models=False, intervals=None)
    cells = [
        {"shots": row.shots, "task": task.slug, "mean": cell.mean, "std": cell.std, "n": cell.n}
        for row in table.rows
        for task, cell in zip(table.tasks, row.cells, strict=True)
        if cell.n
    ]
    return {
        "release_version": RELEASE_VERSION,
        **header,
        "table": {"scale": "0-100", "cells": cells, "note": options.describe()},
    }


def _texts(study: Study) -> str:
    lines = [appendix_texts(study).rstrip("\n"), "", "# Attention checks", ""]
    checks = list(study.attention_checks.order_by("position"))
    if not checks:
        lines.append("None.")
    for check in checks:
        lines += [
            f"## Item {check.position} of the test step ({check.get_source_display().lower()})",
            "",
            f"- Text: {check.context}",
            f"- Question: {check.question}",
            f"- Expected: {', '.join(check.expected)}",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def _data_card(study: Study, participations: list[Participation], design: dict[str, Any]) -> str:
    states = Counter(p.state for p in participations)
    kinds = Counter(p.exclusion_kind for p in participations if p.state == Participation.State.EXCLUDED)
    conditions = ", ".join(str(c.shots) for c in study.conditions.order_by("shots"))
    licence = study.data_licence.strip() or (
        f"not stated (set it with: manage.py configure_study {study.slug} --data-licence ...)"
    )
    ethics = study.get_ethics_review_display() if study.ethics_review else "not recorded"
    if study.ethics_board:
        ethics += f", {study.ethics_board}"
    if study.ethics_reference:
        ethics += f" ({study.ethics_reference})"
    lines = [
        f"# Data card: human baseline for {study.task.name} ({study.slug})",
        "",
        "## What",
        "",
        f"The answers of {len(participations)} crowd workers (baseliners) to {study.task.name}, "
        f"in conditions of {conditions} training examples, scored with S1 (per-item set-based F1). "
        f"Release format version {RELEASE_VERSION}; the app version that wrote it: {design['app_version']}.",
        "",
        "## Who",
        "",
        f"Crowd workers recruited for study `{study.slug}`, each in one condition only (a worker takes part "
        "in a task once). They appear under pseudonyms (P01, ...) in the order of condition and slot; the "
        "pseudonyms are derived from nothing that names them. Demographics, where the survey asked for them, "
        f"are in demographics.json as counts ({SUPPRESSION_NOTE}).",
        "",
        "## How the data were collected",
        "",
        f"Each worker consented, trained on the condition's examples (answer locked, then the gold shown) and "
        f"answered the test items in the browser; they were paid at {study.hourly_rate} {study.currency} an "
        f"hour for their time. Ethics review: {ethics}. The exact texts they saw are in texts.md; the design "
        "and rules in design.json.",
        "",
        _plan_line(study, design),
        "",
        "## Exclusions",
        "",
        "How each baseliner ended (participants.csv, `state` and `exclusion_kind`): "
        + ", ".join(f"{state} {n}" for state, n in sorted(states.items()))
        + ".",
    ]
    if kinds:
        lines.append("Excluded, by rule: " + ", ".join(f"{k or 'unrecorded'} {n}" for k, n in sorted(kinds.items())))
    lines += [
        "The published table (design.json, `table`) averages the completed workers only; every worker's "
        "answers are here, so the table can be recomputed with any exclusion lifted.",
        "",
        "## Not released",
        "",
        "Platform ids and parameters, completion codes, free-text survey answers and any survey answer per person.",
        "",
        "## Licence",
        "",
        licence,
        "",
        "## Files",
        "",
        *[f"- `{name}`" for name in FILES],
        f"- `{CHECKSUMS}`: `sha256sum -c {CHECKSUMS}` checks every file above.",
    ]
    return "\n".join(lines) + "\n"


def _plan_line(study: Study, design: dict[str, Any]) -> str:
    plan = design["studies"][0]["analysis_plan"]
    registered = (
        f"Pre-registration: {study.preregistration}." if study.preregistration else ("Pre-registration: none recorded.")
    )
    if plan["sha256"] is None:
        return f"{registered} No analysis plan was frozen (the study did not open for its full launch)."
    match = "matches it" if plan["matches"] else f"differs from it in {len(plan['differences'])} part(s)"
    return (
        f"{registered} The analysis plan frozen at the full launch has SHA-256 {plan['sha256']}; the table "
        f"in design.json {match} (design.json, `studies[0].analysis_plan`)."
    )


def build_release(study: Study, *, options: MetricOptions | None = None) -> dict[str, bytes]:
    """Every file of the release but the checksums, as bytes, in FILES order."""
    options = options or MetricOptions()
    participations = released_participations(study)
    names = pseudonyms(participations)
    answers, phases = _answers(study, names)
    design = _design(study, options)
    demographics = {"note": SUPPRESSION_NOTE, "questions": [q.as_dict() for q in summarise(study)]}
    files = {
        "answers.csv": answers,
        "participants.csv": _participants(study, names, options),
        "items.csv": _items(study, phases),
        "design.json": json.dumps(design, ensure_ascii=False, indent=2).encode("utf-8"),
        "texts.md": _texts(study).encode("utf-8"),
        "demographics.json": json.dumps(demographics, ensure_ascii=False, indent=2).encode("utf-8"),
        "DATA_CARD.md": _data_card(study, participations, design).encode("utf-8"),
    }
    return {name: files[name] for name in FILES}


def checksums(files: dict[str, bytes]) -> bytes:
    """``sha256sum``'s own format, so ``sha256sum -c`` checks the release."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in files.items()).encode()


def write_release(
    study: Study,
    out_dir: Path,
    *,
    options: MetricOptions | None = None,
    force: bool = False,
    actor: audit.Actor = None,
) -> list[Path]:
    """Write the release into ``out_dir`` (created); refuses a folder that holds anything unless ``force``.
    The audit trail gets it as an export (``release``)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ReleaseError(f"{out_dir} is a file, not a folder.")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise ReleaseError(
            f"{out_dir} is not empty: choose an empty folder, or --force to overwrite the release files."
        )
    files = build_release(study, options=options)  # everything computed before anything is written
    files[CHECKSUMS] = checksums(files)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files.items():
        path = out_dir / name
        path.write_bytes(data)
        written.append(path)
    record_export(actor=actor, kind="release", studies=[study], options=options)
    return written
