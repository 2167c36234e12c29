"""While the database cannot be reached: 503 database_unavailable with Retry-After, JSON under /api/, a page elsewhere.

None of these tests may touch the database (no django_db mark): the answer must not need it.
The fault test, with a real PostgreSQL cluster stopped and started, is tests/worker/test_database_outage.py.
"""

import json
import sqlite3
from unittest import mock

import psycopg
import psycopg.errors
import pytest
from django.db import InterfaceError, OperationalError
from django.db.utils import ConnectionHandler
from django.test import Client, RequestFactory

from annotation.api.errors import exception_handler
from annotation.db import errors as db_errors
from annotation.web.unavailable import DatabaseUnavailableMiddleware, server_error


def django_error(cause: Exception, kind=OperationalError) -> Exception:
    """The error as Django raises it: its own class, the driver's error as __cause__."""
    error = kind(str(cause))
    error.__cause__ = cause
    return error


def refused() -> Exception:
    return django_error(
        psycopg.OperationalError(
            'connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused'
        )
    )


@pytest.fixture
def locked(tmp_path, django_db_blocker):
    """A real "database is locked": another connection holds an exclusive lock on an SQLite file, and
    Django's connection to it gives up after a short busy timeout (the real one is 20 s)."""
    path = tmp_path / "locked.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x INTEGER)")
    holder.execute("BEGIN EXCLUSIVE")
    handler = ConnectionHandler(
        {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path), "OPTIONS": {"timeout": 0.05}}}
    )
    try:
        # Only this separate file is opened: the tests' own database stays untouched.
        with (
            django_db_blocker.unblock(),
            pytest.raises(OperationalError, match="database is locked") as raised,
            handler["default"].cursor() as cursor,
        ):
            cursor.execute("INSERT INTO t VALUES (1)")
        yield raised.value
    finally:
        handler.close_all()
        holder.rollback() if holder.in_transaction else None
        holder.close()


def test_a_locked_sqlite_database_is_a_moment_to_wait(locked):
    assert isinstance(locked.__cause__, sqlite3.OperationalError)
    assert db_errors.is_database_unavailable(locked)


def test_a_locked_database_answers_json_503_under_the_api(client, locked):
    response = exception_handler(locked, {})
    assert response.status_code == 503 and response["Retry-After"] == "5"
    with mock.patch("annotation.api.worker_auth.load_worker_state", side_effect=locked):
        assert_json_503(client.get("/api/session/current/"))


def test_a_locked_database_answers_the_503_page_elsewhere(client, locked):
    with mock.patch("annotation.views.entry.get_object_or_404", side_effect=locked):
        response = client.get("/join/demo-sst2/?worker_id=alice")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "<h1>Back in a moment</h1>" in response.content.decode()


@pytest.mark.parametrize(
    "cause",
    [
        psycopg.OperationalError("connection failed: Connection refused"),  # no SQLSTATE: the client side
        psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly"),
        psycopg.OperationalError("the connection is closed"),
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),  # pg_ctl stop
        psycopg.errors.CannotConnectNow("the database system is starting up"),
        psycopg.errors.TooManyConnections("too many clients already"),
        psycopg.errors.ConnectionFailure("connection failure"),  # class 08
    ],
)
def test_connection_level_errors_mean_the_database_is_away(cause):
    assert db_errors.is_database_unavailable(django_error(cause))


@pytest.mark.parametrize(
    "error",
    [
        django_error(psycopg.errors.SerializationFailure("could not serialize access")),
        django_error(psycopg.errors.DeadlockDetected("deadlock detected")),
        django_error(psycopg.errors.QueryCanceled("canceling statement due to statement timeout")),
        django_error(psycopg.errors.LockNotAvailable("could not obtain lock")),
        django_error(sqlite3.OperationalError("no such table: annotation_response")),
        django_error(psycopg.InterfaceError("the cursor is closed"), kind=InterfaceError),  # misuse, not an outage
        OperationalError("no cause"),
        ValueError("not a database error"),
    ],
)
def test_other_errors_stay_server_errors(error):
    assert not db_errors.is_database_unavailable(error)


