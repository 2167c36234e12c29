"""A worker's answer to one item, and its spans."""

from django.db import models
from django.db.models import F, Q

from annotation.models.attention import AttentionCheck
from annotation.models.participation import Participation
from annotation.protocol import states
from tasks_app.models import Example


class CountedResponses(models.Manager["Response"]):
    """``Response.objects``: the answers that count, those to the task's own items by crowd workers.

    Attention-check answers and staff previews' answers are left out here, so every score, table,
    agreement and export (which all read ``Response.objects``) ignores them by construction. The worker's
    own path (laying out, locking, revealing) uses ``Response.all_objects``."""

    def get_queryset(self) -> models.QuerySet["Response"]:
        return super().get_queryset().filter(attention_check__isnull=True, participation__is_preview=False)


class Response(models.Model):
    """One item of a worker's training or test step.

    The row is created ``pending`` when the worker's step is laid out (in the
    order the worker will see), and locked exactly once on submit: the lock is
    a conditional UPDATE from pending, so a repeated submission can never
    overwrite it. "No answer" (the empty set) and "skipped" are distinct
    statuses; a pending row is "not answered".

    ``answer`` is the answer set as strings (label word, or the spans' texts),
    ``score`` the item's S1 against the gold, derived from ``answer`` at lock
    time by the pure scorer and re-derivable at any time.
    """

    Phase = states.Phase

    class Status(models.TextChoices):
        PENDING = "pending", "Not answered yet"
        ANSWERED = "answered", "Answered"
        NO_ANSWER = "no_answer", "Answered: no answer (empty set)"
        SKIPPED = "skipped", "Skipped"

    # No index of its own: response_unique_position begins with it (one index fewer to update per lock).
    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="responses", db_index=False)
    example = models.ForeignKey(Example, on_delete=models.PROTECT, related_name="responses")
    attention_check = models.ForeignKey(
        AttentionCheck,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="responses",
        help_text="Set on an attention check's row: never counted (Response.objects leaves it out).",
    )
    phase = models.CharField(max_length=10, choices=Phase.choices)
    position = models.PositiveIntegerField(help_text="0-based position in the worker's order for this phase.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    label = models.CharField(max_length=50, blank=True)
    answer = models.JSONField(default=list, blank=True)
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    shown_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    revealed_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True, help_text="Last heartbeat while on the item.")
    active_ms = models.PositiveIntegerField(default=0, help_text="Time on the item, idle time capped.")
    blur_count = models.PositiveIntegerField(default=0, help_text="How often the page lost focus on this item.")
    # Integrity signals the page sends with the answer (services.session.signals); empty when a client sent none.
    visible_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Time the item was visible (page).")
    hidden_count = models.PositiveIntegerField(
        null=True, blank=True, help_text="How often the page lost focus or was hidden while the item was open."
    )
    hidden_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Total time away (unfocused or hidden).")
    copy_count = models.PositiveIntegerField(null=True, blank=True, help_text="How often text of the item was copied.")
    reading_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Reading-time estimate for the item's text (services.session.signals), set on lock.",
    )

    # The default manager (Meta) is the counted one (related managers and prefetches too); cascades use
    # the base manager, a plain one.
    all_objects = models.Manager()
    objects = CountedResponses()

    class Meta:
        ordering = ["participation", "phase", "position"]
        default_manager_name = "objects"
        constraints = [
            models.UniqueConstraint(fields=["participation", "phase", "position"], name="response_unique_position"),
            models.UniqueConstraint(fields=["participation", "phase", "example"], name="response_one_per_item"),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=1, confidence__lte=5),
                name="response_confidence_1_to_5",
            ),
            models.CheckConstraint(
                condition=Q(status="pending", submitted_at__isnull=True)
                | (~Q(status="pending") & Q(submitted_at__isnull=False)),
                name="response_submitted_iff_locked",
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0, score__lte=1), name="response_score_0_to_1"
            ),
        ]
        indexes = [
            # The worker's current item: the first pending row of the step. Partial, so it holds only the
            # pending rows and a lookup never walks over the answered ones.
            models.Index(
                fields=["participation", "phase", "position"],
                condition=Q(status="pending"),
                name="response_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.participation_id}/{self.phase}#{self.position} ({self.status})"

    @property
    def is_locked(self) -> bool:
        return self.status != self.Status.PENDING


class AnswerSpan(models.Model):
    """A highlighted span: Python string offsets into the context, end exclusive."""

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="spans")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["response", "start", "end"]
        constraints = [
            models.CheckConstraint(condition=Q(start__gte=0), name="span_start_not_negative"),
            models.CheckConstraint(condition=Q(start__lt=F("end")), name="span_start_before_end"),
            models.UniqueConstraint(fields=["response", "start", "end"], name="span_unique_per_response"),
        ]

    def __str__(self) -> str:
        return f"{self.response_id}[{self.start}:{self.end}]"
