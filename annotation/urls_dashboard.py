"""/dashboard/: staff-only progress, tables, plots and exports."""

from django.urls import path

from annotation.views import dashboard

app_name = "dashboard"

urlpatterns = [
    path("", dashboard.index, name="index"),
    path("study/<slug:slug>/", dashboard.study_detail, name="study"),
    path("study/<slug:slug>/statement.<str:fmt>", dashboard.statement, name="statement"),
    path("plot.<str:fmt>", dashboard.plot, name="plot"),
    path("export/<str:kind>/", dashboard.export_now, name="export"),
    path("exports/queue/", dashboard.export_queue, name="export-queue"),
    path("exports/<int:job_id>/download/", dashboard.export_download, name="export-download"),
]
