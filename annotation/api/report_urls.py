"""/api/reports/: the human-performance table, annotator scores, the statement and export jobs (admins only)."""

from django.urls import path

from annotation.api import reports

urlpatterns = [
    path("table/", reports.TableView.as_view(), name="reports-table"),
    path("annotators/", reports.AnnotatorsView.as_view(), name="reports-annotators"),
    path("statement/", reports.StatementView.as_view(), name="reports-statement"),
    path("exports/", reports.ExportRequestView.as_view(), name="reports-export-create"),
    path("exports/<int:job_id>/", reports.ExportStatusView.as_view(), name="reports-export-status"),
]
