"""Django's error pages are the site's own, in its style, with words a crowd worker can act on."""

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory
from django.views import defaults


@pytest.mark.django_db
def test_an_unknown_address_gets_the_sites_not_found_page(client, settings):
    settings.DEBUG = False
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Page not found</h1>" in page
    assert 'class="site-header"' in page and "worker/worker.css" in page
    assert "open it again from your crowd platform" in page


def test_each_error_view_renders_its_own_page():
    request = RequestFactory().get("/")
    pages = {
        400: defaults.bad_request(request, Exception("unreadable")),
        403: defaults.permission_denied(request, PermissionDenied()),
        500: defaults.server_error(request),  # renders without a request context
    }
    headings = {400: "Bad request", 403: "Not allowed", 500: "Something went wrong on our side"}
    for status, response in pages.items():
        assert response.status_code == status
        assert f"<h1>{headings[status]}</h1>" in response.content.decode()
    assert "Every answer you submitted is saved" in pages[500].content.decode()


@pytest.mark.django_db
def test_a_form_sent_without_its_token_gets_a_page_that_says_what_to_do(settings):
    settings.DEBUG = False
    response = Client(enforce_csrf_checks=True).post("/admin/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    page = response.content.decode()
    assert "<h1>Please reload the page</h1>" in page and 'class="site-header"' in page
    assert "nothing was changed" in page and "allow cookies" in page
