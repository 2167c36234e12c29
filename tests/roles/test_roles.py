"""The team's roles (docs/team.md): what an assistant and a researcher may not do, from each door; the jobs
they queue; the one refusal's three answers; the groups the migration makes; ``ensure_admin --role``."""

from __future__ import annotations

import io
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import ExportJob, Participation, ProlificAction, ProlificJob, RehearsalJob, Study
from annotation.protocol import roles
from annotation.reporting.exports import EXPORT_KINDS, IDENTIFIER_KINDS, export_job_run, write_export
from annotation.reporting.options import MetricOptions
from annotation.reporting.rehearsal_jobs import rehearsal_job_run
from annotation.services.prolific.jobs import prolific_job_run
from annotation.services.roles.operations import PERMISSIONS, Operation, may
from tests.entry_link import take_part
from tests.factories import ConditionFactory, StudyFactory, make_classification_task
from tests.team import team_member

pytestmark = pytest.mark.django_db

PID = "5f0c0ffee0ddba11deadbeef"
OTHER = "60aaaaaaaaaaaaaaaaaaaaaa"
STILL_IN = "61bbbbbbbbbbbbbbbbbbbbbb"


@pytest.fixture
def study():
    task = make_classification_task(slug="rtask", n_test=3)
    study = StudyFactory(task=task, slug="r-study", workers_per_condition=3)
    ConditionFactory(study=study, shots=0)
    return study


def _take_part(pid: str, *, finish: bool) -> Participation:
    client = Client()
    take_part(client, "r-study", {"PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": f"sess-{pid}"})
    client.post("/api/session/start/", content_type="application/json")
    while finish and (item := client.get("/api/session/current/").json()["item"]) is not None:
        body = {"item": item["item"], "label": "negative", "confidence": 2}
        client.post("/api/session/submit/", body, content_type="application/json")
    return Participation.objects.get(worker__external_id=pid)


def _as(role: str) -> Client:
    client = Client()
    client.force_login(team_member(role, role))
    return client


# --- What each role may: the table as the roles hold it -------------------------------------------------


EXPECTED = {  # written from docs/team.md, operation by operation
    "assistant": {Operation.WATCH, Operation.PREVIEW, Operation.EXPORT_RESULTS},
    "researcher": {
        Operation.WATCH,
        Operation.PREVIEW,
        Operation.EXPORT_RESULTS,
        Operation.EXPORT_IDENTIFIERS,
        Operation.CONFIGURE,
        Operation.CHANGE_STATUS,
        Operation.REHEARSE,
        Operation.PROLIFIC_GROUP,
        Operation.PROLIFIC_PLACES,
    },
    "pi": set(Operation),
}


@pytest.mark.parametrize("role", ["assistant", "researcher", "pi"])
def test_each_role_may_do_what_the_team_page_says_and_nothing_else(role):
    user = team_member(role, role)
    assert {op for op in Operation if may(user, op)} == EXPECTED[role]


def test_the_superuser_may_do_everything_and_anyone_off_the_team_nothing():
    root = get_user_model().objects.create_superuser("root", password="pw")
    outsider = get_user_model().objects.create_user("outsider", password="pw")  # signed in, not staff
    staff_without_role = get_user_model().objects.create_user("staffer", password="pw", is_staff=True)
    assert all(may(root, op) for op in Operation)
    assert not any(may(u, op) for u in (outsider, staff_without_role, None) for op in Operation)
    gone = team_member("gone", "pi")
    gone.is_active = False
    gone.save()
    assert not may(gone, Operation.WATCH)


def test_every_operation_needs_a_declared_permission():
    declared = {codename for codename, _ in roles.STUDY_PERMISSIONS}
    # Reading the audit trail is its model's own view permission (the admin checks it too).
    assert set(PERMISSIONS) == set(Operation) and set(PERMISSIONS.values()) == declared | {roles.VIEW_AUDIT}


