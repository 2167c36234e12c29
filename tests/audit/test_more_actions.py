"""Attention-check edits, a launch over blockers, the admin's withdrawal page and a bulk message in the trail."""

import io

import pytest
from django.core.management import call_command

from annotation.models import AuditEntry, Participation, Worker
from annotation.services import audit
from annotation.services.state import pseudonyms
from tests.audit.conftest import entries, only
from tests.factories import ParticipationFactory, WorkerFactory

pytestmark = pytest.mark.django_db
A = AuditEntry.Action


def test_attention_checks_added_edited_and_removed_through_the_api(admin_client, draft):
    body = {
        "study": "audited",
        "position": 2,
        "context": "Read.",
        "question": "Choose 'positive'.",
        "expected_label": "positive",
    }
    created = admin_client.post("/api/attention-checks/", body, content_type="application/json")
    assert created.status_code == 201, created.content
    url = f"/api/attention-checks/{created.json()['id']}/"
    assert admin_client.patch(url, {"position": 3}, content_type="application/json").status_code == 200
    assert admin_client.delete(url).status_code == 204
    added, moved, removed = entries(A.ATTENTION_CHECKS)
    shown = {
        "position": 2,
        "context": "Read.",
        "question": "Choose 'positive'.",
        "expected_label": "positive",
        "expected_spans": [],
        "source": "researcher",
    }
    assert (added.before, added.after) == ({}, shown)
    assert (moved.before, moved.after) == ({"position": 2}, {"position": 3})
    assert (removed.before, removed.after) == ({**shown, "position": 3}, {})
    assert {e.actor_name for e in (added, moved, removed)} == {"admin"}
    assert added.detail == moved.detail == removed.detail == {"check": created.json()["id"]}


def test_the_attention_checks_command_records_the_rule_and_the_checks_it_adds(draft):
    call_command("attention_checks", "audited", "--fail-limit", "1", "--positions", "1,2", stdout=io.StringIO())
    rule = only(A.STUDY_SETTINGS)
    assert rule.actor_name == "manage.py attention_checks"
    assert (rule.before, rule.after) == ({"attention_fail_limit": 0}, {"attention_fail_limit": 1})
    added = entries(A.ATTENTION_CHECKS)
    assert [e.after["position"] for e in added] == [1, 2] and {e.after["source"] for e in added} == {"template"}


def test_a_launch_over_blockers_names_them_in_the_entry(draft):
    call_command(
        "check_study", "audited", "--open", "--override-blockers", "--by", "A. Researcher", stdout=io.StringIO()
    )
    opened = only(A.STUDY_OPEN)
    assert opened.actor_name == "A. Researcher"
    assert (opened.before, opened.after) == ({"status": "draft"}, {"status": "open"})
    assert [b["code"] for b in opened.detail["overridden_blockers"]] == ["no_posted_reward"]


def test_the_admins_withdrawal_page_is_a_recorded_dry_run(admin_client, draft):
    worker = WorkerFactory(platform=Worker.Platform.PROLIFIC, external_id="60bbbbbbbbbbbbbbbbbbbbbb")
    p = ParticipationFactory(
        condition=draft.conditions.get(shots=0), worker=worker, state=Participation.State.COMPLETED
    )
    page = admin_client.post(
        "/admin/annotation/participation/", {"action": "withdraw_participants", "_selected_action": [p.pk]}
    )
    assert page.status_code == 200
    dry = only(A.WITHDRAW_DRY_RUN)
    assert dry.actor_name == "admin" and dry.detail["participations"] == [p.pk]
    assert not entries(A.WITHDRAW)


def test_a_bulk_messages_recipients_are_named_by_pseudonym_only(admin_user, draft):
    ids = ["61aaaaaaaaaaaaaaaaaaaaaa", "61bbbbbbbbbbbbbbbbbbbbbb"]
    people = [
        ParticipationFactory(
            condition=draft.conditions.get(shots=0),
            worker=WorkerFactory(platform=Worker.Platform.PROLIFIC, external_id=pid),
            slot_index=i,
            state=Participation.State.COMPLETED,
        )
        for i, pid in enumerate(ids)
    ]
    # What the messages code records: the text and the recipients, with the participants passed in ``others``.
    entry = audit.record(
        actor=admin_user,
        action=A.MESSAGE,
        study=draft,
        others=people,
        after={"text": "A bonus is coming.", "recipients": ids},
        detail={"participations": [p.pk for p in people]},
    )
    entry.refresh_from_db()
    aliases = [pseudonyms.pseudonym(platform="prolific", external_id=pid) for pid in ids]
    assert entry.after == {"text": "A bonus is coming.", "recipients": aliases}
    assert entry.target == "study audited"


def test_a_human_data_release_is_recorded_as_an_export(draft, tmp_path):
    call_command("release_study", "audited", "-o", str(tmp_path / "release"), stdout=io.StringIO())
    entry = only(A.EXPORT)
    assert entry.actor_name == "manage.py release_study" and entry.study == draft
    assert entry.after["kind"] == "release" and entry.after["studies"] == ["audited"]
