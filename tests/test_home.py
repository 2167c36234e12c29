import pytest

from tests.factories import StudyFactory


@pytest.mark.django_db
def test_front_page_sends_workers_to_their_link_and_admins_to_the_tools(client, admin_client):
    StudyFactory(slug="visible-study")
    page = client.get("/")
    assert page.status_code == 200
    assert b"/join/" in page.content and b"visible-study" not in page.content
    assert b"visible-study" in admin_client.get("/").content
