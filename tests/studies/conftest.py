"""Fixtures of the study tests: a task with a nested split and studies on it."""

import pytest

from annotation.models import Study
from annotation.services.state.platforms import EntryParams
from annotation.services.studies import studies
from tests.factories import make_classification_task


@pytest.fixture
def task(db):
    return make_classification_task(slug="sst2")


@pytest.fixture
def make_study(task):
    """An open study of the standard design (or the given shots) on split 1."""
    counter = iter(range(1, 1000))

    def build(*, shots=studies.STANDARD_SHOTS, workers=3, status=Study.Status.OPEN, for_task=None, **options):
        study = studies.study_create(
            task=for_task or task,
            slug=f"study-{next(counter)}",
            split_number=1,
            shots=shots,
            workers_per_condition=workers,
            **options,
        )
        if status != Study.Status.DRAFT:
            studies.change_status(study=study, to_status=Study.Status.OPEN)
        if status in (Study.Status.PAUSED, Study.Status.CLOSED):
            studies.change_status(study=study, to_status=status)
        study.refresh_from_db()
        return study

    return build


@pytest.fixture
def study(make_study):
    return make_study()


def inhouse(worker_id: str) -> EntryParams:
    return EntryParams(platform="inhouse", external_id=worker_id)