def test_the_migration_made_the_groups_the_table_describes():
    """The groups in the database (made by migrations 0037 and 0039) hold what annotation.protocol.roles says: a change
    to the table without a migration that syncs the groups again fails here."""
    for role, name in roles.GROUP_NAMES.items():
        held = {(p.content_type.app_label, p.codename) for p in Group.objects.get(name=name).permissions.all()}
        if role == roles.PI:
            everything = Permission.objects.filter(content_type__app_label__in=roles.PI_APPS)
            assert held == {(p.content_type.app_label, p.codename) for p in everything}
        else:
            assert held == roles.role_permissions(role)
    roles.sync_groups(apps)  # idempotent
    assert Group.objects.filter(name__in=roles.GROUP_NAMES.values()).count() == 3


# --- An assistant cannot export identifiers ------------------------------------------------------------


def test_an_assistant_cannot_export_identifiers_from_any_door(study):
    _take_part(PID, finish=True)
    assistant = _as("assistant")
    for kind in sorted(IDENTIFIER_KINDS):
        response = assistant.get(f"/dashboard/export/{kind}/?studies=r-study")
        assert response.status_code == 403, kind
        assert PID not in response.content.decode()
        assert assistant.get(f"/dashboard/export/{kind}/provenance/?studies=r-study").status_code == 403
    queued = assistant.post("/dashboard/exports/queue/", {"kind": "annotations-jsonl", "studies": "r-study"})
    assert queued.status_code == 403
    api = assistant.post(
        "/api/reports/exports/", {"kind": "payments-csv", "studies": ["r-study"]}, content_type="application/json"
    )
    assert api.status_code == 403
    assert api.json() == {
        "error": "permission_denied",
        "detail": "Your role may not export or list participants' identifiers.",
        "operation": "export_identifiers",
    }
    for url in (
        "/api/participants/export/?task=rtask&format=prolific",
        "/api/participations/",
        "/api/workers/",
        "/api/reports/annotators/?studies=r-study",
        "/api/reports/table/?studies=r-study",  # its rows name each annotator
        "/api/attention-checks/report/?study=r-study",
    ):
        response = assistant.get(url)
        assert response.status_code == 403 and PID not in response.content.decode(), url
    assert not ExportJob.objects.exists()


def test_an_assistant_may_export_what_holds_no_identifier(study):
    _take_part(PID, finish=True)
    response = _as("assistant").get("/dashboard/export/plot-svg/?studies=r-study")
    assert response.status_code == 200 and PID not in response.content.decode()


def test_an_assistant_cannot_download_a_job_that_holds_identifiers(study):
    job = ExportJob.objects.create(kind="annotations-jsonl", params={"studies": [study.pk]})
    assert _as("assistant").get(f"/dashboard/exports/{job.pk}/download/").status_code == 403
    assert _as("researcher").get(f"/dashboard/exports/{job.pk}/download/").status_code == 404  # allowed; no file


def test_the_kinds_said_to_hold_no_identifier_hold_none(study):
    """Every export kind written for a study with a worker done, one still in and one excluded: a kind whose
    file names any of them must be in IDENTIFIER_KINDS (an assistant may make the others)."""
    _take_part(PID, finish=True)
    _take_part(OTHER, finish=True)
    _take_part(STILL_IN, finish=False)
    assert set(EXPORT_KINDS) >= IDENTIFIER_KINDS
    holding = set()
    for kind in EXPORT_KINDS:
        if kind.startswith("fewclue-"):
            continue  # a FewCLUE table needs a FewCLUE study; it is one row per condition (no worker)
        out = io.BytesIO()
        write_export(kind=kind, studies=[Study.objects.get()], options=MetricOptions(), out=out)
        if any(pid.encode() in out.getvalue() for pid in (PID, OTHER, STILL_IN)):
            holding.add(kind)
    assert holding, "the check found no identifier anywhere: it checks nothing"
    assert holding <= IDENTIFIER_KINDS, sorted(holding - IDENTIFIER_KINDS)


# --- A researcher cannot pay or withdraw ---------------------------------------------------------------


