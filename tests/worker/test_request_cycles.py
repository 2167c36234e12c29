"""A worker's request leaves no reference cycle behind (annotation.request_cycles).

Requests go straight through Django's WSGI handler, as under gunicorn: the
test client keeps references of its own to every request and response. Like
the test client, the fixture keeps the handler's signals from closing the
database connection, which holds the test's transaction.
"""

import gc
import io
import json
import sys

import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from django.middleware.csrf import get_token
from django.test import RequestFactory

from annotation import worker_cookie
from annotation.models import Participation
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db


def call(handler, method: str, path: str, cookies: dict, body: dict | None = None) -> tuple[int, bytes]:
    payload = json.dumps(body).encode() if body is not None else b""
    environ = RequestFactory()._base_environ(
        REQUEST_METHOD=method,
        PATH_INFO=path,
        CONTENT_TYPE="application/json",
        CONTENT_LENGTH=str(len(payload)),
        HTTP_COOKIE="; ".join(f"{name}={value}" for name, value in cookies.items()),
        HTTP_X_CSRFTOKEN=cookies["csrftoken"],
        **{"wsgi.input": io.BytesIO(payload), "wsgi.errors": sys.stderr},
    )
    status = []
    result = handler(environ, lambda line, headers, exc_info=None: status.append(int(line.split()[0])))
    content = b"".join(result)
    result.close()
    return status[0], content


@pytest.fixture
def handler():
    connected = [signals.request_started, signals.request_finished]
    for signal in connected:
        signal.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        for signal in connected:
            signal.connect(close_old_connections)


def cyclic_garbage(request) -> list[str]:
    """The type names of what only the cyclic collector would free after ``request()``."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        request()
        gc.collect()
        return [type(obj).__qualname__ for obj in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_reading_and_submitting_leave_no_reference_cycle(ner_task, handler):
    participation = make_participation(ner_task, state=Participation.State.TEST)
    token = get_token(RequestFactory().get("/"))
    cookies = {worker_cookie.COOKIE: worker_cookie.signed_value(participation.pk), "csrftoken": token}
    status, content = call(handler, "GET", "/api/session/current/", cookies)  # warm up: imports, caches
    assert status == 200
    item = json.loads(content)["item"]

    replies = []
    assert cyclic_garbage(lambda: replies.append(call(handler, "GET", "/api/session/current/", cookies))) == []
    body = {"item": item["item"], "no_answer": True, "confidence": 3}
    assert cyclic_garbage(lambda: replies.append(call(handler, "POST", "/api/session/submit/", cookies, body))) == []
    assert [status for status, _ in replies] == [200, 200]
    assert json.loads(replies[1][1])["answer"]["status"] == "no_answer"


def test_pages_rendered_from_templates_leave_no_reference_cycle(ner_task, handler, settings):
    # The worker's page and the 404 page (without a 404.html, Django's fallback kept a traceback of 35
    # frames in a cycle); annotation.template_backend frees the context of every rendered template.
    settings.DEBUG = False
    participation = make_participation(ner_task, state=Participation.State.TEST)
    cookies = {
        worker_cookie.COOKIE: worker_cookie.signed_value(participation.pk),
        "csrftoken": get_token(RequestFactory().get("/")),
    }
    for path, status in (("/work/", 200), ("/no/such/page/", 404)):
        assert call(handler, "GET", path, cookies)[0] == status  # warm up
        replies = []

        def get(path=path, replies=replies):  # bound now, not when the loop has moved on
            replies.append(call(handler, "GET", path, cookies))

        assert cyclic_garbage(get) == [], path
        assert replies[0][0] == status
