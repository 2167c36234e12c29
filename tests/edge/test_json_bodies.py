"""Hard to break: no body reaches a 5xx. Deep JSON is a 400 too_deep, a huge body a 413 too_large."""

import json

import pytest

from tests.edge.conftest import assert_error, deep_object, nested

pytestmark = pytest.mark.django_db


# --- 2. Deeply nested JSON ------------------------------------------------------------------------

SESSION_POSTS = ["submit/", "skip/", "events/"]  # start/ reads no body


@pytest.mark.parametrize("path", SESSION_POSTS)
@pytest.mark.parametrize("body", [nested(1000), deep_object(1000), nested(20_000), nested(40)])
def test_deep_json_to_the_session_api_is_a_400(worker_client, path, body):
    response = worker_client.post("/api/session/" + path, data=body, content_type="application/json")
    assert_error(response, 400, "too_deep")


@pytest.mark.parametrize(
    "path", ["/api/studies/", "/api/reports/exports/", "/api/studies/standard-design/", "/api/workers/1/block/"]
)
@pytest.mark.parametrize("body", [nested(1000), deep_object(1000), nested(500_000), nested(40)])
def test_deep_json_to_the_admin_api_is_a_400(admin_client, path, body):
    response = admin_client.post(path, data=body, content_type="application/json")
    assert_error(response, 400, "too_deep")


def test_nesting_up_to_the_limit_is_parsed(worker_client):
    # 32 levels: the submission is read and refused for what it says, not for its shape
    body = {"item": 1, "spans": [], "confidence": 3, "extra": json.loads(nested(30))}
    response = worker_client.post("/api/session/submit/", data=json.dumps(body), content_type="application/json")
    assert 400 <= response.status_code < 500 and response.json()["error"] != "too_deep"


def test_the_parser_limit_holds_without_recursion():
    from annotation.api.parsers import MAX_DEPTH, json_depth

    assert json_depth(json.loads(nested(MAX_DEPTH))) == MAX_DEPTH
    assert json_depth({"a": [1, {"b": []}]}) == 4
    assert json_depth(5) == 0
    # a structure deeper than the recursion limit, built without the parser, is measured all the same
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert json_depth(deep) == 5001


# --- 5. Bodies too large --------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["submit/", "events/"])
def test_a_huge_body_to_the_session_api_is_a_json_413(worker_client, path):
    body = json.dumps({"item": 1, "pad": "x" * (5 * 1024 * 1024)})
    response = worker_client.post("/api/session/" + path, data=body, content_type="application/json")
    assert_error(response, 413, "too_large")


def test_a_body_over_the_session_limit_is_a_json_413(worker_client):
    from annotation.api.parsers import SESSION_MAX_BODY

    body = json.dumps({"item": 1, "pad": "x" * SESSION_MAX_BODY})
    response = worker_client.post("/api/session/submit/", data=body, content_type="application/json")
    assert_error(response, 413, "too_large")


@pytest.mark.parametrize("path", ["/api/studies/", "/api/reports/exports/"])
def test_a_huge_body_to_the_admin_api_is_a_json_413(admin_client, path):
    body = json.dumps({"slug": "x" * (5 * 1024 * 1024)})
    response = admin_client.post(path, data=body, content_type="application/json")
    assert_error(response, 413, "too_large")


def test_a_huge_form_to_the_admin_api_is_a_json_413(admin_client):
    response = admin_client.post("/api/studies/", data={"slug": "x" * (5 * 1024 * 1024)})
    assert_error(response, 413, "too_large")