def test_a_researcher_cannot_pay_from_the_api_the_dashboard_or_the_admin(study, settings):
    settings.PROLIFIC_API_TOKEN = "token"  # the integration on: only the role stands in the way
    researcher = _as("researcher")
    for operation in ("review", "bonus"):
        api = researcher.post(
            f"/api/studies/{study.pk}/prolific/{operation}/", {"run": True}, content_type="application/json"
        )
        assert api.status_code == 403 and api.json()["error"] == "permission_denied", operation
        assert researcher.get(f"/dashboard/study/r-study/prolific/{operation}/").status_code == 403
        assert researcher.post(f"/dashboard/study/r-study/prolific/{operation}/").status_code == 403
        assert researcher.post(f"/admin/annotation/study/{study.pk}/prolific/{operation}/").status_code == 403
    listed = researcher.get("/admin/annotation/study/").content.decode()
    assert "prolific_bonus" not in listed and "prolific_review" not in listed and "prolific_places" in listed
    assert not ProlificJob.objects.exists() and not ProlificAction.objects.exists()


def test_a_researcher_cannot_withdraw_readmit_or_exclude(study):
    participation = _take_part(PID, finish=True)
    researcher = _as("researcher")
    listed = researcher.get("/admin/annotation/participation/").content.decode()
    for action in ("withdraw_participants", "readmit_participations", "exclude_participations"):
        assert f'value="{action}"' not in listed
        researcher.post(
            "/admin/annotation/participation/",
            {"action": action, "_selected_action": [participation.pk], "apply": "1", "reason": "try"},
        )
    participation.refresh_from_db()
    assert participation.state == "completed" and participation.responses.exists()
    assert Participation.objects.filter(worker__external_id=PID).exists()  # not withdrawn
    override = researcher.post(
        f"/api/participations/{participation.pk}/override/",
        {"admit": False, "reason": "try"},
        content_type="application/json",
    )
    assert override.status_code == 403 and override.json()["error"] == "permission_denied"
    pi_page = _as("pi").get("/admin/annotation/participation/").content.decode()
    assert 'value="withdraw_participants"' in pi_page and 'value="readmit_participations"' in pi_page


def test_a_researcher_cannot_block_workers_or_open_despite_the_launch_check(study):
    participation = _take_part(PID, finish=True)
    researcher = _as("researcher")
    block = researcher.post(
        f"/api/workers/{participation.worker_id}/block/", {"reason": "x"}, content_type="application/json"
    )
    assert block.status_code == 403
    status = researcher.post(
        f"/api/studies/{study.pk}/status/",
        {"status": "open", "override_blockers": True},
        content_type="application/json",
    )
    assert status.status_code == 403 and status.json()["operation"] == "open_despite_blockers"
    paused = researcher.post(f"/api/studies/{study.pk}/status/", {"status": "paused"}, content_type="application/json")
    assert paused.status_code == 200 and Study.objects.get().status == "paused"


# --- The jobs a user queues check the requester's right when they run ---------------------------------


def test_a_prolific_payment_queued_by_a_researcher_never_runs(study, settings):
    settings.PROLIFIC_API_TOKEN = "token"
    _take_part(PID, finish=True)
    job = ProlificJob.objects.create(study=study, operation="bonus", created_by=team_member("res", "researcher"))
    job = prolific_job_run(job_id=job.pk)
    assert job.status == "failed" and job.error == "res may not pay bonuses: the job was not run"
    assert not ProlificAction.objects.exists()


def test_a_job_whose_requester_lost_the_role_since_does_nothing(study):
    _take_part(PID, finish=True)
    researcher = team_member("res", "researcher")
    export = ExportJob.objects.create(kind="annotations-jsonl", params={"studies": [study.pk]}, created_by=researcher)
    rehearsal = RehearsalJob.objects.create(study=study, created_by=researcher)
    researcher.groups.set([Group.objects.get(name="assistant")])  # demoted after queueing
    export = export_job_run(job_id=export.pk)
    assert export.status == "failed" and "may not export or list participants' identifiers" in export.error
    assert not export.file
    rehearsal = rehearsal_job_run(job_id=rehearsal.pk)
    assert rehearsal.status == "failed" and "may not rehearse studies" in rehearsal.error


def test_a_job_an_operator_queued_from_the_server_runs(study):
    export = ExportJob.objects.create(kind="table-json", params={"studies": [study.pk]})  # no requester
    assert export_job_run(job_id=export.pk).status == "done"


