"""Staff previews: the worker's pages and API for staff, counted nowhere, restartable."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Participation, ParticipationEvent, Response, Study
from annotation.reporting.exports import EXPORT_KINDS, export_to_bytes
from annotation.reporting.options import MetricOptions
from annotation.reporting.pay import condition_pay
from annotation.reporting.scores import annotator_rows
from annotation.services.admission import entry
from annotation.services.state import slots
from annotation.services.studies import preview, studies
from annotation.services.verdicts import attention
from tests.entry_link import take_part
from tests.studies.conftest import inhouse
from tests.team import team_member

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def task(db):
    from tests.factories import make_classification_task

    return make_classification_task(slug="sst2", n_test=4)


@pytest.fixture
def study(task) -> Study:
    study = studies.study_create(task=task, slug="prev", split_number=1, shots=[0, 10], workers_per_condition=1)
    studies.change_status(study=study, to_status=Study.Status.OPEN)
    study.refresh_from_db()
    return study


@pytest.fixture
def staff(db) -> Client:
    user = team_member("staff", "assistant")  # the least role that may preview
    client = Client()
    client.force_login(user)
    return client


def _post(client: Client, url: str, body: dict | None = None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


def _run_through(client: Client) -> None:
    """Answer every item of every step (training with its reveal) until the finish page."""
    assert _post(client, "/api/session/start/").status_code == 200
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        reply = _post(client, "/api/session/submit/", {"item": item["item"], "label": "positive", "confidence": 3})
        assert reply.status_code == 200, reply.content
        if item["phase"] == "training":
            assert client.get(f"/api/session/items/{item['item']}/reveal/").status_code == 200


def test_a_preview_goes_through_training_with_reveals_and_the_test_step(staff, study):
    attention.definitions.generate(study=study, positions=[2])
    reply = staff.get(f"/work/preview/{study.slug}/?shots=10")
    assert reply.status_code == 302 and reply["Location"] == "/work/"
    page = staff.get("/work/").content.decode()
    assert "Preview (10-shot) — nothing is recorded." in page and "Restart preview" in page
    _run_through(staff)
    p = Participation.all_objects.get(is_preview=True)
    assert (p.state, p.slot_index, p.condition.shots) == (State.COMPLETED, None, 10)
    assert Response.all_objects.filter(participation=p).count() == 10 + 4 + 1
    assert "Preview" in staff.get("/work/").content.decode()  # the finish page too


def test_a_preview_is_in_no_count_table_export_or_report(staff, study):
    attention.definitions.generate(study=study, positions=[1])
    staff.get(f"/work/preview/{study.slug}/?shots=0")
    _run_through(staff)
    options = MetricOptions()
    assert not Participation.objects.exists() and not Response.objects.exists()
    assert not study.participations.exists()
    counts = slots.condition_counts([study])[study.pk]
    assert all(c.filled == 0 and c.completed == 0 for c in counts)
    assert annotator_rows(studies=[study], options=options) == []
    assert all(c.n_workers == 0 for c in condition_pay(study=study))
    assert attention.reports.report(study) == []
    for kind in ("annotations-jsonl", "payments-csv", "annotators-csv", "attention-csv"):
        body = export_to_bytes(kind=kind, studies=[study], options=options).decode()
        assert "staff-" not in body, kind
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", password="pw"))
    assert admin.get(f"/api/studies/{study.pk}/counts/").json()[0]["filled"] == 0
    assert admin.get("/api/participations/").json() == []
    assert "staff-" not in admin.get(f"/dashboard/study/{study.slug}/").content.decode()
    assert set(EXPORT_KINDS) >= {"attention-csv", "attention-json"}


def test_a_full_study_can_still_be_previewed_and_the_preview_takes_no_slot(staff, study):
    for name in ("ann", "ben"):
        assert entry.join_study(study=study, params=inhouse(name)).outcome == entry.Outcome.JOINED
    assert entry.join_study(study=study, params=inhouse("cat")).outcome == entry.Outcome.FULL
    assert staff.get(f"/work/preview/{study.slug}/?shots=0").status_code == 302
    assert _post(staff, "/api/session/start/").status_code == 200
    assert sum(c.filled for c in slots.condition_counts([study])[study.pk]) == 2


@pytest.mark.parametrize("status", [Study.Status.DRAFT, Study.Status.PAUSED, Study.Status.CLOSED])
def test_a_draft_paused_or_closed_study_can_be_previewed(staff, task, status):
    study = studies.study_create(task=task, slug=f"s-{status}", split_number=1, shots=[0])
    if status != Study.Status.DRAFT:
        studies.change_status(study=study, to_status=Study.Status.OPEN)
        studies.change_status(study=study, to_status=status, **({"grace_minutes": 0} if status == "closed" else {}))
    assert staff.get(f"/work/preview/{study.slug}/").status_code == 302
    _run_through(staff)
    assert Participation.all_objects.get(is_preview=True).state == State.COMPLETED


def test_restart_deletes_the_preview_and_starts_afresh_in_the_same_condition(staff, study):
    staff.get(f"/work/preview/{study.slug}/?shots=10")
    _post(staff, "/api/session/start/")
    first = Participation.all_objects.get(is_preview=True)
    item = staff.get("/api/session/current/").json()["item"]
    _post(staff, "/api/session/submit/", {"item": item["item"], "label": "positive", "confidence": 3})
    reply = staff.post(f"/work/preview/{study.slug}/restart/")
    assert reply.status_code == 302 and reply["Location"] == f"/work/preview/{study.slug}/?shots=10"
    assert not Participation.all_objects.filter(pk=first.pk).exists()
    assert not Response.all_objects.filter(participation_id=first.pk).exists()
    assert not ParticipationEvent.objects.filter(participation_id=first.pk).exists()
    staff.get(reply["Location"])
    again = Participation.all_objects.get(is_preview=True)
    assert (again.state, again.condition.shots) == (State.CLAIMED, 10)


def test_another_condition_replaces_the_users_preview_of_the_study(staff, study):
    staff.get(f"/work/preview/{study.slug}/?shots=10")
    staff.get(f"/work/preview/{study.slug}/?shots=0")
    (p,) = Participation.all_objects.filter(is_preview=True)
    assert p.condition.shots == 0


def test_anonymous_visitors_and_workers_go_to_the_login_and_others_get_403(client, study):
    reply = client.get(f"/work/preview/{study.slug}/")
    assert reply.status_code == 302 and reply["Location"].startswith("/admin/login/")
    take_part(client, study.slug, {"worker_id": "wanda"})  # a worker's cookie is no staff login
    assert client.get(f"/work/preview/{study.slug}/")["Location"].startswith("/admin/login/")
    assert client.post(f"/work/preview/{study.slug}/restart/").status_code == 302
    user = User.objects.create_user("plain", password="pw")
    client.force_login(user)
    assert client.get(f"/work/preview/{study.slug}/").status_code == 403
    assert not Participation.all_objects.filter(is_preview=True).exists()


def test_an_unknown_study_is_404_and_an_unknown_condition_400(staff, study):
    assert staff.get("/work/preview/nope/").status_code == 404
    reply = staff.get(f"/work/preview/{study.slug}/?shots=20")
    assert reply.status_code == 400 and "has no 20-shot condition (it has 0, 10)" in reply.content.decode()
    assert staff.get(f"/work/preview/{study.slug}/?shots=ten").status_code == 400
    assert not Participation.all_objects.filter(is_preview=True).exists()


def test_a_study_with_only_previews_can_change_its_design_and_be_deleted(staff, study):
    staff.get(f"/work/preview/{study.slug}/?shots=10")
    studies.set_conditions(study=study, shots=[0])
    assert not Participation.all_objects.filter(is_preview=True).exists()
    staff.get(f"/work/preview/{study.slug}/?shots=0")
    attention.definitions.generate(study=study, positions=[1])
    _run_through(staff)
    studies.study_delete(study=study)
    assert not Study.objects.filter(pk=study.pk).exists()


def test_the_preview_worker_never_blocks_a_real_entry(staff, study):
    staff.get(f"/work/preview/{study.slug}/?shots=0")
    assert preview.preview_worker(User.objects.get(username="staff")).platform == "preview"
    assert entry.join_study(study=study, params=inhouse("staff-1")).outcome == entry.Outcome.JOINED


def test_the_dashboard_links_a_preview_per_condition(staff, study):
    page = staff.get(f"/dashboard/study/{study.slug}/").content.decode()
    assert f'href="/work/preview/{study.slug}/?shots=0"' in page
    assert f'href="/work/preview/{study.slug}/?shots=10"' in page
    assert "Attention checks" in page
