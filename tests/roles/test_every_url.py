"""Every URL pattern of the project, for every role: allowed, 403, or the login page (docs/team.md).

The walk lists the patterns with django.urls.get_resolver, recursively (admin and API included); each must
have a row in ``URLS`` (or, for the admin's pages of a model, a row in ``ADMIN_MODELS``), so a new URL
pattern without a rule fails here until someone says who may reach it.

An answer is ``login`` (a redirect to /admin/login/), ``403``, or ``ok`` (anything else below 500: a page,
a redirect elsewhere, a 400 for the dummy input, a 404 for an id that does not exist, a 405 ...). The table
is written by hand from docs/team.md, not read from the code's permissions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.models import (
    AuditEntry,
    ExportJob,
    ModelRun,
    ProlificAction,
    ProlificCall,
    ProlificEvent,
    ProlificGroup,
    ProlificJob,
    ProlificMessage,
    ProlificSubscription,
    RehearsalJob,
    Response,
    Study,
)
from annotation.services import audit
from tasks_app.models import TrainingSplit
from tests.factories import (
    ConditionFactory,
    ParticipationFactory,
    ResponseFactory,
    StudyFactory,
    make_classification_task,
)
from tests.team import team_member
from tests.worker.conftest import login

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "worker", "assistant", "researcher", "pi", "superuser")
TEAM = ("assistant", "researcher", "pi", "superuser")
RESEARCH = ("researcher", "pi", "superuser")
PI = ("pi", "superuser")
ROOT = ("superuser",)
NOBODY: tuple[str, ...] = ()


def page(*allowed: str) -> dict[str, str]:
    """An HTML page of the team's: anonymous visitors (a worker among them) go to log in."""
    return {r: "ok" if r in allowed else "login" if r in ("anonymous", "worker") else "403" for r in ROLES}


def data(*allowed: str) -> dict[str, str]:
    """JSON (the API, the dashboard's JSON, a POST): 403 for anyone not allowed, signed in or not."""
    return {r: "ok" if r in allowed else "403" for r in ROLES}


def everyone() -> dict[str, str]:
    return {r: "ok" for r in ROLES}


def worker_only() -> dict[str, str]:
    """The worker's session API: only a browser with a participation (the worker cookie) gets in."""
    return {r: "ok" if r == "worker" else "403" for r in ROLES}


def admin_page(*allowed: str) -> dict[str, str]:
    """An admin page: anonymous visitors go to log in; the team's roles get it or 403."""
    return page(*allowed)


@dataclass(frozen=True)
class Case:
    path: str
    expect: dict[str, str]
    method: str = "get"
    body: dict = field(default_factory=dict)


