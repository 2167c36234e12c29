"""What Prolific should do with a participant's submission, given how their participation ended.

One function, ``decide``, so the mapping has one home (the per-outcome completion codes can plug in
here). The choices, and why (docs/prolific.md):

- completed → APPROVE.
- excluded by the training filter (or an admin's exclusion override) → APPROVE: the protocol pays
  excluded workers for their time (their page gives them a completion code for that), and
  Prolific's guidance is not to reject participants screened out by the study. Prolific's
  SCREENED OUT status pays a fixed screen-out reward instead, and needs a screen-out completion
  code set up on the Prolific study; ``Decision(SCREEN_OUT, completion_code=...)`` is supported
  for when such a code exists.
- excluded for any other reason (an attention check, ...) → NEEDS_DECISION: never automatic.
- abandoned → NONE (on Prolific the submission timed out or was returned); still working → NONE.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import FilterDecision, Participation

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
    state = participation.state
    if state == State.COMPLETED:
        return Decision(APPROVE, "completed the study")
    if state == State.EXCLUDED:
        latest = FilterDecision.objects.filter(participation=participation).order_by("-at", "-id").first()
        if latest is not None and not latest.passed:
            return Decision(APPROVE, "excluded after training: paid for their time")
        return Decision(NEEDS_DECISION, "excluded for a reason other than the training filter: a person decides")
    if state == State.ABANDONED:
        return Decision(NONE, "abandoned (timed out or returned on Prolific)")
    return Decision(NONE, "still taking part")
