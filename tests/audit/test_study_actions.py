"""A study's status and settings changes are in the audit trail with who did them and the values before and after."""

import json
from datetime import timedelta

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.test import RequestFactory
from django.utils import timezone

from annotation.models import AuditEntry, Participation, Study
from annotation.services.admission import closing
from annotation.services.studies import studies
from tests.audit.conftest import entries, only
from tests.factories import ParticipationFactory

pytestmark = pytest.mark.django_db
A = AuditEntry.Action


def _ms(value):
    """A datetime as the JSON column keeps it (DjangoJSONEncoder: milliseconds, Z for UTC)."""
    fraction = f".{value.microsecond // 1000:03d}" if value.microsecond else ""
    return value.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


def test_creating_a_study_records_its_settings(draft):
    entry = only(A.STUDY_CREATE)
    assert entry.actor_name == "system" and entry.study == draft and entry.target == "study audited"
    assert entry.before == {}
    assert entry.after["slug"] == "audited" and entry.after["workers_per_condition"] == 3
    assert entry.after["filter_rule"] == "none" and entry.after["hourly_rate"] == "12.00"
    assert only(A.STUDY_CONDITIONS).after == {"shots": [0, 10]}


def test_open_pause_reopen_and_close_through_the_api(admin_client, draft):
    url = f"/api/studies/{draft.pk}/status/"
    opened = admin_client.post(url, {"status": "open", "override_blockers": True}, content_type="application/json")
    assert opened.status_code == 200, opened.content
    for status in ("paused", "open"):
        assert admin_client.post(url, {"status": status}, content_type="application/json").status_code == 200
    closed = admin_client.post(url, {"status": "closed", "grace_minutes": 30}, content_type="application/json")
    assert closed.status_code == 200, closed.content
    draft.refresh_from_db()
    trail = [(e.action, e.actor_name, e.before, e.after) for e in AuditEntry.objects.order_by("at", "id")][2:]
    assert trail == [
        (A.STUDY_OPEN, "admin", {"status": "draft"}, {"status": "open"}),
        (A.STUDY_PAUSE, "admin", {"status": "open"}, {"status": "paused"}),
        (A.STUDY_REOPEN, "admin", {"status": "paused"}, {"status": "open"}),
        (
            A.STUDY_CLOSE,
            "admin",
            {"status": "open", "closes_at": None},
            {"status": "closed", "closes_at": _ms(draft.closes_at)},
        ),
    ]
    assert all(e.actor is not None and e.actor.username == "admin" for e in entries(A.STUDY_PAUSE))
    # Opened over the launch check's blocker (no posted reward): the entry names it.
    assert [b["code"] for b in only(A.STUDY_OPEN).detail["overridden_blockers"]] == ["no_posted_reward"]


def test_a_refused_change_of_status_records_nothing(admin_client, draft):
    before = AuditEntry.objects.count()
    response = admin_client.post(
        f"/api/studies/{draft.pk}/status/", {"status": "paused"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert AuditEntry.objects.count() == before


def test_the_close_out_after_the_grace_period_is_recorded_per_worker(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, actor="pi")
    worker = ParticipationFactory(condition=draft.conditions.get(shots=0), state=Participation.State.TEST)
    studies.change_status(study=draft, to_status=Study.Status.CLOSED, grace_minutes=0, actor="pi")
    assert closing.close_out_expired(now=timezone.now() + timedelta(minutes=1)) == 1
    entry = only(A.STUDY_CLOSE_OUT)
    assert entry.actor_name == closing.CLOSE_OUT_ACTOR and entry.participation == worker
    assert entry.target == f"participation {worker.pk}" and entry.study_slug == "audited"
    assert entry.before == {"state": "test", "exclusion_kind": ""}
    assert entry.after == {"state": "excluded", "exclusion_kind": "closed"}


def test_configure_study_records_the_rule_edits_before_and_after(draft):
    call_command("configure_study", "audited", "--integrity-max-copies", "2", "--integrity-action", "exclude")
    entry = only(A.STUDY_SETTINGS)
    assert entry.actor_name == "manage.py configure_study"
    assert entry.before == {"integrity_max_copies": None, "integrity_action": "review"}
    assert entry.after == {"integrity_max_copies": 2, "integrity_action": "exclude"}


def test_an_api_edit_records_the_filter_rule_and_threshold_and_the_conditions(admin_client, draft):
    response = admin_client.patch(
        f"/api/studies/{draft.pk}/",
        {"filter_rule": "absolute", "filter_threshold": 0.6, "shots": [0]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    entry = only(A.STUDY_SETTINGS)
    assert entry.actor_name == "admin"
    assert (entry.before, entry.after) == (
        {"filter_rule": "none", "filter_threshold": 0.0},
        {"filter_rule": "absolute", "filter_threshold": 0.6},
    )
    changed = entries(A.STUDY_CONDITIONS)[-1]
    assert (changed.before, changed.after) == ({"shots": [0, 10]}, {"shots": [0]})


def test_an_edit_that_changes_nothing_records_nothing(admin_client, draft):
    before = AuditEntry.objects.count()
    response = admin_client.patch(f"/api/studies/{draft.pk}/", {"name": draft.name}, content_type="application/json")
    assert response.status_code == 200
    assert AuditEntry.objects.count() == before


def test_the_admins_save_records_the_attention_rule_and_pay(admin_user, draft):
    class Form:  # what StudyAdmin.save_model reads of its form
        cleaned_data = {"condition_shots": [0, 10]}

    request = RequestFactory().post("/admin/")
    request.user = admin_user
    edited = Study.objects.get(pk=draft.pk)
    edited.attention_fail_limit, edited.hourly_rate = 2, "15.50"
    admin.site._registry[Study].save_model(request, edited, Form(), change=True)  # type: ignore[arg-type]
    entry = only(A.STUDY_SETTINGS)
    assert entry.actor_name == "admin"
    assert entry.before == {"attention_fail_limit": 0, "hourly_rate": "12.00"}
    assert entry.after == {"attention_fail_limit": 2, "hourly_rate": "15.50"}


def test_deleting_a_study_keeps_its_entries_by_slug(admin_client, draft):
    assert admin_client.delete(f"/api/studies/{draft.pk}/").status_code == 204
    entry = only(A.STUDY_DELETE)
    assert entry.study is None and entry.study_slug == "audited" and entry.before["status"] == "draft"
    out = json.loads(_trail("--study", "audited", "--format", "json"))
    assert [row["action"] for row in out] == ["study.create", "study.conditions", "study.delete"]


def _trail(*args):
    import io

    buffer = io.StringIO()
    call_command("audit_trail", *args, stdout=buffer)
    return buffer.getvalue()