# pattern -> the request made and who may. ``{name}`` in a path is the id of a row ``world`` makes (``refs``):
# real ids, whatever the database's sequences are at (PostgreSQL's do not restart after a rolled-back test).
URLS: dict[str, Case] = {
    # The worker's session API and pages: workers, never the team's roles.
    "api/session/current/": Case("/api/session/current/", worker_only()),
    "api/session/consent/": Case("/api/session/consent/", worker_only(), "post"),
    "api/session/survey/": Case("/api/session/survey/", worker_only(), "post"),
    "api/session/comprehension/": Case("/api/session/comprehension/", worker_only(), "post"),
    "api/session/start/": Case("/api/session/start/", worker_only(), "post"),
    "api/session/submit/": Case("/api/session/submit/", worker_only(), "post"),
    "api/session/skip/": Case("/api/session/skip/", worker_only(), "post"),
    "api/session/progress/": Case("/api/session/progress/", worker_only()),
    "api/session/events/": Case("/api/session/events/", worker_only(), "post"),
    "api/session/items/<int:item_id>/": Case("/api/session/items/{item}/", worker_only()),
    "api/session/items/<int:item_id>/reveal/": Case("/api/session/items/{item}/reveal/", worker_only(), "post"),
    "work/": Case("/work/", worker_only()),  # no participation: a 403 page that says how to join
    "work/consent/": Case("/work/consent/", worker_only(), "post"),
    "work/survey/": Case("/work/survey/", worker_only(), "post"),
    "work/comprehension/": Case("/work/comprehension/", worker_only(), "post"),
    "join/<slug:slug>/": Case("/join/s/", everyone()),
    "hooks/prolific/": Case("/hooks/prolific/", data(), "post"),  # unsigned: 403; Prolific signs, no role
    "jsi18n/<str:language>/": Case("/jsi18n/de/", everyone()),
    "": Case("/", everyone()),
    "favicon.ico": Case("/favicon.ico", everyone()),
    # Previews: every role may.
    "work/preview/<slug:slug>/": Case("/work/preview/s/", page(*TEAM)),
    "work/preview/<slug:slug>/restart/": Case("/work/preview/s/restart/", page(*TEAM), "post"),
    # The dashboard: every role watches; exports by what they hold; Prolific by the operation.
    "dashboard/": Case("/dashboard/", page(*TEAM)),
    "dashboard/study/<slug:slug>/": Case("/dashboard/study/s/", page(*TEAM)),
    "dashboard/live.json": Case("/dashboard/live.json", data(*TEAM)),
    "dashboard/study/<slug:slug>/statement.<str:fmt>": Case("/dashboard/study/s/statement.markdown", page(*TEAM)),
    "dashboard/plot.<str:fmt>": Case("/dashboard/plot.svg", page(*TEAM)),
    "dashboard/study/<slug:slug>/prolific/<str:operation>/": Case("/dashboard/study/s/prolific/bonus/", page(*PI)),
    "dashboard/study/<slug:slug>/prolific-runs/<int:job_id>/": Case(
        "/dashboard/study/s/prolific-runs/{prolific_job}/", page(*PI)
    ),
    "dashboard/study/<slug:slug>/rehearse/": Case(
        "/dashboard/study/s/rehearse/", data(*RESEARCH), "post", {"workers_per_condition": "x"}
    ),
    "dashboard/rehearsals/<int:job_id>.json": Case("/dashboard/rehearsals/{rehearsal_job}.json", data(*TEAM)),
    "dashboard/rehearsals/<int:job_id>/report.<str:fmt>": Case(
        "/dashboard/rehearsals/{rehearsal_job}/report.json", page(*TEAM)
    ),
    "dashboard/export/<str:kind>/": Case("/dashboard/export/annotations-jsonl/?studies=s", page(*RESEARCH)),
    "dashboard/export/<str:kind>/provenance/": Case(
        "/dashboard/export/payments-csv/provenance/?studies=s", page(*RESEARCH)
    ),
    "dashboard/exports/queue/": Case(
        "/dashboard/exports/queue/", page(*RESEARCH), "post", {"kind": "annotators-csv", "studies": "nope"}
    ),
    "dashboard/exports/<int:job_id>/download/": Case("/dashboard/exports/{export_job}/download/", page(*RESEARCH)),
    "dashboard/exports/<int:job_id>/provenance/": Case("/dashboard/exports/{export_job}/provenance/", page(*RESEARCH)),
    # The researchers' API.
    "api/schema/": Case("/api/schema/", everyone()),  # the API's description: public, as the code is
    "api/docs/": Case("/api/docs/", everyone()),
    "api/^studies/$": Case("/api/studies/", data(*TEAM)),
    "api/^studies/(?P<pk>[^/.]+)/$": Case("/api/studies/{study}/", data(*RESEARCH), "patch", {"name": "renamed"}),
    "api/^studies/standard-design/$": Case("/api/studies/standard-design/", data(*RESEARCH), "post"),
    "api/^studies/(?P<pk>[^/.]+)/counts/$": Case("/api/studies/{study}/counts/", data(*TEAM)),
    "api/^studies/(?P<pk>[^/.]+)/launch-check/$": Case("/api/studies/{study}/launch-check/", data(*TEAM)),
    "api/^studies/(?P<pk>[^/.]+)/status/$": Case(
        "/api/studies/{study}/status/", data(*PI), "post", {"status": "open", "override_blockers": True}
    ),
    "api/studies/<int:id>/prolific/<str:operation>/": Case("/api/studies/{study}/prolific/review/", data(*PI), "post"),
    "api/participants/export/": Case("/api/participants/export/?task=t&format=prolific", data(*RESEARCH)),
    "api/^conditions/$": Case("/api/conditions/", data(*TEAM)),
    "api/^conditions/(?P<pk>[^/.]+)/$": Case("/api/conditions/{condition}/", data(*TEAM)),
    "api/^participations/$": Case("/api/participations/", data(*RESEARCH)),
    "api/^participations/(?P<pk>[^/.]+)/$": Case("/api/participations/{participation}/", data(*RESEARCH)),
    "api/^participations/(?P<pk>[^/.]+)/override/$": Case(
        "/api/participations/{participation}/override/", data(*PI), "post", {"admit": True, "reason": "checked by hand"}
    ),
    "api/^workers/$": Case("/api/workers/", data(*RESEARCH)),
    "api/^workers/(?P<pk>[^/.]+)/$": Case("/api/workers/{worker}/", data(*RESEARCH)),
    "api/^workers/(?P<pk>[^/.]+)/block/$": Case("/api/workers/{worker}/block/", data(*PI), "post"),
    "api/^workers/(?P<pk>[^/.]+)/unblock/$": Case("/api/workers/{worker}/unblock/", data(*PI), "post"),
    "api/^attention-checks/$": Case("/api/attention-checks/", data(*TEAM)),
    "api/^attention-checks/generate/$": Case("/api/attention-checks/generate/", data(*RESEARCH), "post"),
    "api/^attention-checks/report/$": Case("/api/attention-checks/report/?study=s", data(*RESEARCH)),
    "api/^attention-checks/(?P<pk>[^/.]+)/$": Case("/api/attention-checks/999/", data(*TEAM)),
    "api/reports/table/": Case("/api/reports/table/?studies=s", data(*RESEARCH)),  # names the annotators
    "api/reports/annotators/": Case("/api/reports/annotators/?studies=s", data(*RESEARCH)),
    "api/reports/statement/": Case("/api/reports/statement/?study=s", data(*TEAM)),
    "api/reports/exports/": Case("/api/reports/exports/", data(*RESEARCH), "post", {"kind": "payments-csv"}),
    "api/reports/exports/<int:job_id>/": Case("/api/reports/exports/{export_job}/", data(*TEAM)),
    "api/^.*$": Case("/api/nothing-here/", everyone()),  # the API's 404, to anyone
    # The admin's own pages.
    "admin/": Case("/admin/", admin_page(*TEAM)),
    "admin/login/": Case("/admin/login/", everyone()),
    "admin/logout/": Case("/admin/logout/", everyone()),  # GET: 405 (a logout is a POST)
    "admin/password_change/": Case("/admin/password_change/", admin_page(*TEAM)),
    "admin/password_change/done/": Case("/admin/password_change/done/", admin_page(*TEAM)),
    "admin/autocomplete/": Case("/admin/autocomplete/", admin_page()),  # no admin of ours uses it: 403
    "admin/jsi18n/": Case("/admin/jsi18n/", admin_page(*TEAM)),
    "admin/r/<path:content_type_id>/<path:object_id>/": Case("/admin/r/{study_type}/{study}/", admin_page(*TEAM)),
    "admin/^(?P<app_label>auth|tasks_app|annotation)/$": Case("/admin/annotation/", admin_page(*TEAM)),
    "admin/(?P<url>.*)$": Case("/admin/nothing-here/", admin_page(*TEAM)),
    "admin/auth/user/<id>/password/": Case("/admin/auth/user/{superuser}/password/", admin_page(*ROOT)),
    # StudyAdmin's own pages.
    "admin/annotation/study/standard-design/": Case("/admin/annotation/study/standard-design/", page(*RESEARCH)),
    "admin/annotation/study/<int:pk>/status/": Case(
        "/admin/annotation/study/{study}/status/", page(*RESEARCH), "post", {"to_status": "paused"}
    ),
    "admin/annotation/study/participants/<int:task_id>/<str:fmt>/": Case(
        "/admin/annotation/study/participants/{task}/prolific/", page(*RESEARCH)
    ),
    "admin/annotation/study/<int:study_id>/prolific/<str:operation>/": Case(
        "/admin/annotation/study/{study}/prolific/bonus/", page(*PI)
    ),
    "admin/annotation/study/<int:study_id>/prolific-runs/<int:job_id>/": Case(
        "/admin/annotation/study/{study}/prolific-runs/{prolific_job}/", page(*PI)
    ),
    "admin/annotation/study/<int:study_id>/prolific-message/": Case(
        "/admin/annotation/study/{study}/prolific-message/",
        page(*PI),  # the dry run lists the participants
    ),
    # Messages and withdrawals: the PI's.
    "api/studies/<int:id>/prolific-messages/": Case(
        "/api/studies/{study}/prolific-messages/", data(*PI), "post", {"kind": "bulk", "text": "Thank you."}
    ),
    "api/participants/withdraw/": Case(
        "/api/participants/withdraw/", data(*PI), "post", {"platform": "prolific", "id": "nobody-here"}
    ),
}

