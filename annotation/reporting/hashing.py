"""SHA-256 digests of what a report rests on: an example set's items, a canonical JSON document."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tasks_app.models import ExampleSet, ExampleSetItem


def canonical_json(value: Any) -> str:
    """One text per value: keys sorted, no spaces, non-ASCII kept (hashed as UTF-8)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def example_set_sha256(example_set: ExampleSet | None) -> str | None:
    if example_set is None:
        return None
    digest = hashlib.sha256()
    rows = (
        ExampleSetItem.objects.filter(example_set=example_set)
        .order_by("position")
        .values_list(
            "example__source_id",
            "example__context",
            "example__question",
            "example__gold_answers",
            "example__alternative_answers",
        )
    )
    for row in rows.iterator(chunk_size=2000):
        digest.update(json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest()
