"""The API's one error shape: {"error": code, "detail": message}, plus "fields" for validation errors."""

import json

import pytest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from rest_framework import exceptions

from annotation.api.errors import exception_handler
from annotation.models import ExportJob


def handled(exc):
    response = exception_handler(exc, {})
    assert set(response.data) >= {"error", "detail"} and isinstance(response.data["detail"], str)
    return response


@pytest.mark.parametrize(
    "exc, status, code, detail",
    [
        (exceptions.ParseError("JSON parse error - bad"), 400, "parse_error", "JSON parse error - bad"),
        (exceptions.NotAuthenticated(), 401, "not_authenticated", "Authentication credentials were not provided."),
        (exceptions.AuthenticationFailed("Invalid username/password."), 401, "not_authenticated", "Invalid username"),
        (exceptions.PermissionDenied(), 403, "permission_denied", "You do not have permission"),
        (DjangoPermissionDenied("not yours"), 403, "permission_denied", "not yours"),
        (exceptions.NotFound("no such export job"), 404, "not_found", "no such export job"),
        (Http404("No Study matches the given query."), 404, "not_found", "No Study matches"),
        (Http404(), 404, "not_found", "Not found."),
        (exceptions.MethodNotAllowed("PUT"), 405, "method_not_allowed", 'Method "PUT" not allowed.'),
        (exceptions.NotAcceptable(), 406, "not_acceptable", "Could not satisfy"),
        (exceptions.UnsupportedMediaType("text/plain"), 415, "unsupported_media_type", '"text/plain"'),
        (exceptions.Throttled(wait=7), 429, "throttled", "Expected available in 7 seconds."),
        (exceptions.APIException(), 500, "error", "A server error occurred."),
    ],
)
def test_each_mapped_exception_gives_the_shape(exc, status, code, detail):
    response = handled(exc)
    assert response.status_code == status
    assert response.data["error"] == code and detail in response.data["detail"]
    assert "fields" not in response.data


def test_headers_that_clients_need_are_kept():
    assert handled(exceptions.Throttled(wait=7))["Retry-After"] == "7"
    unauthenticated = exceptions.NotAuthenticated()
    unauthenticated.auth_header = 'Basic realm="api"'
    assert handled(unauthenticated)["WWW-Authenticate"] == 'Basic realm="api"'


def test_a_code_of_the_raisers_own_is_kept():
    response = handled(exceptions.PermissionDenied("CSRF failed: no token", code="csrf_failed"))
    assert (response.status_code, response.data["error"]) == (403, "csrf_failed")
    response = handled(exceptions.NotFound("gone", code="study_gone"))
    assert (response.status_code, response.data["error"]) == (404, "study_gone")


def test_a_validation_error_lists_its_fields():
    response = handled(
        exceptions.ValidationError(
            {"name": ["This field is required."], "task": "Unknown task.", "shots": {1: ["Too many."]}}
        )
    )
    assert response.status_code == 400
    assert response.data["error"] == "invalid"
    assert response.data["fields"] == {
        "name": ["This field is required."],
        "task": ["Unknown task."],
        "shots": ["1: Too many."],
    }
    assert response.data["detail"] == "name: This field is required.; task: Unknown task.; shots: 1: Too many."


def test_a_validation_error_about_the_whole_input_is_under_non_field_errors():
    response = handled(exceptions.ValidationError("unknown study: 'nope'"))
    assert response.status_code == 400 and response.data["error"] == "invalid"
    assert response.data["detail"] == "unknown study: 'nope'"
    assert response.data["fields"] == {"non_field_errors": ["unknown study: 'nope'"]}


def test_anything_else_is_left_to_become_a_500():
    assert exception_handler(RuntimeError("boom"), {}) is None


# --- Through the admin API -------------------------------------------------------------------


