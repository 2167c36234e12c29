"""The survey answers and consent records of the studies' participations, as CSV and JSON.

One row per participation that answered a survey or answered the consent
text (agreed or declined): who, which condition, its state, when it agreed and
the SHA-256 of the consent text it agreed to, the survey's placement and time,
and one column per question key (a multiple choice as its options joined by
``"; "``). The CSV is plain, header first; the JSON carries each study's survey
definition and consent text hash next to the rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from django.db.models import Q

from annotation.models import Participation, Study, SurveyResponse
from annotation.services.admission import consent

BASE_COLUMNS = [
    "study",
    "task",
    "shots",
    "platform",
    "worker_id",
    "state",
    "consented_at",
    "consent_sha256",
    "survey_placement",
    "survey_submitted_at",
]


def _iso(value: Any) -> str:
    return value.isoformat() if value is not None else ""


def survey_rows(studies: list[Study]) -> Iterator[dict[str, Any]]:
    """Each participation with a consent answer or survey answers, with those answers (study, then slot order)."""
    responses: dict[int, list[SurveyResponse]] = {}
    for response in SurveyResponse.objects.filter(participation__study__in=studies).order_by("placement"):
        responses.setdefault(response.participation_id, []).append(response)
    participations = (
        Participation.objects.filter(study__in=studies)
        .filter(Q(pk__in=list(responses)) | Q(consented_at__isnull=False) | Q(state=Participation.State.DECLINED))
        .select_related("study__task", "condition", "worker")
        .order_by("study__slug", "condition__shots", "slot_index", "created_at")
    )
    for p in participations:
        base = {
            "study": p.study.slug,
            "task": p.study.task.slug,
            "shots": p.condition.shots,
            "platform": p.worker.platform,
            "worker_id": p.worker.external_id,
            "state": p.state,
            "consented_at": _iso(p.consented_at),
            "consent_sha256": p.consent_hash,
        }
        answered: list[SurveyResponse | None] = list(responses.get(p.pk, []))
        for one in answered or [None]:
            yield {
                **base,
                "survey_placement": one.placement if one else "",
                "survey_submitted_at": _iso(one.submitted_at) if one else "",
                "answers": dict(one.answers) if one else {},
            }


def _question_keys(studies: list[Study]) -> list[str]:
    keys: list[str] = []
    for study in studies:
        for q in study.survey or []:
            if q["key"] not in keys:
                keys.append(q["key"])
    return keys


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return "" if value is None else str(value)


def survey_csv(*, studies: list[Study]) -> str:
    """Header-first CSV: the base columns, then one column per survey question key."""
    keys = _question_keys(studies)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*BASE_COLUMNS, *keys])
    for row in survey_rows(studies):
        writer.writerow([_cell(row[c]) for c in BASE_COLUMNS] + [_cell(row["answers"].get(k)) for k in keys])
    return out.getvalue()


def survey_section(*, studies: list[Study]) -> dict[str, Any]:
    """The JSON section: each study's survey and consent text hash, and the rows."""
    return {
        "studies": [
            {
                "slug": s.slug,
                "consent_required": s.consent_required,
                "consent_sha256": consent.text_hash(s.consent_text) if s.consent_text else "",
                "survey_placement": s.survey_placement,
                "survey": s.survey or [],
            }
            for s in studies
        ],
        "rows": list(survey_rows(studies)),
    }
