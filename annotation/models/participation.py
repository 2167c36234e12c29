"""Workers and their participation in a condition (a slot), with its history."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.study import Condition, Study
from annotation.protocol.states import ExclusionKind, ParticipationState
from tasks_app.models import Task


class Worker(models.Model):
    """A crowd worker, identified by platform and the platform's id."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"
        INHOUSE = "inhouse", "In-house"
        PREVIEW = "preview", "Staff preview"  # one per staff user: their previews (annotation.services.studies.preview)

    platform = models.CharField(max_length=10, choices=Platform.choices)
    external_id = models.CharField(max_length=128)
    blocked = models.BooleanField(default=False, help_text="Blocked workers cannot join any study.")
    blocked_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["platform", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["platform", "external_id"], name="worker_unique_platform_id"),
            models.CheckConstraint(condition=~Q(external_id=""), name="worker_id_not_blank"),
        ]

    def __str__(self) -> str:
        return f"{self.platform}:{self.external_id}"


# At module level so Participation.Meta's constraint can read it (a nested class body cannot see the
# enclosing class's names).
_HOLDING_STATES = (
    ParticipationState.CLAIMED,
    ParticipationState.TRAINING,
    ParticipationState.TEST,
    ParticipationState.COMPLETED,
)


class CountedParticipations(models.Manager["Participation"]):
    """``Participation.objects``: the crowd's participations, never a staff preview.

    Every count, table, export and slot computation reads through it, so previews stay out of them by
    construction (it is the default manager, so related managers such as ``study.participations`` are
    the same); the worker's own path (lifecycle, steps), which must reach a preview as any other
    participation, uses ``Participation.all_objects``."""

    def get_queryset(self) -> models.QuerySet["Participation"]:
        # A withdrawn participant's participation (annotation.services.rights) is kept, answerless, only
        # for its payment rows and its slot: it leaves every count, table and export here.
        return super().get_queryset().filter(is_preview=False, withdrawn_at__isnull=True)


class Participation(models.Model):
    """A worker's slot in one condition: claimed → training → test → completed.

    Side exits: abandoned (no activity for the study's timeout), excluded
    (failed the training filter) and declined (said no to the consent text;
    not a holding state, so the slot is free again). The database guarantees the protocol's two
    counting rules:

    A staff preview (``is_preview``) is a participation of a per-staff preview worker with no slot:
    outside both rules below, and outside ``Participation.objects``.

    - ``participation_one_per_worker_and_task``: a worker takes part in a task
      at most once, ever, whatever the condition, study or final state.
    - ``participation_one_active_per_slot``: each of a condition's N slot
      numbers holds at most one participation in ``HOLDING_STATES`` (active
      or completed); ``annotation.services.state.slots`` chooses the number below N
      under row locks on the study and its conditions.
    """

    State = ParticipationState
    ExclusionKind = ExclusionKind

    # The states that hold a slot: the partial unique index below and annotation.services.state.slots both
    # use this tuple. ACTIVE_STATES are the holders still at work (what the abandonment sweep releases).
    HOLDING_STATES = _HOLDING_STATES
    ACTIVE_STATES = (State.CLAIMED, State.TRAINING, State.TEST)

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participations")
    condition = models.ForeignKey(Condition, on_delete=models.PROTECT, related_name="participations")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="participations")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="participations")
    slot_index = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Empty for a staff preview.")
    is_preview = models.BooleanField(default=False, help_text="A staff preview: holds no slot, counted nowhere.")
    exclusion_kind = models.CharField(max_length=20, choices=ExclusionKind.choices, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.CLAIMED)
    test_seed = models.BigIntegerField(null=True, blank=True, help_text="Seed of the shuffled test order, if any.")
    completion_code = models.CharField(max_length=64, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True, help_text="When the worker agreed to the consent text.")
    consent_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 (hex) of the exact consent text the worker agreed to."
    )
    platform_data = models.JSONField(
        default=dict, blank=True, help_text="Platform parameters of the entry (assignmentId, SESSION_ID, ...)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(
        null=True, blank=True, help_text="The participant withdrew: answers erased, identifiers pseudonymised."
    )

    # ``objects`` is the default manager (Meta): related managers (study.participations), the admin and
    # prefetches leave previews out too. Cascades use the base manager, a plain one: they reach previews.
    all_objects = models.Manager()
    objects = CountedParticipations()

    class Meta:
        ordering = ["study", "condition", "slot_index", "created_at"]
        default_manager_name = "objects"
        constraints = [
            models.UniqueConstraint(
                fields=["worker", "task"], condition=Q(is_preview=False), name="participation_one_per_worker_and_task"
            ),
            models.UniqueConstraint(
                fields=["worker", "study"], condition=Q(is_preview=True), name="participation_one_preview_per_study"
            ),
            models.UniqueConstraint(
                fields=["condition", "slot_index"],
                # Plain strings, as in migration 0001, so no generated migration refers to the live enum.
                # A preview's empty slot_index never collides (NULLs are distinct in a unique index).
                condition=Q(state__in=[str(s) for s in _HOLDING_STATES]),
                name="participation_one_active_per_slot",
            ),
            models.CheckConstraint(
                condition=Q(is_preview=True, slot_index__isnull=True) | Q(is_preview=False, slot_index__isnull=False),
                name="participation_slot_iff_not_preview",
            ),
        ]
        indexes = [models.Index(fields=["state", "last_activity_at"], name="participation_state_activity")]

    def __str__(self) -> str:
        return f"{self.worker} in {self.condition} ({self.state})"


