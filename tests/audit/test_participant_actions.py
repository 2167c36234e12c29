"""Readmissions, exclusions, blocks, Prolific payments and their dry runs, withdrawals and exports in the trail;
never a participant's identifier in clear."""

import csv
import io
import json
import re
import shlex
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import AuditEntry, Participation, ProlificAction, Worker
from annotation.reporting.exports import export_job_create
from annotation.services import audit
from annotation.services.prolific import jobs, operations
from annotation.services.state import pseudonyms
from annotation.services.verdicts import overrides
from tests.audit.conftest import only
from tests.factories import ParticipationFactory, ResponseFactory, WorkerFactory
from tests.prolific.conftest import join

pytestmark = pytest.mark.django_db
A = AuditEntry.Action
State = Participation.State
PID = "5f0c0ffee0ddba11deadbeef"


@pytest.fixture
def prolific_worker(draft):
    worker = WorkerFactory(platform=Worker.Platform.PROLIFIC, external_id=PID)
    return ParticipationFactory(
        condition=draft.conditions.get(shots=0), worker=worker, state=State.TEST, platform_data={"PROLIFIC_PID": PID}
    )


def _alias(pid: str = PID) -> str:
    return pseudonyms.pseudonym(platform="prolific", external_id=pid)


def test_an_exclusion_and_a_readmission_through_the_api(admin_client, prolific_worker):
    url = f"/api/participations/{prolific_worker.pk}/override/"
    assert admin_client.post(url, {"admit": False, "reason": "bot"}, content_type="application/json").status_code == 200
    assert (
        admin_client.post(url, {"admit": True, "reason": "not a bot"}, content_type="application/json").status_code
        == 200
    )
    excluded, readmitted = only(A.EXCLUDE), only(A.READMIT)
    assert excluded.actor_name == readmitted.actor_name == "admin"
    assert excluded.target == f"participation {prolific_worker.pk}" and excluded.study_slug == "audited"
    assert excluded.before == {"state": "test", "slot_index": 0, "exclusion_kind": ""}
    assert excluded.after == {"state": "excluded", "slot_index": 0, "exclusion_kind": "admin"}
    assert readmitted.before == {"state": "excluded", "slot_index": 0, "exclusion_kind": "admin"}
    assert readmitted.after == {"state": "test", "slot_index": 0, "exclusion_kind": ""}
    assert excluded.detail["reason"] == "bot" and readmitted.detail["reason"] == "not a bot"


def test_a_block_and_an_unblock_name_the_worker_by_pseudonym(admin_client, prolific_worker):
    url = f"/api/workers/{prolific_worker.worker.pk}/"
    assert admin_client.post(url + "block/", {"reason": "spam"}, content_type="application/json").status_code == 200
    assert admin_client.post(url + "unblock/", content_type="application/json").status_code == 200
    blocked, unblocked = only(A.BLOCK), only(A.UNBLOCK)
    assert blocked.target == unblocked.target == f"worker {_alias()}"
    assert blocked.before == {"blocked": False, "blocked_reason": ""}
    assert blocked.after == {"blocked": True, "blocked_reason": "spam (by admin)"}
    assert unblocked.before == {"blocked": True, "blocked_reason": "spam (by admin)"}
    assert unblocked.after == {"blocked": False, "blocked_reason": ""}


@pytest.fixture
def paid_cohort(prolific_on, prolific_study):
    """Two workers who completed in 30 minutes at 12.00/h with 3.00 posted: each is owed a 3.00 bonus."""
    study, condition = prolific_study
    return study, [
        join(prolific_on, condition, "pa", state=State.COMPLETED, slot=0),
        join(prolific_on, condition, "pb", state=State.COMPLETED, slot=1),
    ]


def test_the_review_dry_run_and_run_before_and_after(admin_user, paid_cohort):
    study, ps = paid_cohort
    operations.plan(operation="review", study=study, actor=admin_user)
    operations.run(operation="review", study=study, actor="manage.py prolific --run")
    dry, run = only(A.PROLIFIC_DRY_RUN), only(A.PROLIFIC_RUN)
    assert dry.actor_name == "admin" and dry.detail["operation"] == "review"
    assert dry.after == {"counts": {"to do": 2}, "total": "0.00"}
    assert run.actor_name == "manage.py prolific --run"
    assert run.before == {"counts": {"to do": 2}, "total": "0.00"}
    assert run.after == {"counts": {"done": 2}, "total": "0.00"}
    assert sorted(r["participation_id"] for r in run.detail["rows"]) == sorted(p.pk for p in ps)


