"""How a task's imported test set compares with the CLUES paper: its size against Table 3 and, for
MNLI, its genres x items per genre against the paper's 7 x 30.

Every line is a ``paper_comparison`` finding (info: a difference from the paper is a fact to report,
not a fault of the files), so a summary can gather them in one place.
"""

from __future__ import annotations

from collections import Counter

from tasks_app.importing.findings import Finding
from tasks_app.importing.planning import TaskPlan
from tasks_app.paper import MNLI_TEST_MAKEUP, TEST_SET_SIZES

KIND = "paper_comparison"


def compare_with_paper(plan: TaskPlan) -> list[Finding]:
    """The comparison lines for one planned task; none for a task the paper does not have."""
    slug = plan.spec.slug
    test = next((s for s in plan.sets if s.role == "test"), None)
    if slug not in TEST_SET_SIZES or test is None:
        return []
    size, expected = len(test.fingerprints), TEST_SET_SIZES[slug]
    verdict = "as in the paper" if size == expected else f"the paper's Table 3 has {expected}"
    findings = [Finding(slug, test.source_file, None, KIND, f"test set: {size} items; {verdict}")]
    if slug == "mnli":
        genres = Counter(str(plan.examples[fp]["extra"].get("genre", "(none)")) for fp in test.fingerprints)
        findings.append(Finding(slug, test.source_file, None, KIND, _genre_line(genres)))
    return findings


def _genre_line(genres: Counter[str]) -> str:
    per_genre = sorted(set(genres.values()))
    makeup = (
        f"{len(genres)} genres x {per_genre[0]} items"
        if len(per_genre) == 1
        else (f"{len(genres)} genres x {min(per_genre)}-{max(per_genre)} items")
    )
    listing = ", ".join(f"{genre} {n}" for genre, n in sorted(genres.items()))
    paper = MNLI_TEST_MAKEUP.describe()
    same = len(genres) == MNLI_TEST_MAKEUP.genres and per_genre == [MNLI_TEST_MAKEUP.items_per_genre]
    verdict = "as in the paper" if same else f"the paper has {paper}"
    return f"MNLI test genres: {makeup} ({listing}); {verdict}"
