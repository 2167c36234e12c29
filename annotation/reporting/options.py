"""The metric options a report is computed with; printed with every table."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from annotation.errors import ServiceError
from tasks_app.scoring import SKIP_EMPTY, SKIP_EXCLUDE, SKIP_POLICIES, SKIP_ZERO


class ReportError(ServiceError, ValueError):
    """Bad input to a report (unknown study, bad option, bad file): shown to the user as is."""


_TRUE = {"1", "true", "yes", "on"}
_BOOLISH = _TRUE | {"", "0", "false", "no", "off"}

_SKIP_SENTENCES = {
    SKIP_ZERO: "a skipped item scores 0",
    SKIP_EMPTY: "a skipped item counts as an empty answer (1 if the gold is empty, else 0)",
    SKIP_EXCLUDE: "skipped items are left out (coverage reported per annotator)",
}


@dataclass(frozen=True)
class MetricOptions:
    """How annotators' item scores become a condition's number.

    ``skip_policy`` (``tasks_app.scoring.SKIP_POLICIES``): ``"zero"`` (default) scores a skipped
    item 0, so skipping never earns credit; ``"empty"`` scores it as the empty answer (1 if the gold
    is empty, else 0); ``"exclude"`` leaves it out and reports each annotator's coverage.
    ``ddof``: 0 is the population standard deviation the paper prints, 1 the sample one.
    """

    skip_policy: str = SKIP_ZERO
    ddof: int = 0

    def __post_init__(self) -> None:
        if self.skip_policy not in SKIP_POLICIES:
            raise ReportError(f"skip_policy must be one of {', '.join(SKIP_POLICIES)}, not {self.skip_policy!r}")
        if self.ddof not in (0, 1):
            raise ReportError(f"ddof must be 0 (population) or 1 (sample), not {self.ddof!r}")

    @property
    def exclude_skips(self) -> bool:
        """Skipped items are left out (and every format shows coverage)."""
        return self.skip_policy == SKIP_EXCLUDE

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> MetricOptions:
        """From a JSON/query-string dict: {"skip_policy": "zero"|"empty"|"exclude", "ddof": 0|1}.

        The former ``exclude_skips`` (bool-ish) still works, so old links and stored export jobs
        keep their meaning: true is "exclude", false the policy given or the default.
        """
        policy = params.get("skip_policy")
        if policy is None or policy == "":
            policy = SKIP_ZERO
        if not isinstance(policy, str):
            raise ReportError(f"skip_policy must be one of {', '.join(SKIP_POLICIES)}, not {policy!r}")
        policy = policy.strip().lower()
        raw_skips = params.get("exclude_skips", False)
        if isinstance(raw_skips, str):
            lowered = raw_skips.strip().lower()
            if lowered not in _BOOLISH:
                raise ReportError(f"exclude_skips must be true or false, not {raw_skips!r}")
            raw_skips = lowered in _TRUE
        if raw_skips:
            if params.get("skip_policy") not in (None, "", SKIP_EXCLUDE):
                raise ReportError(f"exclude_skips=true contradicts skip_policy={policy!r}")
            policy = SKIP_EXCLUDE
        raw_ddof = params.get("ddof", 0)
        try:
            ddof = int(raw_ddof)
        except (TypeError, ValueError):
            raise ReportError(f"ddof must be 0 or 1, not {raw_ddof!r}") from None
        return cls(skip_policy=policy, ddof=ddof)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def spread(self) -> str:
        return (
            "population standard deviation (ddof=0, as in the CLUES paper)"
            if self.ddof == 0
            else "sample standard deviation (ddof=1)"
        )

    @property
    def skips(self) -> str:
        """The skip policy in words, e.g. for a plot's caption."""
        return _SKIP_SENTENCES[self.skip_policy]

    def describe(self) -> str:
        """The sentence printed under every table, plot and export."""
        return (
            f"S1 on a 0-100 scale; mean ± {self.spread} over each condition's completed annotators; "
            f"skip policy {self.skip_policy!r}: {self.skips}; excluded and abandoned workers are not averaged in."
        )
