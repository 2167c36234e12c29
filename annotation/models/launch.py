"""A study opened despite what its launch check named as blocking (annotation.services.studies.launch)."""

from django.conf import settings
from django.db import models

from annotation.models.study import Study


class LaunchOverride(models.Model):
    """Who opened a study with blockers, when, and which: the check's findings as they were then."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="launch_overrides")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    by_name = models.CharField(
        max_length=150, blank=True, help_text="Who opened it: the account's username, or the command that did."
    )
    at = models.DateTimeField(auto_now_add=True)
    blockers = models.JSONField(default=list, help_text="The blockers overridden: [{code, message, fix}, ...].")

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"study {self.study_id} opened by {self.by_name or 'someone'} over {len(self.blockers)} blocker(s)"
