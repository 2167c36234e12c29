"""Export jobs (queued → running → done / failed with the reason) and the management command."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import ExportJob
from annotation.reporting.celery_tasks import run_export
from annotation.reporting.exports import export_job_create, export_job_run
from annotation.reporting.options import MetricOptions, ReportError
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong


@pytest.fixture
def study(sst2):
    s = make_study(sst2, shots=(0, 10), slug="cmd-study")
    gold = gold_answers(sst2)
    for n in (4, 3, 2):
        add_annotator(s, 0, answers=[g if i < n else wrong(g, sst2) for i, g in enumerate(gold)])
    return s


def test_a_queued_job_runs_after_commit_and_ends_done_with_its_file(study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = export_job_create(kind="table-latex", study_refs=["cmd-study"], options=MetricOptions(ddof=1))
    assert job.status == ExportJob.Status.QUEUED and job.params == {
        "studies": [study.pk],
        "skip_policy": "zero",
        "ddof": 1,
        "seed": 20211206,
        "resamples": 2000,
        "intervals": 1,  # Markdown/LaTeX print the intervals unless the request turns them off
    }
    for callback in callbacks:
        callback()  # Celery runs eagerly without a broker
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE and job.started_at and job.finished_at
    text = job.file.read().decode()
    assert r"75.0 $\pm$ 25.0" in text and job.file.name.endswith(".tex")


def test_the_celery_task_is_registered_under_its_name(study):
    job = ExportJob.objects.create(kind="payments-csv", params={"studies": [study.pk]})
    assert run_export.name == "annotation.run_export"
    assert run_export.delay(job.pk).get(timeout=60) == "done"


def test_a_failing_job_records_the_reason(study):
    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk + 999]})
    job = export_job_run(job_id=job.pk)
    assert job.status == ExportJob.Status.FAILED
    assert job.error == f"unknown study: '{study.pk + 999}'" and not job.file
    bad_kind = export_job_run(job_id=ExportJob.objects.create(kind="pdf", params={"studies": [study.pk]}).pk)
    assert bad_kind.status == ExportJob.Status.FAILED and "unknown export kind 'pdf'" in bad_kind.error


def test_a_job_runs_only_once(study):
    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk]})
    assert export_job_run(job_id=job.pk).status == "done"
    name = ExportJob.objects.get(pk=job.pk).file.name
    assert export_job_run(job_id=job.pk).file.name == name


def test_bad_export_requests_store_nothing(study):
    with pytest.raises(ReportError, match="unknown export kind"):
        export_job_create(kind="xlsx", study_refs=["cmd-study"])
    with pytest.raises(ReportError, match="unknown study: 'nope'"):
        export_job_create(kind="table-csv", study_refs=["nope"])
    with pytest.raises(ReportError, match="name at least one study"):
        export_job_create(kind="table-csv", study_refs=[])
    assert not ExportJob.objects.exists()


def test_command_prints_the_table_in_every_format(study, capsys):
    call_command("human_performance", "--study", "cmd-study", "--format", "markdown", "--no-intervals")
    assert "| 0 | 75.0 ± 20.4 |" in capsys.readouterr().out
    call_command("human_performance", "--study", "cmd-study", "--format", "latex", "--ddof", "1")
    assert r"75.0 $\pm$ 25.0" in capsys.readouterr().out
    call_command("human_performance", "--all", "--format", "json", "--exclude-skips")  # the old flag
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["metric_options"] == {"skip_policy": "exclude", "ddof": 0}
    call_command("human_performance", "--all", "--format", "json", "--skip-policy", "empty")
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["metric_options"] == {"skip_policy": "empty", "ddof": 0}
    assert "skip policy 'empty'" in data["meta"]["metric_note"]
    call_command("human_performance", "--study", "cmd-study", "--format", "csv")
    assert "75.0 ± 20.4" in capsys.readouterr().out


def test_command_writes_annotations_payments_analyses_and_plots(study, tmp_path, capsys):
    out = tmp_path / "raw.jsonl"
    call_command("human_performance", "--study", "cmd-study", "--annotations", "--output", str(out))
    lines = out.read_text().splitlines()
    assert "meta" in json.loads(lines[0]) and len(lines) == 1 + 12
    call_command("human_performance", "--study", "cmd-study", "--payments", "--output", str(tmp_path / "pay.csv"))
    assert "platform,worker_id" in (tmp_path / "pay.csv").read_text()
    call_command("human_performance", "--study", "cmd-study", "--analyses", "--output", str(tmp_path / "a.json"))
    assert json.loads((tmp_path / "a.json").read_text())["studies"][0]["conditions"][0]["agreement"]
    call_command("human_performance", "--study", "cmd-study", "--plots", str(tmp_path / "figs"))
    names = sorted(p.name for p in (tmp_path / "figs").iterdir())
    assert names == [
        "s1_vs_shots_all.png",
        "s1_vs_shots_all.svg",
        "s1_vs_shots_sst2-fixture.png",
        "s1_vs_shots_sst2-fixture.svg",
    ]
    assert all((tmp_path / "figs" / n).stat().st_size > 1000 for n in names)
    from annotation.models import AuditEntry

    plots = AuditEntry.objects.filter(action=AuditEntry.Action.EXPORT, after__kind="plots")
    assert [(e.actor_name, e.study_slug) for e in plots] == [("manage.py human_performance", "cmd-study")]
    call_command("human_performance", "--study", "cmd-study", "--recompute")
    assert "checked 12 item scores; found 0 mismatches" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--study", "nope"], "unknown study: 'nope'"),
        ([], "name at least one study"),
        (["--study", "cmd-study", "--output", "/no/such/dir/x.csv"], "does not exist"),
    ],
)
def test_command_errors_are_one_clear_line(study, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("human_performance", *args)