class ConsentDecline(models.Model):
    """A worker who declined a study's consent text at its entry page, before any slot was theirs.

    Holds no slot and no condition, and is not a participation: the worker's one try at the task stays
    unused. One per worker and study, so the statement's count of declines counts people; the decline
    is final for this study (reopening the link shows the declined page again).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="consent_declines")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="consent_declines")
    platform_data = models.JSONField(default=dict, blank=True, help_text="The entry's platform parameters.")
    at = models.DateTimeField()

    class Meta:
        ordering = ["study", "at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "worker"], name="consent_decline_one_per_worker_and_study")
        ]

    def __str__(self) -> str:
        return f"{self.worker} declined {self.study}"


class ParticipationEvent(models.Model):
    """One state transition of a participation, with when, why and by whom."""

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="events")
    from_state = models.CharField(max_length=10, blank=True)
    to_state = models.CharField(max_length=10, choices=Participation.State.choices)
    at = models.DateTimeField(db_index=True)
    reason = models.CharField(max_length=300, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)

    class Meta:
        ordering = ["participation", "at", "id"]

    def __str__(self) -> str:
        return f"{self.participation_id}: {self.from_state or '-'} → {self.to_state}"


class FilterDecision(models.Model):
    """The training filter's verdict on a worker, or an admin's override of it."""

    # The version of the filter's rules a new decision is made under (docs/studies.md, "Rule changes and
    # collected results"). 1: the relative rule compared a worker with the others still in the study and
    # passed a worker judged alone; 2: with every worker who finished training, never alone.
    RULE_VERSION = 2

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="filter_decisions")
    training_s1 = models.FloatField(
        null=True, blank=True, help_text="Empty when the worker had no scored training item (e.g. zero-shot)."
    )
    rule = models.CharField(max_length=10)
    threshold = models.FloatField()
    reference_mean = models.FloatField(
        null=True, blank=True, help_text="Relative rule: the group's reference (mean or median of the others)."
    )
    reference = models.CharField(max_length=10, blank=True, help_text="Relative rule: mean or median.")
    group_training_s1 = models.JSONField(
        default=list,
        blank=True,
        help_text="Relative rule: the training S1 of the others in the group the worker was compared with.",
    )
    pending_group = models.BooleanField(
        default=False,
        help_text="Relative rule: the worker went on to the test; the verdict waits for the group's training.",
    )
    passed = models.BooleanField()
    is_override = models.BooleanField(default=False)
    reason = models.CharField(max_length=500)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    rule_version = models.PositiveSmallIntegerField(
        default=RULE_VERSION, help_text="The version of the filter's rules that made this decision."
    )
    at = models.DateTimeField()

    class Meta:
        ordering = ["participation", "at", "id"]

    def __str__(self) -> str:
        verdict = "waiting for the group" if self.pending_group else ("passed" if self.passed else "failed")
        return f"{self.participation_id}: {verdict}{' (override)' if self.is_override else ''}"


class SurveyResponse(models.Model):
    """A worker's answers to the study's survey at one placement (annotation.services.admission.survey)."""

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="survey_responses")
    placement = models.CharField(max_length=20, choices=Study.SurveyPlacement.choices)
    answers = models.JSONField(default=dict, help_text="Question key -> answer (validated against the survey).")
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["participation", "placement"]
        constraints = [
            models.UniqueConstraint(fields=["participation", "placement"], name="survey_response_one_per_placement")
        ]

    def __str__(self) -> str:
        return f"{self.participation_id}: survey {self.placement}"


class ComprehensionAttempt(models.Model):
    """One attempt at the study's comprehension check (annotation.services.admission.comprehension): at most two."""

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="comprehension_attempts")
    number = models.PositiveSmallIntegerField(help_text="1 or 2: the second attempt follows a failed first.")
    answers = models.JSONField(default=dict, help_text="Question key -> the option(s) chosen.")
    wrong = models.JSONField(default=list, blank=True, help_text="The keys of the questions answered wrongly.")
    passed = models.BooleanField()
    at = models.DateTimeField()

    class Meta:
        ordering = ["participation", "number"]
        constraints = [
            models.UniqueConstraint(fields=["participation", "number"], name="comprehension_attempt_one_per_number"),
            models.CheckConstraint(condition=Q(number__gte=1, number__lte=2), name="comprehension_attempt_number"),
        ]

    def __str__(self) -> str:
        return f"{self.participation_id}: comprehension attempt {self.number} ({'passed' if self.passed else 'failed'})"


class Withdrawal(models.Model):
    """A participant's withdrawal (annotation.services.rights.withdrawal), without personal data.

    What is kept and why (docs/participants.md): which study and condition lost a participation, when,
    and which staff member ran it; the participation itself stays, answerless and pseudonymised, with
    its Prolific payment rows."""

    participation = models.OneToOneField(Participation, on_delete=models.PROTECT, related_name="withdrawal")
    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="withdrawals")
    condition = models.ForeignKey(Condition, on_delete=models.PROTECT, related_name="withdrawals")
    at = models.DateTimeField()
    run_by = models.CharField(max_length=150, help_text="The staff member (username) or command that ran it.")

    class Meta:
        ordering = ["study", "at"]

    def __str__(self) -> str:
        return f"withdrawal from {self.study} ({self.at:%Y-%m-%d})"
