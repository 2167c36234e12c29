"""The audit trail: every staff action on a study or a participant, with who, when and before/after values.

Written only by ``annotation.services.audit.record`` (docs/participants.md, "Audit trail"); read-only
everywhere else (the admin shows it without add, change or delete). A row names its target by the
study, the participation's pk or a worker's pseudonym, never by a platform identifier."""

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from annotation.models.participation import Participation
from annotation.models.study import Study


class AuditEntry(models.Model):
    class Action(models.TextChoices):
        STUDY_CREATE = "study.create", "study created"
        STUDY_DELETE = "study.delete", "study deleted"
        STUDY_OPEN = "study.open", "study opened"
        STUDY_OPEN_PILOT = "study.open_pilot", "study opened as a pilot"
        STUDY_OPEN_REST = "study.open_rest", "the rest of a piloted study opened"
        STUDY_REOPEN = "study.reopen", "study reopened (was paused)"
        STUDY_PAUSE = "study.pause", "study paused"
        STUDY_CLOSE = "study.close", "study closed"
        STUDY_CLOSE_OUT = "study.close_out", "workers closed out after the grace period"
        STUDY_SETTINGS = "study.settings", "study settings or rules edited"
        STUDY_CONDITIONS = "study.conditions", "study conditions changed"
        FILTER_FORCED = "study.filter_forced", "training filter's pending groups judged at once (forced)"
        ATTENTION_CHECKS = "study.attention_checks", "attention checks edited"
        READMIT = "participation.readmit", "participant readmitted"
        EXCLUDE = "participation.exclude", "participant excluded"
        BLOCK = "worker.block", "worker blocked"
        UNBLOCK = "worker.unblock", "worker unblocked"
        WITHDRAW_DRY_RUN = "participant.withdraw_dry_run", "withdrawal, dry run"
        WITHDRAW = "participant.withdraw", "participant withdrawn"
        PROLIFIC_DRY_RUN = "prolific.dry_run", "Prolific operation, dry run"
        PROLIFIC_RUN = "prolific.run", "Prolific operation run"
        PROLIFIC_QUEUED = "prolific.queued", "Prolific operation queued"
        PROLIFIC_RESOLVE = "prolific.resolve", "uncertain Prolific payment resolved"
        EXPORT = "export", "export"
        MESSAGE_DRY_RUN = "message.dry_run", "message to participants, dry run"
        MESSAGE = "message.send", "message to participants sent"
        REFUSED = "access.refused", "staff request refused (no right)"

    at = models.DateTimeField(db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor_name = models.CharField(
        max_length=150, help_text="The staff member's username, or the command or job that acted."
    )
    action = models.CharField(max_length=40, choices=Action.choices, db_index=True)
    study = models.ForeignKey(Study, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    study_slug = models.CharField(max_length=100, blank=True, help_text="Kept when the study is deleted.")
    participation = models.ForeignKey(Participation, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    target = models.CharField(
        max_length=200, blank=True, help_text="What was acted on: a study, a participation's pk, a pseudonym."
    )
    before = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    detail = models.JSONField(
        default=dict, blank=True, encoder=DjangoJSONEncoder, help_text="The rest: a reason, the rows of a run, ids."
    )

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"
        indexes = [models.Index(fields=["study_slug", "at"], name="audit_study_at")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name}: {self.action} {self.target}"