# The admin's pages of each model: who may see (list, page, history), add and delete (docs/team.md; the
# PI holds every permission of both apps, the superuser all). Where the admin allows nobody (a participation
# is never added by hand), NOBODY: the superuser is refused too.
ADMIN_MODELS: dict[str, dict[str, tuple[str, ...]]] = {
    "auth.group": {"view": ROOT, "add": ROOT, "delete": ROOT},
    "auth.user": {"view": ROOT, "add": ROOT, "delete": ROOT},
    "tasks_app.task": {"view": TEAM, "add": PI, "delete": PI},
    "tasks_app.example": {"view": TEAM, "add": NOBODY, "delete": PI},
    "tasks_app.exampleset": {"view": TEAM, "add": NOBODY, "delete": PI},
    "tasks_app.trainingsplit": {"view": TEAM, "add": NOBODY, "delete": PI},
    "annotation.study": {"view": TEAM, "add": RESEARCH, "delete": PI},
    "annotation.exportjob": {"view": TEAM, "add": RESEARCH, "delete": PI},
    "annotation.modelrun": {"view": TEAM, "add": RESEARCH, "delete": PI},
    "annotation.worker": {"view": RESEARCH, "add": NOBODY, "delete": PI},
    "annotation.participation": {"view": RESEARCH, "add": NOBODY, "delete": NOBODY},
    "annotation.prolificaction": {"view": RESEARCH, "add": NOBODY, "delete": NOBODY},
    "annotation.prolificcall": {"view": RESEARCH, "add": NOBODY, "delete": NOBODY},
    "annotation.prolificgroup": {"view": RESEARCH, "add": NOBODY, "delete": PI},
    "annotation.prolificjob": {"view": RESEARCH, "add": NOBODY, "delete": NOBODY},
    "annotation.prolificevent": {"view": RESEARCH, "add": NOBODY, "delete": NOBODY},
    "annotation.prolificsubscription": {"view": RESEARCH, "add": NOBODY, "delete": NOBODY},
    "annotation.prolificmessage": {"view": PI, "add": NOBODY, "delete": NOBODY},
    "annotation.auditentry": {"view": PI, "add": NOBODY, "delete": NOBODY},  # read-only, the PI's
}
ADMIN_PAGES = {  # the tail of each model pattern -> which right it needs
    "": "view",
    "add/": "add",
    "<path:object_id>/history/": "view",
    "<path:object_id>/delete/": "delete",
    "<path:object_id>/change/": "view",
    "<path:object_id>/": "any",  # a redirect to the change page, for anyone on the team
}