# --- The one refusal: login, Django's 403 page, the API's shape ---------------------------------------


def test_the_refusal_sends_anonymous_visitors_to_log_in_and_refuses_the_rest(study):
    page = Client().get("/dashboard/export/payments-csv/?studies=r-study")
    assert page.status_code == 302 and page["Location"].startswith("/admin/login/?next=/dashboard/export/")
    html = _as("assistant").get("/dashboard/export/payments-csv/?studies=r-study")
    assert html.status_code == 403 and "text/html" in html["Content-Type"]
    assert "Your role may not export or list participants" in html.content.decode()
    api = Client().get("/api/workers/")
    assert api.status_code == 403 and api.json()["error"] == "not_authenticated"
    live = Client().get("/dashboard/live.json")
    assert live.status_code == 403 and live.json()["error"] == "not_authenticated"


# --- ensure_admin --role -------------------------------------------------------------------------------


def _ensure(*args: str) -> str:
    out = StringIO()
    call_command("ensure_admin", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("role", "group"), [("pi", "principal investigator"), ("researcher", "researcher"), ("assistant", "assistant")]
)
def test_ensure_admin_makes_a_member_of_the_team_in_one_role(role, group):
    out = _ensure("--username", "ada", "--password", "a-long-password-1", "--role", role)
    assert f"Created {group} 'ada'" in out
    user = get_user_model().objects.get(username="ada")
    assert user.is_staff and not user.is_superuser and user.check_password("a-long-password-1")
    assert list(user.groups.values_list("name", flat=True)) == [group]


def test_ensure_admin_moves_a_member_to_another_role_and_back_to_superuser():
    _ensure("--username", "ada", "--password", "a-long-password-1", "--role", "pi")
    _ensure("--username", "ada", "--password", "a-long-password-1", "--role", "assistant")
    user = get_user_model().objects.get(username="ada")
    assert list(user.groups.values_list("name", flat=True)) == ["assistant"]
    assert not may(user, Operation.EXPORT_IDENTIFIERS) and may(user, Operation.PREVIEW)
    _ensure("--username", "ada", "--password", "a-long-password-1")
    user.refresh_from_db()
    assert user.is_superuser and not user.groups.exists()


def test_ensure_admin_refuses_an_unknown_role_and_keeps_the_password_rules():
    with pytest.raises(CommandError, match="invalid choice"):
        _ensure("--username", "ada", "--password", "a-long-password-1", "--role", "boss")
    with pytest.raises(CommandError, match="The password is refused"):
        _ensure("--username", "ada", "--password", "12345678", "--role", "assistant")
    assert not get_user_model().objects.exists()
    _ensure("--demo", "--username", "demo", "--password", "demo", "--role", "researcher")  # the demo's rule too
    assert get_user_model().objects.get(username="demo").groups.get().name == "researcher"


def test_what_an_assistant_may_read_or_download_names_nobody(study):
    """The statement and the plots are the watchers' (not exports of identifiers)."""
    _take_part(PID, finish=True)
    _take_part(STILL_IN, finish=False)
    assistant = _as("assistant")
    for url in (
        "/dashboard/study/r-study/statement.markdown?download=1",
        "/dashboard/study/r-study/statement.json?download=1",
        "/dashboard/study/r-study/statement.latex?download=1",
        "/api/reports/statement/?study=r-study",
        "/dashboard/plot.svg?studies=r-study",
    ):
        response = assistant.get(url)
        assert response.status_code == 200, url
        assert PID not in response.content.decode() and STILL_IN not in response.content.decode(), url


def test_the_admin_offers_each_role_only_the_actions_it_may(study):
    def actions(role: str) -> set[str]:
        page = _as(role).get("/admin/annotation/study/").content.decode()
        return {
            a for a in ("open_studies", "add_template_attention_checks", "prolific_bonus") if f'value="{a}"' in page
        }

    assert actions("assistant") == set()  # watches: no action changes anything
    assert actions("researcher") == {"open_studies", "add_template_attention_checks"}
    assert actions("pi") == {"open_studies", "add_template_attention_checks", "prolific_bonus"}
