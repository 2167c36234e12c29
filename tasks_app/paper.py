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


# FewCLUE (Xu et al., 2021): public test items (test_public) per task, as the paper's Table 1 and the
# repository README's table give them (folder names of the repository's datasets/). Where the files differ,
# the import names the difference: CSL's test_public.json holds 2838 lines, the paper and the README 2828.
FEWCLUE_TEST_SET_SIZES: dict[str, int] = {
    "eprstmt": 610,
    "csldcp": 1784,
    "tnews": 2010,
    "iflytek": 1749,
    "ocnli": 2520,
    "bustm": 1772,
    "csl": 2828,
    "chid": 2002,
    "cluewsc": 976,
}
FEWCLUE_LABEL_COUNTS: dict[str, int] = {"csldcp": 67, "tnews": 15, "iflytek": 119}
FEWCLUE_SIZES_SOURCE = "FewCLUE (Xu et al., 2021), Table 1 and the repository README's table"

# FewCLUE's human row (Xu et al., 2021, Table 2; the README's results table), accuracy on a 0-100 scale, in the
# paper's column order; "Score" is the paper's average over the nine tasks.
FEWCLUE_HUMAN: dict[str, float] = {
    "eprstmt": 90.0,
    "csldcp": 68.0,
    "tnews": 71.0,
    "iflytek": 66.0,
    "ocnli": 90.3,
    "bustm": 88.0,
    "csl": 84.0,
    "chid": 87.1,
    "cluewsc": 98.0,
}
FEWCLUE_HUMAN_SCORE = 82.5
# Six of the nine come from CLUE's human evaluations of these tasks (the README: TNEWS, CHID, IFLYTEK, OCNLI,
# CSL and CLUEWSC "come from the CLUE benchmark"; its first results table had these six numbers and "?" for
# the three new tasks), not from FewCLUE's own evaluation, which measured the three new tasks.
FEWCLUE_HUMAN_FROM_CLUE: tuple[str, ...] = ("tnews", "iflytek", "ocnli", "csl", "chid", "cluewsc")
FEWCLUE_HUMAN_OWN: tuple[str, ...] = ("eprstmt", "csldcp", "bustm")