def post_json(client, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def shape(response, status, code):
    body = response.json()
    assert (response.status_code, body["error"]) == (status, code), body
    assert isinstance(body["detail"], str) and body["detail"]
    return body


@pytest.mark.django_db
def test_an_unknown_study_id_is_a_404(admin_client):
    body = shape(admin_client.get("/api/studies/999999/"), 404, "not_found")
    assert "fields" not in body
    shape(admin_client.post("/api/studies/999999/status/", {"status": "open"}, "application/json"), 404, "not_found")


@pytest.mark.django_db
def test_creating_a_study_with_bad_data_is_a_400_with_its_fields(admin_client):
    body = shape(post_json(admin_client, "/api/studies/", {"task": "nope", "slug": "not a slug!"}), 400, "invalid")
    assert set(body["fields"]) >= {"task", "slug"}
    assert all(isinstance(m, str) for messages in body["fields"].values() for m in messages)
    assert "task:" in body["detail"]


@pytest.mark.django_db
def test_a_method_the_route_does_not_have_is_a_405(admin_client):
    shape(admin_client.delete("/api/conditions/"), 405, "method_not_allowed")
    shape(admin_client.put("/api/reports/table/"), 405, "method_not_allowed")


@pytest.mark.django_db
def test_a_body_that_is_not_json_is_a_415_and_malformed_json_a_400(admin_client):
    shape(
        admin_client.post("/api/studies/", data="task=sst2", content_type="text/plain"), 415, "unsupported_media_type"
    )
    shape(admin_client.post("/api/studies/", data="{not json", content_type="application/json"), 400, "parse_error")


@pytest.mark.django_db
def test_who_may_not_use_the_admin_api_gets_a_403(client, django_user_model):
    shape(client.get("/api/studies/"), 403, "not_authenticated")
    shape(client.get("/api/studies/", HTTP_AUTHORIZATION="Basic bm86bm8="), 403, "not_authenticated")
    client.force_login(django_user_model.objects.create_user("plain", password="x"))
    shape(client.get("/api/studies/"), 403, "permission_denied")


@pytest.mark.django_db
def test_the_reports_api_answers_the_same_shape(admin_client):
    body = shape(admin_client.get("/api/reports/table/?studies=nope"), 400, "invalid")
    assert "unknown study" in body["detail"]
    shape(admin_client.get("/api/reports/exports/999/"), 404, "not_found")
    body = shape(post_json(admin_client, "/api/reports/exports/", {"kind": "pdf"}), 400, "invalid")
    assert "kind" in body["fields"]
    assert not ExportJob.objects.exists()


@pytest.mark.django_db
def test_the_participant_export_answers_json_errors(admin_client):
    body = shape(admin_client.get("/api/participants/export/?format=mturk"), 400, "invalid")
    assert "task" in body["fields"]
    shape(admin_client.get("/api/participants/export/?task=nope&format=mturk"), 404, "not_found")


# --- The worker's session API goes through the same code, whatever the settings say ----------------


@pytest.mark.django_db
@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False])
def test_an_address_under_api_that_matches_no_route_is_a_json_404(admin_client, settings, debug):
    settings.DEBUG = debug  # not Django's HTML page, in development either
    for path in ("/api/no/such/", "/api/participations/0.5/override/", "/api/session/items/null/", "/api/studies"):
        body = shape(admin_client.get(path), 404, "not_found")
        assert path in body["detail"]
    assert "end with a slash" in admin_client.get("/api/studies").json()["detail"]


@pytest.mark.django_db
def test_a_session_post_with_a_broken_multipart_body_is_a_415_not_a_500(settings):
    from tests.factories import make_classification_task
    from tests.worker.conftest import login, make_participation

    client = login(Client(enforce_csrf_checks=True), make_participation(make_classification_task(slug="mp", n_test=2)))
    client.get("/api/session/current/")
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/api/session/start/", data=b"--x", content_type="multipart/form-data", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 415, response.content
    shape(response, 415, "unsupported_media_type")


@pytest.mark.django_db
def test_numbers_beyond_the_columns_range_are_a_400_on_every_database(admin_client):
    from tests.factories import make_classification_task

    make_classification_task(slug="big", n_test=2)
    too_big = {"task": "big", "slug": "big-study", "shots": [2**70]}
    assert "shots" in shape(post_json(admin_client, "/api/studies/", too_big), 400, "invalid")["fields"]
    too_many = {"task": "big", "workers_per_condition": 10**19}
    assert (
        "workers_per_condition"
        in shape(post_json(admin_client, "/api/studies/standard-design/", too_many), 400, "invalid")["fields"]
    )


def test_the_session_api_uses_the_shape_even_with_drfs_own_handler(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "EXCEPTION_HANDLER": "rest_framework.views.exception_handler"}
    client = Client()
    shape(client.get("/api/session/current/"), 403, "no_session")


# --- OpenAPI ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def error_ref(schema, path, method, status):
    responses = schema["paths"][path][method]["responses"]
    assert status in responses, (path, method, sorted(responses))
    return responses[status]["content"]["application/json"]["schema"]["$ref"]


def test_the_schema_has_one_error_component(schema):
    components = schema["components"]["schemas"]
    assert set(components["Error"]["properties"]) == {"error", "detail", "fields"}
    assert components["Error"]["required"] == ["detail", "error"]
    assert not {"SessionError", "ReportError", "ExportError"} & set(components)


@pytest.mark.parametrize(
    "path, method, status",
    [
        ("/api/studies/", "post", "400"),
        ("/api/studies/", "get", "403"),
        ("/api/studies/{id}/", "get", "404"),
        ("/api/studies/{id}/", "delete", "400"),
        ("/api/participations/", "get", "400"),
        ("/api/participants/export/", "get", "404"),
        ("/api/reports/table/", "get", "400"),
        ("/api/reports/exports/{job_id}/", "get", "404"),
        ("/api/session/submit/", "post", "409"),
        ("/api/session/current/", "get", "403"),
        ("/api/session/items/{item_id}/", "get", "404"),
        ("/api/session/items/{item_id}/reveal/", "get", "404"),
    ],
)
def test_operations_document_their_errors_with_it(schema, path, method, status):
    assert error_ref(schema, path, method, status) == "#/components/schemas/Error"


def test_success_responses_are_left_as_they_were(schema):
    ok = schema["paths"]["/api/participations/"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"type": "array", "items": {"$ref": "#/components/schemas/Participation"}}
    assert "404" not in schema["paths"]["/api/studies/"]["get"]["responses"]
    assert "204" in schema["paths"]["/api/studies/{id}/"]["delete"]["responses"]


def test_who_made_an_event_or_a_filter_decision_may_be_nobody(schema):
    components = schema["components"]["schemas"]
    assert components["Event"]["properties"]["actor"]["nullable"] is True
    assert components["FilterDecision"]["properties"]["decided_by"]["nullable"] is True
