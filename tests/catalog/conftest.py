"""Fixtures for the catalog tests: one shared import of the real release per module."""

import pytest

from tasks_app.catalog import CLUES_TASKS
from tasks_app.models import Example, ExampleSet, TrainingSplit


def clear_imported_data() -> None:
    slugs = [t.slug for t in CLUES_TASKS]
    ExampleSet.objects.filter(task__slug__in=slugs).delete()
    TrainingSplit.objects.filter(task__slug__in=slugs).delete()
    Example.objects.filter(task__slug__in=slugs).delete()


@pytest.fixture(scope="module")
def imported_release(clues_dir, django_db_setup, django_db_blocker):
    """Import the whole release once for the module (committed), and remove it afterwards."""
    from tasks_app.importing.service import import_clues

    with django_db_blocker.unblock():
        clear_imported_data()
        result = import_clues(path=clues_dir)
    yield result
    with django_db_blocker.unblock():
        clear_imported_data()
