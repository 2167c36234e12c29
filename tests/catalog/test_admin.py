"""The catalog admin pages render for a superuser."""

import pytest
from django.contrib.auth import get_user_model

from tasks_app.demo import import_demo_data
from tasks_app.models import Example, ExampleSet, Task, TrainingSplit

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw-for-tests")
    client.force_login(user)
    return client


def test_catalog_changelists_render(admin_client):
    import_demo_data()
    for url in (
        "/admin/tasks_app/task/",
        "/admin/tasks_app/example/",
        "/admin/tasks_app/exampleset/",
        "/admin/tasks_app/trainingsplit/",
    ):
        assert admin_client.get(url).status_code == 200, url


def test_task_change_page_shows_label_inline_and_editable_description(admin_client):
    task = Task.objects.get(slug="sst2")
    page = admin_client.get(f"/admin/tasks_app/task/{task.pk}/change/").content.decode()
    assert 'name="description"' in page and "labels-0-definition" in page


def test_examples_are_searchable_by_source_id_and_read_only(admin_client):
    import_demo_data()
    example = Example.objects.get(task__slug="wikiann", source_id="730_1")
    listing = admin_client.get("/admin/tasks_app/example/", {"q": "730_1"}).content.decode()
    assert "730_1" in listing
    page = admin_client.get(f"/admin/tasks_app/example/{example.pk}/change/").content.decode()
    assert 'name="gold_answers"' not in page and "Søren Holm" in page


def test_set_and_split_pages_render(admin_client):
    import_demo_data()
    example_set = ExampleSet.objects.get(task__slug="conll03", shots=30)
    assert admin_client.get(f"/admin/tasks_app/exampleset/{example_set.pk}/change/").status_code == 200
    split = TrainingSplit.objects.get(task__slug="conll03", number=1)
    assert admin_client.get(f"/admin/tasks_app/trainingsplit/{split.pk}/change/").status_code == 200