def assert_json_503(response):
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert response["Retry-After"] == "5"
    body = json.loads(response.content)
    assert body["error"] == "database_unavailable" and "try again in a few seconds" in body["detail"]
    assert set(body) == {"error", "detail"}


def test_the_api_handler_maps_an_unreachable_database_to_503():
    response = exception_handler(refused(), {})
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.data["error"] == "database_unavailable"
    missing = django_error(sqlite3.OperationalError("no such table: annotation_response"))
    assert exception_handler(missing, {}) is None  # DRF re-raises it: a 500, as before


def test_a_drf_view_answers_json_503_with_retry_after(client, caplog):
    with mock.patch("annotation.api.worker_auth.load_worker_state", side_effect=refused()):
        response = client.get("/api/session/current/", HTTP_ACCEPT="text/html")
    assert_json_503(response)
    assert "no-cache" in response["Cache-Control"]
    assert "database unavailable: GET /api/session/current/" in caplog.text


def test_a_worker_post_answers_json_503(client):
    with mock.patch("annotation.api.worker_auth.load_worker_state", side_effect=refused()):
        response = client.post("/api/session/submit/", {"item": 1}, content_type="application/json")
    assert_json_503(response)


def test_an_html_page_answers_the_503_page(client, settings):
    settings.DEBUG = False
    with mock.patch("annotation.views.worker.load_worker_state", side_effect=refused()):
        response = client.get("/work/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "<h1>Back in a moment</h1>" in page and 'class="site-header"' in page
    assert '<meta http-equiv="refresh" content="5">' in page  # a GET page tries again by itself


def test_the_entry_link_answers_the_503_page(client):
    with mock.patch("annotation.views.entry.get_object_or_404", side_effect=refused()):
        response = client.get("/join/demo-sst2/?worker_id=alice")
    assert response.status_code == 503 and "<h1>Back in a moment</h1>" in response.content.decode()


def test_a_django_view_under_api_answers_json():
    middleware = DatabaseUnavailableMiddleware(lambda request: None)
    assert_json_503(middleware.process_exception(RequestFactory().get("/api/studies/"), refused()))
    post = middleware.process_exception(RequestFactory().post("/admin/login/"), refused())
    assert post.status_code == 503 and "refresh" not in post.content.decode()  # a form is not sent again
    assert middleware.process_exception(RequestFactory().get("/api/"), ValueError()) is None


class FailOnTheWayOut:
    """A middleware that reaches the database after the view, as SessionMiddleware saving a changed session."""

    error: Exception = refused()

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        self.get_response(request)
        raise self.error


@pytest.fixture
def failing_middleware(settings):
    settings.DEBUG = False
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "tests.test_database_unavailable.FailOnTheWayOut"]
    with mock.patch("annotation.api.worker_auth.load_worker_state", return_value=None):  # 403 no_session, no query
        yield Client(raise_request_exception=False)


def test_a_failure_in_middleware_answers_503_too(failing_middleware):
    assert_json_503(failing_middleware.get("/api/session/current/"))
    page = failing_middleware.get("/no/such/page/")
    assert page.status_code == 503 and "<h1>Back in a moment</h1>" in page.content.decode()


def test_other_failures_in_middleware_are_still_500(failing_middleware, monkeypatch):
    monkeypatch.setattr(FailOnTheWayOut, "error", django_error(sqlite3.OperationalError("no such table: t")))
    response = failing_middleware.get("/no/such/page/")
    assert response.status_code == 500 and "Something went wrong on our side" in response.content.decode()


def test_handler500_outside_an_exception_is_the_500_page():
    assert server_error(RequestFactory().get("/")).status_code == 500
