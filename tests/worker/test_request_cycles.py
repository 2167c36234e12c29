"""A worker's session request leaves no reference cycle behind (annotation.web.request_cycles).

Pages rendered from templates still do (a template Context's layers point back at it): freeing
those was measured to bring no tail-latency gain beyond the noise (docs/performance.md), so Django's
own template engine renders them.

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

from annotation.models import Participation
from annotation.web import worker_cookie
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