def walk(resolver: URLResolver, prefix: str = ""):
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            yield from walk(pattern, prefix + str(pattern.pattern))
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern)


def admin_case(pattern: str, ids: dict[str, int]) -> Case | None:
    for model, rights in ADMIN_MODELS.items():
        app, name = model.split(".")
        base = f"admin/{app}/{name}/"
        tail = pattern.removeprefix(base)
        if pattern.startswith(base) and tail in ADMIN_PAGES:
            need = ADMIN_PAGES[tail]
            allowed = TEAM if need == "any" else rights[need]
            return Case(
                base.replace("admin/", "/admin/", 1) + tail.replace("<path:object_id>", str(ids[model])), page(*allowed)
            )
    return None


def rule_for(pattern: str, ids: dict[str, int]) -> Case | None:
    return URLS.get(pattern) or admin_case(pattern, ids)


def answer(response) -> str:
    assert response.status_code < 500, response
    if response.status_code in (301, 302) and "/admin/login/" in response.get("Location", ""):
        return "login"
    return "403" if response.status_code == 403 else "ok"


@pytest.fixture
def world(settings):
    """One of everything the patterns name: study ``s`` of task ``t``, a worker's participation with an item,
    a job of each kind, and a client per role; with the ids the paths' ``{name}`` fields take (``refs``) and
    each admin model's row (``ids``)."""
    settings.PROLIFIC_API_TOKEN = ""  # the integration off: a Prolific POST answers 409, never a call
    task = make_classification_task(slug="t", n_test=2, n_train=10)
    study = StudyFactory(task=task, slug="s", workers_per_condition=2)
    ConditionFactory(study=study, shots=0)
    participation = ParticipationFactory(study=study, condition=study.conditions.get())
    item = ResponseFactory(  # the worker's first test item, laid out and not answered yet
        participation=participation,
        example=task.examples.first(),
        position=0,
        status=Response.Status.PENDING,
        submitted_at=None,
        confidence=None,
    )
    superuser = get_user_model().objects.create_superuser("root", password="pw")
    ExportJob.objects.create(kind="annotations-jsonl", params={"studies": [study.pk]})
    RehearsalJob.objects.create(study=study)
    ProlificJob.objects.create(study=study, operation="bonus")
    run = ModelRun.objects.create(task=task, name="m", predictions={})
    action = ProlificAction.objects.create(participation=participation, kind="bonus", action="BONUS", status="done")
    call = ProlificCall.objects.create(action=action, method="POST", path="/x/", ok=True)
    group = ProlificGroup.objects.create(task=task, group_id="g", name="g")
    event = ProlificEvent.objects.create(event_id="e", source="webhook", event_type="x", resource_id="r")
    sub = ProlificSubscription.objects.create(workspace_id="w", event_type="x", target_url="https://example.org/")
    message = ProlificMessage.objects.create(study=study, kind="bulk", key="k", body="Thank you.", sent_by="pi")
    entry = audit.record(actor="test", action=AuditEntry.Action.STUDY_SETTINGS, study=study)
    ids = {
        "auth.group": Group.objects.get(name="assistant").pk,
        "auth.user": superuser.pk,
        "tasks_app.task": task.pk,
        "tasks_app.example": task.examples.first().pk,
        "tasks_app.exampleset": task.example_sets.first().pk,
        "tasks_app.trainingsplit": TrainingSplit.objects.filter(task=task).first().pk,
        "annotation.study": study.pk,
        "annotation.exportjob": ExportJob.objects.get().pk,
        "annotation.modelrun": run.pk,
        "annotation.worker": participation.worker.pk,
        "annotation.participation": participation.pk,
        "annotation.prolificaction": action.pk,
        "annotation.prolificcall": call.pk,
        "annotation.prolificgroup": group.pk,
        "annotation.prolificjob": ProlificJob.objects.get().pk,
        "annotation.prolificevent": event.pk,
        "annotation.prolificsubscription": sub.pk,
        "annotation.prolificmessage": message.pk,
        "annotation.auditentry": entry.pk,
    }
    refs = {
        "study": study.pk,
        "study_type": ContentType.objects.get_for_model(Study).pk,
        "task": task.pk,
        "condition": study.conditions.get().pk,
        "participation": participation.pk,
        "item": item.pk,
        "worker": participation.worker.pk,
        "superuser": superuser.pk,
        "export_job": ids["annotation.exportjob"],
        "rehearsal_job": RehearsalJob.objects.get().pk,
        "prolific_job": ids["annotation.prolificjob"],
    }
    clients = {"anonymous": Client(), "worker": login(Client(), participation)}
    for role in ("assistant", "researcher", "pi"):
        clients[role] = Client()
        clients[role].force_login(team_member(role, role))
    clients["superuser"] = Client()
    clients["superuser"].force_login(superuser)
    return clients, ids, refs


