"""Turning what a user typed (slugs, ids, --all) into studies, with clear errors."""

from __future__ import annotations

from collections.abc import Iterable

from annotation.models import Study
from annotation.reporting.options import ReportError


def select_studies(*, refs: Iterable[str | int] = (), all_studies: bool = False) -> list[Study]:
    """Studies by slug or numeric id, in the order given; every study with ``all_studies``."""
    if all_studies:
        studies = list(Study.objects.select_related("task").order_by("task__display_order", "slug"))
        if not studies:
            raise ReportError("there are no studies yet")
        return studies
    names = [str(r).strip() for r in refs if str(r).strip()]
    if not names:
        raise ReportError("name at least one study (slug or id), or ask for all studies")
    found: list[Study] = []
    for ref in names:
        query = Study.objects.select_related("task")
        study = query.filter(slug=ref).first()
        # ASCII digits only: str.isdigit() accepts "²", which int() refuses; ids beyond a bigint name nothing.
        if study is None and ref.isascii() and ref.isdigit() and len(ref) <= 18:
            study = query.filter(pk=int(ref)).first()
        if study is None:
            raise ReportError(f"unknown study: {ref!r}")
        if study not in found:
            found.append(study)
    return found
