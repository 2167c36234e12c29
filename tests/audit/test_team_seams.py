"""Where the team's roles, the messages and the withdrawal API meet the audit trail: a refusal, a message
and its dry run, a withdrawal through the API, each in the trail; and who may read the trail."""

import json

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from annotation.models import AuditEntry, Participation
from annotation.protocol import roles
from annotation.services.prolific import messages
from tests.audit.conftest import only
from tests.prolific.conftest import join
from tests.team import team_member

pytestmark = pytest.mark.django_db


def _client(role: str) -> Client:
    client = Client()
    client.force_login(team_member(role, role))
    return client


def test_a_refusal_is_in_the_trail_with_who_and_what(prolific_study):
    study, _ = prolific_study
    response = _client("researcher").post(
        "/api/participants/withdraw/", json.dumps({"platform": "prolific", "id": "p1"}), content_type="application/json"
    )
    assert response.status_code == 403 and response.json()["operation"] == "withdraw"
    entry = only(AuditEntry.Action.REFUSED)
    assert (entry.actor_name, entry.target, entry.detail) == (
        "researcher",
        "POST /api/participants/withdraw/",
        {"operation": "withdraw"},
    )


def test_an_anonymous_visit_writes_nothing(db):
    assert Client().get("/dashboard/").status_code == 302  # to the login page
    assert not AuditEntry.objects.exists()


def test_a_message_and_its_dry_run_are_in_the_trail_without_the_recipients_ids(prolific_on, prolific_study):
    study, condition = prolific_study
    for slot, pid in enumerate(("p1", "p2")):
        join(prolific_on, condition, pid, state=Participation.State.COMPLETED, slot=slot)
    messages.plan(study=study, kind="bulk", text="Thank you.", actor="alice")
    messages.send(study=study, kind="bulk", text="Thank you.", sent_by="alice")
    looked, sent = only(AuditEntry.Action.MESSAGE_DRY_RUN), only(AuditEntry.Action.MESSAGE)
    assert looked.after["recipient_count"] == sent.after["recipient_count"] == 2
    assert (sent.actor_name, sent.after["text"], sent.after["state"]) == ("alice", "Thank you.", "done")
    dumped = json.dumps([looked.after, looked.detail, sent.after, sent.detail])
    assert "p1" not in dumped and "p2" not in dumped


def test_a_withdrawal_through_the_api_names_the_pi_who_ran_it(prolific_study):
    study, condition = prolific_study
    from tests.factories import ParticipationFactory, WorkerFactory

    worker = WorkerFactory(platform="prolific", external_id="p9")
    ParticipationFactory(study=study, condition=condition, worker=worker, state=Participation.State.COMPLETED)
    response = _client("pi").post(
        "/api/participants/withdraw/",
        json.dumps({"platform": "prolific", "id": "p9", "run": True}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    entry = only(AuditEntry.Action.WITHDRAW)
    assert entry.actor_name == "pi" and "p9" not in json.dumps([entry.target, entry.before, entry.after])


def test_only_the_pi_reads_the_trail_and_messages_participants():
    for role, expected in ((roles.PI, True), (roles.RESEARCHER, False), (roles.ASSISTANT, False)):
        held = set(Group.objects.get(name=roles.GROUP_NAMES[role]).permissions.values_list("codename", flat=True))
        assert ("view_auditentry" in held, "message_participants" in held) == (expected, expected), role
