"""The session API does without Django's session, user and messages middleware; pages keep them."""

from django.contrib.auth import get_user_model

from annotation.models import Participation
from tests.worker.conftest import make_participation

State = Participation.State


def test_the_session_api_reads_no_session_user_or_messages(client, worker, sst_task):
    p = make_participation(sst_task, state=State.TEST)
    worker(p)
    admin = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw")
    client.force_login(admin)  # a staff member's browser: its session cookie travels with the request
    reply = client.get("/api/session/current/")
    assert reply.status_code == 200 and reply.json()["state"] == State.TEST
    assert "sessionid" not in reply.cookies and "messages" not in reply.cookies
    # Security headers, the CSP, the framing rule and the CSRF cookie stay on the API as on every response.
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert "Content-Security-Policy" in reply.headers and "csrftoken" in reply.cookies
    assert reply.headers["X-Frame-Options"] == "DENY"


def test_pages_keep_the_session_the_user_and_the_framing_rule(client, worker, sst_task):
    admin = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw")
    client.force_login(admin)
    reply = client.get("/dashboard/")
    assert reply.status_code == 200  # the signed-in staff member's page (a redirect to the login otherwise)
    assert reply.headers["X-Frame-Options"] == "DENY"
    p = make_participation(sst_task, state=State.TEST)
    worker(p)
    page = client.get("/work/")
    assert page.status_code == 200 and page.headers["X-Frame-Options"] == "DENY"
