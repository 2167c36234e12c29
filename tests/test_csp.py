"""The Content-Security-Policy header (annotation.web.csp) is on every kind of response, strict unless widened."""

import pytest
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import RequestFactory
from django.views import defaults

from annotation.web.csp import ContentSecurityPolicyMiddleware, csp_exempt, csp_update
from tests.entry_link import take_part
from tests.factories import make_classification_task
from tests.worker.conftest import login, make_participation

STRICT = "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
MTURK = "https://www.mturk.com https://workersandbox.mturk.com"


def csp(response) -> str:
    return response.headers.get("Content-Security-Policy", "")


@pytest.mark.django_db
def test_every_kind_of_response_carries_the_strict_policy(client, settings):
    responses = {
        "page": client.get("/"),
        "json (refusal)": client.get("/api/session/current/"),
        "json (api 404)": client.get("/api/no/such/route/"),
        "json (admin api, 403)": client.get("/api/studies/"),
        "schema": client.get("/api/schema/"),
        "static file": client.get("/static/worker/worker.js"),
    }
    settings.DEBUG = False
    responses["404 page"] = client.get("/no/such/page/")
    responses["redirect"] = client.get("/dashboard/")  # to the admin's login
    for kind, response in responses.items():
        assert csp(response) == STRICT, kind
    assert responses["redirect"].status_code == 302 and responses["404 page"].status_code == 404


def test_the_500_page_carries_it_too():
    request = RequestFactory().get("/")
    response = ContentSecurityPolicyMiddleware(defaults.server_error)(request)
    assert response.status_code == 500 and csp(response) == STRICT


@pytest.mark.django_db
def test_only_the_entry_page_may_be_framed_and_only_by_mturk(client):
    task = make_classification_task(slug="framed", n_test=2)
    study = make_participation(task).study
    preview = client.get(f"/join/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H")
    assert preview.status_code == 200
    assert f"frame-ancestors {MTURK}" in csp(preview)
    assert "X-Frame-Options" not in preview.headers  # it would contradict frame-ancestors
    start = client.get(f"/join/{study.slug}/?worker_id=w1")
    assert start.status_code == 200 and f"frame-ancestors {MTURK}" in csp(start)
    joined = take_part(client, study.slug, {"worker_id": "w1"})
    assert joined.status_code == 302 and f"frame-ancestors {MTURK}" in csp(joined)
    work = client.get("/work/")
    assert "frame-ancestors 'none'" in csp(work) and work.headers["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_worker_pages_may_post_the_hit_to_mturk_and_nowhere_else(client):
    task = make_classification_task(slug="posting", n_test=2)
    response = login(client, make_participation(task, state="completed")).get("/work/")
    assert response.status_code == 200
    assert f"form-action 'self' {MTURK}" in csp(response)
    assert "script-src" not in csp(response) and "unsafe" not in csp(response)


@pytest.mark.django_db
def test_the_admin_and_swagger_ui_get_their_own_relaxations(client):
    admin = client.get("/admin/login/")
    assert "script-src 'self' 'unsafe-inline'" in csp(admin) and "frame-ancestors 'none'" in csp(admin)
    client.force_login(get_user_model().objects.create_superuser("staff", "s@example.org", "pw"))
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert "script-src 'self';" in csp(docs) and "jsdelivr" not in csp(docs)  # Swagger UI is served from here
    assert "<script>" not in docs.content.decode()  # the split view: its init script is a file
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")


def test_the_decorators_widen_or_drop_the_policy_for_one_view():
    request = RequestFactory().get("/")

    @csp_update(img_src=["'self'", "data:"], form_action=[])
    def widened(request):
        return HttpResponse("ok")

    @csp_exempt
    def exempt(request):
        return HttpResponse("ok")

    header = csp(ContentSecurityPolicyMiddleware(widened)(request))
    assert "img-src 'self' data:" in header and "form-action" not in header  # an empty list drops a directive
    assert "default-src 'self'" in header
    assert csp(ContentSecurityPolicyMiddleware(exempt)(request)) == ""
