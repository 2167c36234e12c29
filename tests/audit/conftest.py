"""Fixtures of the audit-trail tests: a study on a task with a nested split, the Prolific stand-in."""

import pytest

from annotation.models import AuditEntry, Study
from annotation.services.studies import studies
from tests.factories import make_classification_task
from tests.prolific.conftest import prolific_on, prolific_study, standin  # noqa: F401 (fixtures)


@pytest.fixture
def task(db):
    return make_classification_task(slug="sst2")


@pytest.fixture
def draft(task):
    """A draft study of two conditions (0 and 10 shots), three workers each; its creation is in the trail."""
    return studies.study_create(task=task, slug="audited", split_number=1, shots=[0, 10], workers_per_condition=3)


def entries(action: str, **filters) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action, **filters).order_by("at", "id"))


def only(action: str, **filters) -> AuditEntry:
    found = entries(action, **filters)
    assert len(found) == 1, [(e.action, e.target, e.before, e.after) for e in found]
    return found[0]


__all__ = ["Study", "entries", "only"]
