import pytest

from tests.factories import make_classification_task


@pytest.fixture
def sst2(db):
    """A classification task with 4 test items (gold: positive, negative, positive, negative)."""
    task = make_classification_task(slug="sst2-fixture", n_test=4)
    task.name = "SST-2"
    task.display_order = 1
    task.save()
    return task