def test_the_bonus_dry_run_and_run_carry_the_amounts(admin_user, paid_cohort):
    study, _ = paid_cohort
    operations.plan(operation="bonus", study=study, actor=admin_user)
    operations.run(operation="bonus", study=study, actor=admin_user)
    assert only(A.PROLIFIC_DRY_RUN).after == {"counts": {"to do": 2}, "total": "6.00"}
    run = only(A.PROLIFIC_RUN)
    assert (run.before, run.after) == (
        {"counts": {"to do": 2}, "total": "6.00"},
        {"counts": {"done": 2}, "total": "6.00"},
    )
    assert sorted(r["amount"] for r in run.detail["rows"]) == ["3.00", "3.00"]


def test_a_queued_group_run_is_recorded_when_queued_and_as_its_queuer_when_run(admin_user, paid_cohort):
    study, _ = paid_cohort
    job = jobs.prolific_job_create(study=study, operation="group", user=admin_user)
    queued = only(A.PROLIFIC_QUEUED)
    assert queued.actor_name == "admin" and queued.detail == {"operation": "group", "job": job.pk}
    jobs.prolific_job_run(job_id=job.pk)
    run = only(A.PROLIFIC_RUN)
    assert run.actor_name == "admin" and run.detail["operation"] == "group"
    assert run.before["counts"] == {"to do": 2} and run.after["counts"] == {"done": 2}


def test_the_places_dry_run_is_recorded(admin_user, paid_cohort):
    study, _ = paid_cohort
    operations.plan(operation="places", study=study, actor=admin_user)
    assert only(A.PROLIFIC_DRY_RUN).detail["operation"] == "places"


def test_resolving_an_uncertain_bonus_by_hand(admin_user, paid_cohort):
    _, ps = paid_cohort
    action = ProlificAction.objects.create(
        participation=ps[0], kind="bonus", action="BONUS", status="uncertain", amount="3.00", currency="GBP"
    )
    operations.resolve_uncertain(action=action, paid=True, note="seen on Prolific", actor=admin_user)
    entry = only(A.PROLIFIC_RESOLVE)
    assert entry.participation == ps[0] and entry.actor_name == "admin"
    assert (entry.before, entry.after) == ({"status": "uncertain"}, {"status": "done"})
    assert entry.detail["amount"] == "3.00"


def test_a_withdrawal_and_its_dry_run(prolific_worker):
    Participation.objects.filter(pk=prolific_worker.pk).update(state=State.COMPLETED)
    ResponseFactory(participation=prolific_worker)
    ResponseFactory(participation=prolific_worker)
    base = ["withdraw_participant", "--platform", "prolific", "--id", PID, "--study", "audited", "--by", "pi-alice"]
    call_command(*base, stdout=io.StringIO())
    call_command(*base, "--run", stdout=io.StringIO())
    dry, done = only(A.WITHDRAW_DRY_RUN), only(A.WITHDRAW)
    assert dry.actor_name == done.actor_name == "pi-alice"
    assert dry.target == f"worker {_alias()}" and dry.detail["participations"] == [prolific_worker.pk]
    assert done.target == f"participation {prolific_worker.pk}"
    assert done.before == {
        "state": "completed",
        "withdrawn_at": None,
        "consented": False,
        "answers": 2,
        "survey_answers": 0,
        "comprehension_attempts": 0,
    }
    withdrawn = Participation.all_objects.get(pk=prolific_worker.pk).withdrawn_at
    assert done.after == {**done.before, "answers": 0, "withdrawn_at": done.after["withdrawn_at"]}
    assert done.after["withdrawn_at"].startswith(withdrawn.strftime("%Y-%m-%dT%H:%M:%S"))


def test_exports_are_recorded_with_their_kind_and_studies(admin_user, draft, prolific_worker):
    job = export_job_create(kind="table-csv", study_refs=["audited"], user=admin_user)
    entry = only(A.EXPORT, study=draft)
    assert entry.actor_name == "admin" and entry.detail == {"job": job.pk}
    assert entry.after["kind"] == "table-csv" and entry.after["studies"] == ["audited"]
    Participation.objects.filter(pk=prolific_worker.pk).update(state=State.COMPLETED)
    call_command("export_participants", "--task", "sst2", "--format", "prolific", stdout=io.StringIO())
    blocklist = only(A.EXPORT, target="task sst2")
    assert blocklist.actor_name == "manage.py export_participants"
    assert blocklist.detail == {
        "kind": "participants (prolific)",
        "file": "sst2-prolific-blocklist.txt",
        "participants": 1,
    }


def test_the_dashboards_direct_download_is_recorded(admin_client, draft):
    assert admin_client.get("/dashboard/export/table-json/?studies=audited").status_code == 200
    assert only(A.EXPORT).after["kind"] == "table-json"


