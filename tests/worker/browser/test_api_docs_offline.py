"""/api/docs/ in a real browser with no internet: Swagger UI's files come from the app, nothing else."""

from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.worker.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_swagger_ui_renders_the_api_with_no_external_request(open_as, live_server, browser):
    admin = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw")
    client = Client()
    client.force_login(admin)
    session = [{"name": "sessionid", "value": client.cookies["sessionid"].value}]
    here = urlsplit(live_server.url).netloc
    page = open_as(None, path="/dashboard/", cookies=session)  # any page: the context is what we need
    outside: list[str] = []

    def refuse_outside(route):  # stands in for a machine with no internet: any other host fails
        if urlsplit(route.request.url).netloc != here:
            outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.context.route("**/*", refuse_outside)
    page.goto(live_server.url + "/api/docs/")
    page.locator(".swagger-ui .info .title").wait_for()
    assert "Human performance" in page.locator(".swagger-ui .info .title").inner_text()
    page.locator(".opblock-tag-section").first.wait_for()  # the operations, read from /api/schema/
    assert page.locator(".opblock").count() > 10
    shot(page, "api-docs-offline")
    assert outside == []
    assert not page.js_errors
