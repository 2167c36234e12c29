"""The admins' study API: the permission matrix for every endpoint, and what each one does."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Participation, Study, Worker
from annotation.services.studies import studies
from tests.entry_link import take_part
from tests.factories import ParticipationFactory, WorkerFactory

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def admin_client(db):
    user = get_user_model().objects.create_superuser("admin", password="pw")
    client = Client()
    client.force_login(user)
    return client


def _worker_client(study, worker_id):
    client = Client()
    assert take_part(client, study.slug, {"worker_id": worker_id}).status_code == 302
    return client


@pytest.fixture
def world(study):
    """One study with a worker in it, an excluded participation and a worker to block."""
    # slot 2: the two joined workers below can only take slots 0 and 1
    excluded = ParticipationFactory(condition=study.conditions.get(shots=10), slot_index=2, state=State.EXCLUDED)
    staff_user = get_user_model().objects.create_user("plain", password="pw")
    plain = Client()
    plain.force_login(staff_user)
    return {
        "study": study,
        "excluded": excluded,
        "worker": WorkerFactory(external_id="to-block"),
        "clients": {
            "anonymous": Client(),
            "worker": _worker_client(study, "alice"),
            "other worker": _worker_client(study, "bob"),
            "logged-in non-staff": plain,
        },
    }


def _endpoints(w):
    s, p, wk = w["study"], w["excluded"], w["worker"]
    cond = s.conditions.first()
    return [
        ("get", "/api/studies/", None, 200),
        ("post", "/api/studies/", {"task": "sst2", "slug": "new-one", "name": "New", "shots": [0]}, 201),
        ("get", f"/api/studies/{s.pk}/", None, 200),
        ("patch", f"/api/studies/{s.pk}/", {"hourly_rate": "13.00"}, 200),
        ("post", f"/api/studies/{s.pk}/status/", {"status": "paused"}, 200),
        ("get", f"/api/studies/{s.pk}/counts/", None, 200),
        ("post", "/api/studies/standard-design/", {"task": "sst2", "split_number": 1}, 201),
        ("get", "/api/conditions/", None, 200),
        ("get", f"/api/conditions/{cond.pk}/", None, 200),
        ("get", "/api/participations/", None, 200),
        ("get", f"/api/participations/{p.pk}/", None, 200),
        ("post", f"/api/participations/{p.pk}/override/", {"admit": True, "reason": "glitch"}, 200),
        ("get", "/api/workers/", None, 200),
        ("get", f"/api/workers/{wk.pk}/", None, 200),
        ("post", f"/api/workers/{wk.pk}/block/", {"reason": "spam"}, 200),
        ("post", f"/api/workers/{wk.pk}/unblock/", None, 200),
        ("get", "/api/participants/export/?task=sst2&format=prolific", None, 200),
        ("delete", "/api/studies/{draft}/", None, 204),
    ]


def _call(client, method, url, payload):
    return (
        getattr(client, method)(url, payload, content_type="application/json")
        if payload is not None
        else getattr(client, method)(url)
    )


def test_every_endpoint_refuses_anyone_but_an_admin_and_changes_nothing(world):
    draft = studies.study_create(task=world["study"].task, slug="draft", shots=[0])
    before = (
        Study.objects.count(),
        Worker.objects.filter(blocked=True).count(),
        list(Participation.objects.values_list("state", flat=True)),
    )
    for who, client in world["clients"].items():
        for method, url, payload, _ in _endpoints(world):
            response = _call(client, method, url.replace("{draft}", str(draft.pk)), payload)
            assert response.status_code == 403, (who, method, url, response.status_code)
    after = (
        Study.objects.count(),
        Worker.objects.filter(blocked=True).count(),
        list(Participation.objects.values_list("state", flat=True)),
    )
    assert after == before


def test_every_endpoint_answers_an_admin(world, admin_client):
    draft = studies.study_create(task=world["study"].task, slug="draft", shots=[0])
    for method, url, payload, expected in _endpoints(world):
        response = _call(admin_client, method, url.replace("{draft}", str(draft.pk)), payload)
        assert response.status_code == expected, (method, url, response.content[:300])


def test_create_validates_conditions_with_a_clear_400(admin_client, study):
    response = admin_client.post(
        "/api/studies/", {"task": "sst2", "slug": "x", "name": "X", "shots": [0, 15]}, content_type="application/json"
    )
    assert response.status_code == 400
    assert "no [15]-shot training set" in response.json()["fields"]["shots"][0]
    assert not Study.objects.filter(slug="x").exists()
    response = admin_client.post("/api/studies/", {"task": "nope", "slug": "y"}, content_type="application/json")
    assert response.status_code == 400 and "task" in response.json()["fields"]


def test_create_and_read_a_study_with_its_conditions(admin_client, task):
    response = admin_client.post(
        "/api/studies/",
        {
            "task": "sst2",
            "slug": "mine",
            "name": "Mine",
            "shots": [0, 30],
            "split_number": 1,
            "filter_rule": "absolute",
            "filter_threshold": 0.5,
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "draft" and body["entry_path"] == "/join/mine/"
    assert [c["shots"] for c in body["conditions"]] == [0, 30]
    assert body["filter_rule"] == "absolute"


def test_status_changes_follow_the_rules(admin_client, study):
    url = f"/api/studies/{study.pk}/status/"
    assert admin_client.post(url, {"status": "closed"}, content_type="application/json").json()["status"] == "closed"
    response = admin_client.post(url, {"status": "open"}, content_type="application/json")
    assert response.status_code == 400 and "cannot become open" in response.json()["fields"]["status"][0]
    response = admin_client.post(url, {"status": "running"}, content_type="application/json")
    assert response.status_code == 400


def test_patch_refuses_design_changes_after_workers_joined_and_slug_changes(admin_client, study):
    _worker_client(study, "alice")
    url = f"/api/studies/{study.pk}/"
    response = admin_client.patch(url, {"shots": [0]}, content_type="application/json")
    assert response.status_code == 400 and "already joined" in response.json()["fields"]["shots"][0]
    response = admin_client.patch(url, {"test_order": "shuffled"}, content_type="application/json")
    assert response.status_code == 400 and "reorder the items" in response.json()["fields"]["test_order"][0]
    response = admin_client.patch(url, {"slug": "renamed"}, content_type="application/json")
    assert response.status_code == 400 and "slug" in response.json()["fields"]
    assert admin_client.delete(url).status_code == 400
    assert Study.objects.filter(pk=study.pk, slug=study.slug).exists()


def test_standard_design_takes_the_training_filter(admin_client, task):
    response = admin_client.post(
        "/api/studies/standard-design/",
        {"task": "sst2", "split_number": 1, "filter_rule": "absolute", "filter_threshold": 0.6},
        content_type="application/json",
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["filter_rule"], body["filter_threshold"], body["filter_reference"]) == ("absolute", 0.6, "mean")
    response = admin_client.post(
        "/api/studies/standard-design/",
        {"task": "sst2", "split_number": 1, "filter_rule": "sometimes"},
        content_type="application/json",
    )
    assert response.status_code == 400 and "filter_rule" in response.json()["fields"]


def test_standard_design_reports_a_split_that_is_not_nested(admin_client, task):
    task.splits.update(is_nested=False)
    response = admin_client.post(
        "/api/studies/standard-design/", {"task": "sst2", "split_number": 1}, content_type="application/json"
    )
    assert response.status_code == 400 and "not nested" in response.json()["fields"]["split_number"][0]
    response = admin_client.post(
        "/api/studies/standard-design/", {"task": "sst2", "split_number": 9}, content_type="application/json"
    )
    assert response.status_code == 400


def test_counts_per_condition(admin_client, study):
    for i in range(5):
        _worker_client(study, f"w{i}")
    rows = admin_client.get(f"/api/studies/{study.pk}/counts/").json()
    assert [r["shots"] for r in rows] == [0, 10, 20, 30]
    assert sum(r["filled"] for r in rows) == 5 and sum(r["claimed"] for r in rows) == 5
    assert all(r["free"] == 3 - r["filled"] for r in rows)


def test_participations_list_filters_and_shows_events(admin_client, study):
    _worker_client(study, "alice")
    rows = admin_client.get(f"/api/participations/?study={study.slug}&state=claimed").json()
    assert len(rows) == 1 and rows[0]["worker"] == "inhouse:alice"
    assert rows[0]["events"][0]["to_state"] == "claimed"
    assert admin_client.get("/api/participations/?state=bogus").status_code == 400


def test_override_readmits_with_a_logged_reason_and_refuses_a_bad_one(admin_client, world):
    p = world["excluded"]
    url = f"/api/participations/{p.pk}/override/"
    assert admin_client.post(url, {"admit": True}, content_type="application/json").status_code == 400
    body = admin_client.post(url, {"admit": True, "reason": "glitch"}, content_type="application/json").json()
    assert body["state"] == "test"
    assert body["filter_decisions"][-1]["is_override"] and body["filter_decisions"][-1]["decided_by"] == "admin"
    assert body["events"][-1]["reason"] == "admin override: glitch"
    response = admin_client.post(url, {"admit": True, "reason": "again"}, content_type="application/json")
    assert response.status_code == 400 and "cannot go from test to test" in response.json()["fields"]["state"][0]


def test_block_and_unblock_a_worker(admin_client, world):
    wk = world["worker"]
    assert admin_client.post(f"/api/workers/{wk.pk}/block/", {}, content_type="application/json").status_code == 400
    body = admin_client.post(f"/api/workers/{wk.pk}/block/", {"reason": "spam"}, content_type="application/json").json()
    assert body["blocked"] and body["blocked_reason"] == "spam (by admin)"
    assert [w["external_id"] for w in admin_client.get("/api/workers/?blocked=true").json()] == ["to-block"]
    assert not admin_client.post(f"/api/workers/{wk.pk}/unblock/").json()["blocked"]


def test_participant_export_in_both_shapes_and_clear_errors(admin_client, study):
    _worker_client(study, "alice")
    ParticipationFactory(
        condition=study.conditions.get(shots=0),
        slot_index=2,
        worker=WorkerFactory(platform="prolific", external_id="PP"),
    )
    response = admin_client.get("/api/participants/export/?task=sst2&format=prolific")
    assert response.content == b"PP\n" and response["Content-Type"].startswith("text/plain")
    assert "attachment" in response["Content-Disposition"]
    response = admin_client.get("/api/participants/export/?task=sst2&format=mturk&qualification=done")
    assert response.content.decode().splitlines() == ["Worker ID,UPDATE-done"]
    response = admin_client.get("/api/participants/export/?task=sst2&format=xls")
    assert response.status_code == 400 and "Unknown format" in response.json()["fields"]["format"][0]
    assert admin_client.get("/api/participants/export/?format=mturk").status_code == 400
    assert admin_client.get("/api/participants/export/?task=nope&format=mturk").status_code == 404


def test_the_endpoints_are_in_the_openapi_schema(admin_client):
    response = admin_client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"] if response["Content-Type"].startswith("application/json") else None
    text = response.content.decode()
    for path in (
        "/api/studies/",
        "/api/studies/{id}/status/",
        "/api/studies/{id}/counts/",
        "/api/studies/standard-design/",
        "/api/conditions/",
        "/api/participations/{id}/override/",
        "/api/workers/{id}/block/",
        "/api/participants/export/",
    ):
        assert path in (paths or text), path


def test_a_filter_threshold_outside_0_to_1_is_a_400_under_its_field(admin_client, study):
    response = admin_client.patch(f"/api/studies/{study.pk}/", {"filter_threshold": 2}, content_type="application/json")
    assert response.status_code == 400 and "from 0 to 1" in response.json()["fields"]["filter_threshold"][0]
    study.refresh_from_db()
    assert study.filter_threshold == 0.0
