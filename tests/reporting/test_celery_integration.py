"""Export jobs run by a real Celery worker through the broker (CELERY_INTEGRATION=1, PostgreSQL)."""

import time

import pytest

from annotation.models import ExportJob
from annotation.reporting.exports import export_job_create
from tests.factories import make_classification_task
from tests.reporting.builders import add_annotator, gold_answers, make_study

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def _wait_for_end(job_id: int, seconds: float = 60.0) -> ExportJob:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = ExportJob.objects.get(pk=job_id)
        if job.status in (ExportJob.Status.DONE, ExportJob.Status.FAILED):
            return job
        time.sleep(0.2)
    pytest.fail(f"export job {job_id} is still {job.status}")


def test_the_worker_runs_an_export_job_to_done_and_a_bad_one_to_failed(celery_worker_process):
    task = make_classification_task(slug="celery-report", n_test=4)
    study = make_study(task, shots=(0,), slug="celery-report")
    add_annotator(study, 0, answers=gold_answers(task))

    job = export_job_create(kind="table-markdown", study_refs=[study.slug])  # queued on commit (autocommit here)
    done = _wait_for_end(job.pk)
    assert done.status == ExportJob.Status.DONE, done.error
    assert "| 0 | 100.0 ± 0.0 |" in done.file.read().decode()

    broken = ExportJob.objects.create(kind="table-csv", params={"studies": [study.pk + 1000]})
    from annotation.reporting.celery_tasks import run_export

    run_export.delay(broken.pk)
    failed = _wait_for_end(broken.pk)
    assert failed.status == ExportJob.Status.FAILED and "unknown study" in failed.error
    assert celery_worker_process.poll() is None
