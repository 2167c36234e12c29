"""A participation's states, why one was excluded, and the two steps (phases) a worker answers in."""

from __future__ import annotations

from django.db import models


class ParticipationState(models.TextChoices):
    CLAIMED = "claimed", "Claimed"
    TRAINING = "training", "Training"
    TEST = "test", "Test"
    COMPLETED = "completed", "Completed"
    ABANDONED = "abandoned", "Abandoned"
    EXCLUDED = "excluded", "Excluded"
    DECLINED = "declined", "Declined consent"


class ExclusionKind(models.TextChoices):
    """Why an excluded participation was excluded (empty while it is not, and on exclusions older than this)."""

    TRAINING_FILTER = "training_filter", "Training filter"
    ATTENTION = "attention", "Failed attention checks"
    INTEGRITY = "integrity", "Integrity rule (copies, fast answers, hidden page)"
    COMPREHENSION = "comprehension", "Failed the comprehension check twice"
    CLOSED = "closed", "Study closed before they finished"
    ADMIN = "admin", "Excluded by an admin"


class Phase(models.TextChoices):
    TRAINING = "training", "Training"
    TEST = "test", "Test"


# Which step each state works in; the other states have none.
PHASE_OF_STATE: dict[str, str] = {ParticipationState.TRAINING: Phase.TRAINING, ParticipationState.TEST: Phase.TEST}
