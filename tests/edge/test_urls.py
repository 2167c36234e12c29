"""Hard to break: NUL or broken UTF-8 in a URL is a 400 (JSON on the API), and odd parameters are 4xx."""

import pytest

from tests.edge.conftest import assert_error

pytestmark = pytest.mark.django_db

# --- 3. NUL and broken UTF-8 in the URL -----------------------------------------------------------

NUL_URLS = [
    "/api/reports/table/?studies=%00",
    "/api/reports/table/?studies=a%00b",
    "/api/reports/annotators/?studies=%00",
    "/api/participations/?study=%00",
    "/api/conditions/?study=%00",
    "/api/participants/export/?task=%00&format=prolific",
    "/api/studies/?x=%00",
    "/api/participations/?state=%00",
]


@pytest.mark.parametrize("url", NUL_URLS)
def test_nul_in_a_query_parameter_is_a_json_400(admin_client, url):
    body = assert_error(admin_client.get(url), 400, "invalid")
    assert body["fields"]


def test_nul_in_a_parameter_name_is_a_json_400(admin_client):
    assert_error(admin_client.get("/api/conditions/?st%00udy=x"), 400, "invalid")


def test_nul_in_the_session_api_is_a_json_400(worker_client):
    assert_error(worker_client.get("/api/session/current/?x=%00"), 400, "invalid")


@pytest.mark.parametrize("url", ["/work/?x=%00", "/join/demo/?worker_id=%00", "/dashboard/?studies=%00", "/?a=%00"])
def test_nul_on_a_page_is_a_plain_400(worker_client, url):
    response = worker_client.get(url)
    assert response.status_code == 400
    assert not response["Content-Type"].startswith("application/json")


def test_nul_in_the_path_is_a_400(admin_client):
    assert admin_client.get("/api/studies/a%00b/").status_code == 400
    assert admin_client.get("/work/%00/").status_code == 400


@pytest.mark.parametrize(
    "url",
    [
        "/api/reports/table/?studies=%C2%B2",  # a digit to isdigit(), not to int()
        "/api/reports/table/?studies=99999999999999999999999999",
        "/api/reports/annotators/?studies=%ff%fe",
        "/api/participations/?study=%ff",
        "/api/conditions/?study=" + "x" * 5000,
    ],
)
def test_odd_but_not_nul_parameters_are_a_4xx(admin_client, url):
    response = admin_client.get(url)
    assert response.status_code < 500
    if response.status_code >= 400:
        assert response.json()["error"]


@pytest.mark.parametrize("query", ["studies=%ff", "studies=\xff", "st%ffudies=a", "studies=%C3"])
def test_a_query_string_that_is_not_utf8_is_a_json_400(admin_client, query):
    body = assert_error(admin_client.get("/api/reports/table/", QUERY_STRING=query), 400, "invalid")
    assert body["fields"]


def test_utf8_and_plus_in_a_query_string_are_fine(admin_client):
    # raw UTF-8 bytes as a WSGI server hands them over (ISO-8859-1), percent-encoded and "+" for a space
    for query in ["study=caf\xc3\xa9", "study=caf%C3%A9", "study=a+b"]:
        response = admin_client.get("/api/conditions/", QUERY_STRING=query)
        assert response.status_code == 200 and response.json() == []


@pytest.mark.parametrize(
    "url, status",
    [
        ("/api/workers/?blocked=maybe", 400),
        ("/api/workers/?blocked=no", 200),
        ("/api/studies/99999999999999999999999999/", 404),
        ("/api/studies/%C2%B2/", 404),
        ("/api/participations/99999999999999999999999999/", 404),
        ("/api/reports/exports/99999999999999999999999999/", 404),
        ("/api/reports/table/?studies=all&ddof=7", 400),
        ("/api/reports/table/?studies=all&ddof=" + "9" * 5000, 400),
    ],
)
def test_ids_and_options_are_validated_where_they_are_read(admin_client, url, status):
    response = admin_client.get(url)
    assert response.status_code == status
    if status >= 400:
        assert response.json()["error"] in ("invalid", "not_found")


def test_an_unusable_entry_link_of_a_chinese_study_gets_a_chinese_page(client):
    from tests.factories import ConditionFactory, StudyFactory, make_classification_task

    study = StudyFactory(task=make_classification_task(slug="zh-task"), language="zh-hans")
    ConditionFactory(study=study, shots=0)
    response = client.get(f"/join/{study.slug}/?worker_id=%ff", HTTP_ACCEPT_LANGUAGE="en")
    page = response.content.decode()
    assert response.status_code == 400 and '<html lang="zh-hans">' in page
    assert "Bad request" not in page and "worker_id" in page  # the page in Chinese, naming the parameter
    unknown = client.get("/join/no-such-study/?worker_id=%ff", HTTP_ACCEPT_LANGUAGE="en")
    assert unknown.status_code == 400 and '<html lang="en">' in unknown.content.decode()
