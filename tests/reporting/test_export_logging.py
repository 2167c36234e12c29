"""Export jobs leave a trace in the logs: a failure with its traceback, a refusal with its reason."""

import logging

import pytest

from annotation.models import ExportJob
from annotation.reporting import exports
from annotation.reporting.celery_tasks import run_export
from tests.reporting.builders import make_study

LOGGER = "annotation.reporting.exports"


@pytest.fixture
def study(sst2):
    return make_study(sst2, shots=(0,), slug="log-study")


def test_an_export_that_breaks_logs_the_exception_and_the_job_is_failed(study, monkeypatch, caplog):
    def broken(**kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(exports, "write_export", broken)
    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk]})
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert run_export.delay(job.pk).get() == "failed"
    job.refresh_from_db()
    assert job.status == ExportJob.Status.FAILED and job.finished_at and not job.file
    assert job.error == "RuntimeError: the disk is full"
    [record] = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.ERROR]
    assert f"export job {job.pk} (table-csv) failed" in record.getMessage()
    assert record.exc_info and record.exc_info[0] is RuntimeError
    assert "Traceback" in caplog.text and "the disk is full" in caplog.text


def test_a_refused_export_logs_a_warning_without_a_traceback(study, caplog):
    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk + 999]})
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert exports.export_job_run(job_id=job.pk).status == ExportJob.Status.FAILED
    [record] = [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]
    assert record.levelno == logging.WARNING and not record.exc_info
    assert "unknown study" in record.getMessage()


def test_a_finished_export_is_logged_at_info(study, caplog):
    job = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk]})
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert exports.export_job_run(job_id=job.pk).status == ExportJob.Status.DONE
    assert any(r.levelno == logging.INFO and f"export job {job.pk}" in r.getMessage() for r in caplog.records)
