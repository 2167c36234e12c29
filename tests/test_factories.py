import pytest

from tasks_app.models import ExampleSet
from tests.factories import make_classification_task, make_span_task


@pytest.mark.django_db
def test_fixture_builders_make_nested_splits_and_located_spans():
    task = make_classification_task()
    sets = {es.shots: list(es.ordered_examples()) for es in ExampleSet.objects.filter(task=task, role="train")}
    assert [len(sets[k]) for k in (10, 20, 30)] == [10, 20, 30]
    assert sets[20][:10] == sets[10]
    span_task = make_span_task()
    ex = span_task.examples.first()
    for span in ex.gold_spans:
        assert ex.context[span["start"] : span["end"]] == span["text"]
