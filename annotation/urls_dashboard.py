"""/dashboard/: staff-only progress, tables, plots, exports and rehearsals."""

from django.urls import path

from annotation.views import dashboard, prolific

app_name = "dashboard"

urlpatterns = [
    path("", dashboard.index, name="index"),
    path("study/<slug:slug>/", dashboard.study_detail, name="study"),
    path("study/<slug:slug>/prolific/<str:operation>/", prolific.operation, name="prolific"),
    path("study/<slug:slug>/prolific-runs/<int:job_id>/", prolific.job, name="prolific-job"),
    path("live.json", dashboard.live, name="live"),
    path("study/<slug:slug>/statement.<str:fmt>", dashboard.statement, name="statement"),
    path("study/<slug:slug>/rehearse/", dashboard.rehearsal_queue, name="rehearse"),
    path("rehearsals/<int:job_id>.json", dashboard.rehearsal_status, name="rehearsal-status"),
    path("rehearsals/<int:job_id>/report.<str:fmt>", dashboard.rehearsal_report, name="rehearsal-report"),
    path("plot.<str:fmt>", dashboard.plot, name="plot"),
    path("export/<str:kind>/", dashboard.export_now, name="export"),
    path("export/<str:kind>/provenance/", dashboard.export_provenance, name="export-provenance"),
    path("exports/queue/", dashboard.export_queue, name="export-queue"),
    path("exports/<int:job_id>/download/", dashboard.export_download, name="export-download"),
    path("exports/<int:job_id>/provenance/", dashboard.export_job_provenance, name="export-job-provenance"),
]
