"""What the Prolific operations did: one row per participant and operation, and every HTTP call.

``ProlificAction`` is the idempotency key: one row per (participation, kind). A run claims the row
(status ``uncertain``) and commits *before* calling Prolific, then records the answer; a row left
``uncertain`` (a time-out, a 5xx, a crash mid-call) is never retried by a run, so a bonus, whose
pay endpoint Prolific documents as not idempotent, is never paid twice. A person checks it on
Prolific and marks it resolved.
"""

from django.conf import settings
from django.db import models

from annotation.models.jobs import BackgroundJob
from annotation.models.participation import Participation
from annotation.models.study import Study
from tasks_app.models import Task


class ProlificAction(models.Model):
    class Kind(models.TextChoices):
        REVIEW = "review", "Approve / reject / screen out"
        BONUS = "bonus", "Bonus"
        GROUP = "group", "Participant group"
        PLACES = "places", "A place for the worker's replacement"

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
        help_text="The pay rule (annotation.services.money.pay.PAY_RULE_VERSION) that computed this bonus.",
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
    message = models.ForeignKey(
        "ProlificMessage", on_delete=models.CASCADE, null=True, blank=True, related_name="calls"
    )
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


class ProlificMessage(models.Model):
    """One message sent to participants through Prolific: to one, in bulk, or as a broadcast.

    ``key`` is our own id, unique: the row is claimed (``uncertain``) and committed before the call, so a
    second run of the same message sends nothing (annotation.services.prolific.messages); a broadcast sends
    it as its ``id``, which Prolific documents as making a resend return the first broadcast. ``recipients``
    holds the participants' ids as sent: a withdrawal pseudonymises them there as everywhere.
    """

    class Kind(models.TextChoices):
        ONE = "one", "To one participant"
        BULK = "bulk", "Bulk message"
        BROADCAST = "broadcast", "Broadcast"

    class Status(models.TextChoices):
        DONE = "done", "Sent"
        FAILED = "failed", "Refused (nothing sent; a run retries it)"
        UNCERTAIN = "uncertain", "Sent, answer unknown (check on Prolific)"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="prolific_messages")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    key = models.CharField(max_length=64, unique=True, help_text="Our own id of the message (a broadcast's id).")
    prolific_study = models.CharField(max_length=64, help_text="The Prolific study the message is about.")
    template = models.CharField(max_length=30, blank=True)
    language = models.CharField(max_length=10, blank=True)
    subject = models.CharField(max_length=200, blank=True, help_text="A broadcast's subject.")
    body = models.TextField()
    recipients = models.JSONField(default=list, help_text="The participants' ids, as sent.")
    recipient_count = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices)
    prolific_id = models.CharField(max_length=64, blank=True, help_text="The broadcast's id on Prolific.")
    error = models.TextField(blank=True)
    sent_by = models.CharField(max_length=150, help_text="The staff member (username) or command that sent it.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} message to {self.recipient_count} on {self.prolific_study}: {self.status}"


class ProlificGroup(models.Model):
    """The Prolific participant group of a task: everyone who took part, to block from its other studies."""

    task = models.OneToOneField(Task, on_delete=models.PROTECT, related_name="prolific_group")
    group_id = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.group_id})"


class ProlificEvent(models.Model):
    """One status change heard from Prolific: a webhook event, or a submission status read by polling.

    Unique on ``event_id`` (the webhook's ``X-Event-ID``; ``poll:<submission>:<status>`` for polling), so
    an event delivered twice is recorded, and acted on, once. Every event is kept, including the ones
    that changed nothing, with what was done (``outcome``).
    """

    class Source(models.TextChoices):
        WEBHOOK = "webhook", "Webhook"
        POLL = "poll", "Polling"

    event_id = models.CharField(max_length=100, unique=True)
    # X-Event-ID is not signed: a captured webhook replayed under a new id is known by what was signed.
    signed_digest = models.CharField(
        max_length=64,
        unique=True,
        null=True,
        blank=True,
        help_text="SHA-256 of the webhook's verified signature (the same request replayed has the same one).",
    )
    source = models.CharField(max_length=10, choices=Source.choices)
    event_type = models.CharField(max_length=60)
    resource_id = models.CharField(max_length=64, db_index=True, help_text="The submission (or study) it concerns.")
    participant_id = models.CharField(max_length=128, blank=True)
    status = models.CharField(max_length=30, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="When Prolific sent it (X-Timestamp).")
    received_at = models.DateTimeField(auto_now_add=True, db_index=True)
    participation = models.ForeignKey(
        Participation, on_delete=models.PROTECT, null=True, blank=True, related_name="prolific_events"
    )
    outcome = models.CharField(max_length=200, blank=True, help_text="What the app did with it.")
    payload = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} {self.status}: {self.outcome}"


class ProlificHookSecret(models.Model):
    """The workspace's webhook secret (Prolific keeps one per workspace), which signs every webhook.

    Created by ``manage.py prolific subscribe --run``; shown nowhere and never logged."""

    workspace_id = models.CharField(max_length=64, unique=True)
    secret_id = models.CharField(max_length=64, blank=True)
    value = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"webhook secret of workspace {self.workspace_id}"


class ProlificSubscription(models.Model):
    """A webhook subscription made by ``manage.py prolific subscribe``: one per event type and URL."""

    workspace_id = models.CharField(max_length=64)
    event_type = models.CharField(max_length=60)
    target_url = models.URLField(max_length=300)
    subscription_id = models.CharField(max_length=64, blank=True)
    confirmed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["event_type"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace_id", "event_type", "target_url"], name="prolific_subscription_one_per_url"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.target_url} ({'confirmed' if self.confirmed else 'unconfirmed'})"


class ProlificJob(BackgroundJob):
    """A run of a Prolific operation started from the dashboard or the admin, done by a Celery worker
    (annotation.services.prolific.jobs): off the web request, with its progress and its report."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prolific_jobs")
    operation = models.CharField(max_length=10, help_text="review, bonus, group or places.")
    report = models.JSONField(null=True, blank=True, help_text="The run's report, once done.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Prolific {self.operation} of study {self.study_id} ({self.status})"
