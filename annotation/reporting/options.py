"""The metric options a report is computed with; printed with every table."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


class ReportError(ValueError):
    """Bad input to a report (unknown study, bad option, bad file): shown to the user as is."""


@dataclass(frozen=True)
class MetricOptions:
    """How annotators' item scores become a condition's number.

    ``exclude_skips``: by default a skipped item counts as an empty answer
    (its S1 against the gold, 1 if the gold is empty and 0 otherwise); with
    this option skipped items are left out and each annotator's coverage is
    reported. ``ddof``: 0 is the population standard deviation the paper
    prints, 1 the sample standard deviation.
    """

    exclude_skips: bool = False
    ddof: int = 0

    def __post_init__(self) -> None:
        if self.ddof not in (0, 1):
            raise ReportError(f"ddof must be 0 (population) or 1 (sample), not {self.ddof!r}")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> MetricOptions:
        """From a JSON/query-string dict: {"exclude_skips": bool-ish, "ddof": 0|1}."""
        raw_skips = params.get("exclude_skips", False)
        if isinstance(raw_skips, str):
            lowered = raw_skips.strip().lower()
            if lowered not in {"", "0", "1", "true", "false", "yes", "no", "on", "off"}:
                raise ReportError(f"exclude_skips must be true or false, not {raw_skips!r}")
            raw_skips = lowered in {"1", "true", "yes", "on"}
        raw_ddof = params.get("ddof", 0)
        try:
            ddof = int(raw_ddof)
        except (TypeError, ValueError):
            raise ReportError(f"ddof must be 0 or 1, not {raw_ddof!r}") from None
        return cls(exclude_skips=bool(raw_skips), ddof=ddof)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def spread(self) -> str:
        return (
            "population standard deviation (ddof=0, as in the CLUES paper)"
            if self.ddof == 0
            else "sample standard deviation (ddof=1)"
        )

    def describe(self) -> str:
        """The sentence printed under every table."""
        spread = self.spread
        skips = (
            "skipped items are excluded (coverage reported per annotator)"
            if self.exclude_skips
            else "a skipped item counts as an empty answer"
        )
        return (
            f"S1 on a 0-100 scale; mean ± {spread} over each condition's completed annotators; "
            f"{skips}; excluded and abandoned workers are not averaged in."
        )
