"""What Prolific should do with a participant's submission, given how their participation ended.

One function, ``decide``, over the participation's outcome (``services.state.outcomes.outcome_for``, which
also gives each outcome its completion code). The choices, and why (docs/prolific.md):

- completed → APPROVE.
- excluded by the training filter (or an admin's exclusion override) → APPROVE: the protocol pays
  excluded workers for their time (their page gives them a completion code for that), and
  Prolific's guidance is not to reject participants screened out by the study. Prolific's
  SCREENED OUT status pays a fixed screen-out reward instead, and needs a screen-out completion
  code set up on the Prolific study; ``Decision(SCREEN_OUT, completion_code=...)`` is supported
  for when such a code exists.
- failed the attention checks → NEEDS_DECISION: never automatic.
- declined the consent text → NONE (the participant returns the submission on Prolific).
- abandoned → NONE (on Prolific the submission timed out or was returned); still working → NONE.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Participation
from annotation.services.state.outcomes import Outcome, outcome_for

APPROVE = "APPROVE"
REJECT = "REJECT"
SCREEN_OUT = "SCREEN_OUT"
NONE = "NONE"
NEEDS_DECISION = "NEEDS_DECISION"

PAID = (APPROVE, SCREEN_OUT)  # the outcomes that get the pay table's bonus

State = Participation.State


@dataclass(frozen=True)
class Decision:
    action: str
    reason: str
    completion_code: str = ""  # SCREEN_OUT: the Prolific study's screen-out code
    rejection_category: str = ""  # REJECT
    message: str = ""  # REJECT: at least 100 characters, shown to the participant


def decide(participation: Participation) -> Decision:
    """The Prolific action for a participation, from its outcome (``services.state.outcomes.outcome_for``)."""
    outcome = outcome_for(participation)
    if outcome == Outcome.COMPLETED:
        return Decision(APPROVE, "completed the study")
    if outcome == Outcome.SCREENED_OUT:
        return Decision(APPROVE, "excluded after training: paid for their time")
    if outcome == Outcome.ATTENTION_FAILED:
        return Decision(NEEDS_DECISION, "failed the attention checks: a person decides")
    if outcome == Outcome.DECLINED:
        return Decision(NONE, "declined the consent text (returned on Prolific)")
    if participation.state == State.ABANDONED:
        return Decision(NONE, "abandoned (timed out or returned on Prolific)")
    return Decision(NONE, "still taking part")
