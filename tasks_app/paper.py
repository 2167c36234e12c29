"""Facts from the CLUES paper (Mukherjee et al., NeurIPS 2021) that the platform compares itself with.

Plain data, no Django: the importer reports how a release differs from these (see
``tasks_app.importing.paper_comparison``). Slugs are the catalog's.
"""

from __future__ import annotations

from dataclasses import dataclass

# The paper's Table 3: the number of test items of each task. Transcribed from the release's README,
# which gives the same sizes; the paper's own table could not be read from the machines this was
# written on, so check these six numbers against it once (one line each to change).
TEST_SET_SIZES: dict[str, int] = {
    "sst2": 210,
    "mnli": 210,
    "conll03": 600,
    "wikiann": 600,
    "squad2": 200,
    "record": 200,
}


@dataclass(frozen=True)
class GenreMakeup:
    genres: int
    items_per_genre: int

    @property
    def items(self) -> int:
        return self.genres * self.items_per_genre

    def describe(self) -> str:
        return f"{self.genres} genres x {self.items_per_genre} items"


# The paper's MNLI test set: 30 items from each of 7 genres.
MNLI_TEST_MAKEUP = GenreMakeup(genres=7, items_per_genre=30)
