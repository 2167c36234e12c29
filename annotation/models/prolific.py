"""What the Prolific operations did: one row per participant and operation, and every HTTP call.

``ProlificAction`` is the idempotency key: one row per (participation, kind). A run claims the row
(status ``uncertain``) and commits *before* calling Prolific, then records the answer; a row left
``uncertain`` (a time-out, a 5xx, a crash mid-call) is never retried by a run, so a bonus, whose
pay endpoint Prolific documents as not idempotent, is never paid twice. A person checks it on
Prolific and marks it resolved.
"""

from django.db import models

from annotation.models.participation import Participation
from tasks_app.models import Task


class ProlificAction(models.Model):
    class Kind(models.TextChoices):
        REVIEW = "review", "Approve / reject / screen out"
        BONUS = "bonus", "Bonus"
        GROUP = "group", "Participant group"

    class Status(models.TextChoices):
        DONE = "done", "Done"
        SET_UP = "set_up", "Bonus set up on Prolific, not paid yet"
        FAILED = "failed", "Failed (nothing done; a run retries it)"
        UNCERTAIN = "uncertain", "Sent, answer unknown (check on Prolific)"

    participation = models.ForeignKey(Participation, on_delete=models.PROTECT, related_name="prolific_actions")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    action = models.CharField(max_length=20, help_text="APPROVE, REJECT, SCREEN_OUT, BONUS or GROUP.")
    status = models.CharField(max_length=10, choices=Status.choices)
    amount = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    pay_rule_version = models.CharField(
        max_length=10,
        blank=True,
        help_text="The pay rule (annotation.services.pay.PAY_RULE_VERSION) that computed this bonus.",
    )
    prolific_id = models.CharField(
        max_length=64, blank=True, help_text="The submission, bulk bonus payment or participant group it concerns."
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["participation", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["participation", "kind"], name="prolific_action_one_per_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.participation_id} {self.action}: {self.status}"


class ProlificCall(models.Model):
    """One HTTP exchange with Prolific, with its answer (or why there was none)."""

    action = models.ForeignKey(ProlificAction, on_delete=models.CASCADE, null=True, blank=True, related_name="calls")
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=300)
    request = models.JSONField(default=dict, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response = models.TextField(blank=True, help_text="The start of the answer's body.")
    ok = models.BooleanField()
    error = models.TextField(blank=True)
    seconds = models.FloatField(default=0.0)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.method} {self.path} → {self.status_code or self.error[:40]}"


class ProlificGroup(models.Model):
    """The Prolific participant group of a task: everyone who took part, to block from its other studies."""

    task = models.OneToOneField(Task, on_delete=models.PROTECT, related_name="prolific_group")
    group_id = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.group_id})"