def test_every_url_pattern_answers_each_role_as_the_table_says(world):
    clients, ids, refs = world
    patterns = list(walk(get_resolver()))
    missing, wrong, seen = [], [], set()
    for pattern in patterns:
        case = rule_for(pattern, ids)
        if case is None:
            missing.append(pattern)
            continue
        seen.add(pattern)
        path = case.path.format(**refs)
        for role in ROLES:  # least right first: a request that changes something comes from the allowed last
            send = getattr(clients[role], case.method)
            if case.method == "get":
                response = send(path)
            elif path.startswith(("/api/", "/dashboard/live")):
                response = send(path, json.dumps(case.body), content_type="application/json")
            else:
                response = send(path, case.body)
            got = answer(response)
            if got != case.expect[role]:
                wrong.append(f"{pattern} {case.method.upper()} {path} as {role}: {got}, expected {case.expect[role]}")
    assert not missing, "URL patterns without a rule (add them to URLS):\n" + "\n".join(missing)
    assert not wrong, "\n".join(wrong)
    assert not set(URLS) - seen, f"rules for patterns that no longer exist: {sorted(set(URLS) - seen)}"


def test_a_new_pattern_without_a_rule_is_named(settings):
    settings.ROOT_URLCONF = "tests.roles.extra_urls"
    ids = dict.fromkeys(ADMIN_MODELS, 1)
    assert [p for p in walk(get_resolver()) if rule_for(p, ids) is None] == ["dashboard-new/"]
