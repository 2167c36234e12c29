"""The audit trail in the admin: read-only, for whoever holds ``annotation.view_auditentry`` (the
principal investigator's role), with an action that downloads the selected entries as CSV or JSON."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse

from annotation.models import AuditEntry
from annotation.services import audit

# The permission that shows the trail. Django makes it with the model; the roles give it to the
# principal investigator (a superuser has every permission).
VIEW_PERMISSION = "annotation.view_auditentry"


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ["at", "actor_name", "action", "study_slug", "target"]
    list_filter = ["action", "study_slug"]
    search_fields = ["actor_name", "study_slug", "target"]
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEntry._meta.fields]
    actions = ["download_csv", "download_json"]

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return request.user.has_perm(VIEW_PERMISSION)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(VIEW_PERMISSION) or super().has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def _download(self, queryset: QuerySet[AuditEntry], fmt: str) -> HttpResponse:
        content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"
        response = HttpResponse(audit.export(queryset.order_by("at", "id"), fmt=fmt), content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="audit-trail.{fmt}"'
        return response

    @admin.action(description="Download the selected entries as CSV")
    def download_csv(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> HttpResponse:
        return self._download(queryset, "csv")

    @admin.action(description="Download the selected entries as JSON")
    def download_json(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> HttpResponse:
        return self._download(queryset, "json")
