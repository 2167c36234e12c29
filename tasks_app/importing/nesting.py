"""Are a split's shot levels nested, and building nested sets when they are not.

Nesting is judged per question type, on content (the line without its id:
SST-2 renumbers every file from 1, so ids cannot be compared).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import pairwise

from tasks_app.importing.findings import Finding
from tasks_app.importing.reading import SourceLine


def missing_from(smaller: list[SourceLine], larger: list[SourceLine]) -> Counter:
    """How many lines of ``smaller`` are absent from ``larger``, by question type ('' when none)."""
    present = {(r.question_type, r.content_key) for r in larger}
    return Counter(r.question_type for r in smaller if (r.question_type, r.content_key) not in present)


def check_nested(files: dict[int, list[SourceLine]], *, task: str, split: int, names: dict[int, str]) -> list[Finding]:
    """One finding per adjacent pair of shot levels (10 in 20, 20 in 30) that is not nested."""
    findings = []
    levels = sorted(files)
    for small, large in pairwise(levels):
        missing = missing_from(files[small], files[large])
        if not missing:
            continue
        total = sum(missing.values())
        by_type = ""
        if any(missing):
            by_type = " (" + ", ".join(f"{code}: {n}" for code, n in sorted(missing.items())) + ")"
        findings.append(
            Finding(
                task,
                names[small],
                None,
                "split_not_nested",
                f"split {split}: {total} of {len(files[small])} items are not in {names[large]}{by_type}",
            )
        )
    return findings


def nested_prefixes(records: list[SourceLine], shot_levels: list[int]) -> dict[int, list[SourceLine]]:
    """For each k, the first k records of each question type, in file order."""
    result = {}
    for k in shot_levels:
        taken: dict[str, int] = defaultdict(int)
        chosen = []
        for record in records:
            if taken[record.question_type] < k:
                taken[record.question_type] += 1
                chosen.append(record)
        result[k] = chosen
    return result