def test_no_entry_holds_a_participants_identifier_in_clear(admin_client, admin_user, prolific_worker):
    # Every kind of entry about this worker, and a caller's slip: the identifier put in the values by hand.
    url = f"/api/participations/{prolific_worker.pk}/override/"
    admin_client.post(url, {"admit": False, "reason": f"looked at {PID}"}, content_type="application/json")
    admin_client.post(
        f"/api/workers/{prolific_worker.worker.pk}/block/", {"reason": PID}, content_type="application/json"
    )
    audit.record(
        actor=admin_user,
        action=A.MESSAGE,
        participation=prolific_worker,
        after={"to": PID},
        detail={"text": f"Hi {PID}"},
    )
    call_command("withdraw_participant", "--platform", "prolific", "--id", PID, stdout=io.StringIO())
    stored = json.dumps([list(row) for row in AuditEntry.objects.values_list()], default=str)
    assert PID not in stored
    assert _alias() in stored
    message = only(A.MESSAGE)
    assert message.after == {"to": _alias()} and message.detail == {"text": f"Hi {_alias()}"}
    assert PID not in _command("--format", "csv") and PID not in _command("--format", "json")


def _command(*args):
    out = io.StringIO()
    call_command("audit_trail", *args, stdout=out)
    return out.getvalue()


def test_the_command_writes_one_studys_trail_as_csv_and_json(admin_user, draft, tmp_path):
    overrides_target = ParticipationFactory(condition=draft.conditions.get(shots=0), state=State.TEST)
    overrides.override(overrides_target, admit=False, reason="asleep", actor=admin_user)
    rows = list(csv.DictReader(io.StringIO(_command("--study", "audited", "--format", "csv"))))
    assert [r["action"] for r in rows] == ["study.create", "study.conditions", "participation.exclude"]
    assert rows[2]["actor"] == "admin" and rows[2]["participation"] == str(overrides_target.pk)
    assert json.loads(rows[2]["before"]) == {"state": "test", "slot_index": 0, "exclusion_kind": ""}
    out = tmp_path / "trail.json"
    _command("--study", "audited", "--format", "json", "--output", str(out))
    assert [r["action"] for r in json.loads(out.read_text())] == [r["action"] for r in rows]
    with pytest.raises(CommandError, match="no entry for a study 'nope'"):
        _command("--study", "nope")
    with pytest.raises(CommandError, match="cannot write"):
        _command("--output", str(tmp_path / "no-such-folder" / "trail.csv"))
    with pytest.raises(CommandError, match="invalid choice"):
        _command("--format", "xml")


def test_an_unknown_action_is_refused(draft):
    with pytest.raises(ValueError, match="unknown audit action"):
        audit.record(actor=None, action="study.explode", study=draft)


def test_the_admin_shows_the_trail_read_only_to_those_with_the_right(client, draft):
    staff = User.objects.create_user("assistant", password="pw", is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/annotation/auditentry/").status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="view_auditentry"))
    staff = User.objects.get(pk=staff.pk)  # the permission cache is per instance
    client.force_login(staff)
    assert client.get("/admin/annotation/auditentry/").status_code == 200
    entry = only(A.STUDY_CREATE)
    assert client.get("/admin/annotation/auditentry/add/").status_code == 403
    assert client.post(f"/admin/annotation/auditentry/{entry.pk}/change/", {"action": "x"}).status_code == 403
    assert client.get(f"/admin/annotation/auditentry/{entry.pk}/delete/").status_code == 403
    response = client.post("/admin/annotation/auditentry/", {"action": "download_csv", "_selected_action": [entry.pk]})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    (row,) = csv.DictReader(io.StringIO(response.content.decode()))
    assert row["action"] == "study.create" and row["actor"] == "system"
    assert Decimal(json.loads(row["after"])["hourly_rate"]) == Decimal("12.00")


def test_the_documented_command_runs_as_written(draft, tmp_path, monkeypatch):
    page = (Path(__file__).resolve().parents[2] / "docs" / "participants.md").read_text(encoding="utf-8")
    (written,) = re.findall(r"`python manage\.py (audit_trail [^`]+)`", page)
    assert written == "audit_trail --study SLUG --format csv --output trail.csv"
    monkeypatch.chdir(tmp_path)
    call_command(*shlex.split(written.replace("SLUG", "audited")))
    rows = list(csv.DictReader((tmp_path / "trail.csv").open(encoding="utf-8")))
    assert [r["action"] for r in rows] == ["study.create", "study.conditions"]


def test_a_participants_own_data_includes_the_trails_entries_about_them(admin_user, prolific_worker):
    overrides.override(prolific_worker, admit=False, reason="asleep", actor=admin_user)
    out = io.StringIO()
    call_command("participant_data", "--platform", "prolific", "--id", PID, stdout=out)
    (entry,) = json.loads(out.getvalue())["audit_entries"]
    assert entry["action"] == "participation.exclude" and entry["participation"] == prolific_worker.pk
