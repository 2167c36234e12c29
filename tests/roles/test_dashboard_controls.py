"""Each role finds on the staff pages only the controls it may use, and every one it may (docs/team.md).

For each role, the dashboard's pages (the overview, a draft study's page, a piloting one's, and the Prolific
dry runs they link to) and the studies' admin pages (the list, each study's page) are read as that role.
Every link on them is followed (once per path) and every form sent as a browser would (its fields as
shown; each submit button; each checkbox ticked; each option of each select), and none may answer with a
refusal (403, or the login page). The answers come from the real URL resolver and each view's own check,
not from what the pages test before showing a control. Then the role-bound controls found are compared
with the lists below, written by hand from docs/team.md; and where a control is left out, its note is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

import pytest
from django.test import Client
from django.urls import Resolver404, resolve

from annotation.models import ExportJob, Study
from annotation.reporting.exports import EXPORT_KINDS, IDENTIFIER_KINDS, export_job_create, export_job_run
from annotation.services.studies import studies
from tests.prolific.conftest import prolific_on, standin  # noqa: F401 (fixtures)
from tests.reporting.builders import add_annotator, gold_answers, make_study
from tests.reporting.conftest import sst2  # noqa: F401 (fixture)
from tests.team import team_member

pytestmark = pytest.mark.django_db

# --- What each role must find: the role-bound controls, by hand from docs/team.md ------------------------

RESULTS = sorted(set(EXPORT_KINDS) - IDENTIFIER_KINDS)  # IDENTIFIER_KINDS is checked file by file in test_roles
EVERY_KIND = sorted(EXPORT_KINDS)
DONE = ("table-csv", "payments-csv")  # the export jobs done, whose files the pages link to (``pages``)


def exports(kinds: list[str]) -> set[str]:
    """Download now, queue a job, and a done job's file and provenance, of each kind of ``kinds``."""
    done = [kind for kind in DONE if kind in kinds]
    return {
        *(f"GET dashboard:export {kind}" for kind in kinds),
        *(f"POST dashboard:export-queue {kind}" for kind in kinds),
        *(f"GET dashboard:export-download {kind}" for kind in done),
        *(f"GET dashboard:export-job-provenance {kind}" for kind in done),
    }


ASSISTANT_MAY = {*exports(RESULTS), "GET worker:preview"}
RESEARCHER_MAY = {
    *exports(EVERY_KIND),
    "GET worker:preview",
    "POST dashboard:rehearse",
    "GET dashboard:prolific group",
    "GET dashboard:prolific places",
    "POST dashboard:prolific group",  # the dry run's "Run it"
    "POST dashboard:prolific places",
    "POST admin:annotation_study_status",  # open as pilot, open, open the rest, pause, close
    "GET admin:annotation_study_standard_design",
}
EXPECTED = {
    "assistant": ASSISTANT_MAY,
    "researcher": RESEARCHER_MAY,
    "pi": {
        *RESEARCHER_MAY,
        "GET dashboard:prolific review",
        "GET dashboard:prolific bonus",
        "POST dashboard:prolific review",
        "POST dashboard:prolific bonus",
        "POST admin:annotation_study_status override_blockers",  # the launch check's override
    },
}
# The URL names whose controls depend on the role: the found ones must be exactly the expected ones.
ROLE_BOUND = {
    "dashboard:export",
    "dashboard:export-queue",
    "dashboard:export-download",
    "dashboard:export-job-provenance",
    "dashboard:rehearse",
    "dashboard:prolific",
    "worker:preview",
    "admin:annotation_study_status",
    "admin:annotation_study_standard_design",
}
# Forms whose fields are settings, not operations: sent once per button (Django's admin checks the model's
# change permission, whatever the fields say).
SETTINGS_FORMS = {"admin:annotation_study_change"}
# Instead of a control a role may not use, a note of who may.
NOTES = {
    "assistant": [
        "Rehearsing is for a researcher or a principal investigator.",
        "Exports that name participants",
        "pay bonuses (a principal investigator)",
        "opening the rest is for a researcher or a principal investigator",
    ],
    "researcher": [
        "pay bonuses (a principal investigator)",
        "opening despite the blocker",
    ],
    "pi": [],
}

# --- The pages' controls, read from their HTML -------------------------------------------------------------


@dataclass
class Form:
    page: str
    action: str
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list)  # as a browser sends them untouched
    checkboxes: list[tuple[str, str]] = field(default_factory=list)  # those not ticked
    selects: dict[str, list[str]] = field(default_factory=dict)  # each select's options
    buttons: list[tuple[str, str]] = field(default_factory=list)  # submit buttons (name "" when unnamed)

    def shape(self) -> tuple:
        """What the form sends to where, the fields' values aside: the export form of the overview and of a
        study's page (its study in a hidden field) is one control, sent once."""
        names = tuple(name for name, _ in self.fields)
        return (
            self.method,
            urlsplit(self.action).path,
            names,
            str(self.checkboxes),
            str(self.selects),
            str(self.buttons),
        )

    def variants(self) -> list[list[tuple[str, str]]]:
        """The data of each way to send the form: each button; each checkbox ticked; each other option (but
        for an admin page's form of the model, whose fields are the study's settings, not what it does)."""
        first = [self.buttons[0]] if self.buttons[0][0] else []
        sent = [self.fields + ([button] if button[0] else []) for button in self.buttons]
        if resolve(urlsplit(self.action).path).view_name in SETTINGS_FORMS:
            return sent
        sent += [self.fields + [box] + first for box in self.checkboxes]
        for name, options in self.selects.items():
            others = [(n, v) for n, v in self.fields if n != name]
            sent += [others + [(name, option)] + first for option in options]
        return sent


class Controls(HTMLParser):
    """The links and the forms (with a submit button) of a page."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.page, self.links, self.forms = page, [], []
        self.form: Form | None = None
        self.select: tuple[str, list[str], list[str]] | None = None  # name, options, the selected ones
        self.option: list | None = None  # [value or None, text]
        self.textarea: list | None = None  # [name, text]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "form":
            self.form = Form(self.page, a.get("action") or self.page, (a.get("method") or "get").lower())
        elif self.form is None:
            return
        elif tag == "input":
            kind, name = a.get("type", "text").lower(), a.get("name", "")
            if kind == "submit":
                self.form.buttons.append((name, a.get("value", "")))
            elif not name or kind in ("button", "reset", "file", "image"):
                return
            elif kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.form.fields.append((name, a.get("value", "on")))
                elif kind == "checkbox":
                    self.form.checkboxes.append((name, a.get("value", "on")))
            else:
                self.form.fields.append((name, a.get("value", "")))
        elif tag == "button" and a.get("type", "submit").lower() == "submit":
            self.form.buttons.append((a.get("name", ""), a.get("value", "")))
        elif tag == "select" and a.get("name"):
            self.select = (a["name"], [], [])
        elif tag == "option" and self.select is not None:
            self._end_option()
            self.option = [a.get("value") if "value" in a else None, ""]
            if "selected" in a:
                self.select[2].append(len(self.select[1]))
        elif tag == "textarea" and a.get("name"):
            self.textarea = [a["name"], ""]

    def handle_data(self, data: str) -> None:
        if self.option is not None:
            self.option[1] += data
        if self.textarea is not None:
            self.textarea[1] += data

    def _end_option(self) -> None:
        if self.option is not None and self.select is not None:
            value, text = self.option
            self.select[1].append(text.strip() if value is None else value)
        self.option = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "option":
            self._end_option()
        elif tag == "select" and self.select is not None and self.form is not None:
            self._end_option()
            name, options, selected = self.select
            if options:
                self.form.fields.append((name, options[selected[0] if selected else 0]))
                self.form.selects[name] = options
            self.select = None
        elif tag == "textarea" and self.textarea is not None and self.form is not None:
            self.form.fields.append((self.textarea[0], self.textarea[1].removeprefix("\n")))
            self.textarea = None
        elif tag == "form" and self.form is not None:
            if self.form.buttons:  # a form without a button is nothing to press (an admin page seen only)
                self.forms.append(self.form)
            self.form = None


LOG_OUT = "/admin/logout/"  # the admin's header has it on every page: no role's control, and it ends the test


def _internal(href: str, page: str) -> str | None:
    """The URL a link or form goes to on this site, or None (another site, an anchor, a static file, log out)."""
    url = urljoin(page, href)
    parts = urlsplit(url)
    if parts.netloc not in ("", "testserver") or href.startswith("#") or parts.path.startswith("/static/"):
        return None
    if parts.path == LOG_OUT:
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _refused(response) -> bool:
    """The refusal: 403, or the login page (what a refusal answers a visitor who is not signed in)."""
    return response.status_code == 403 or "/admin/login/" in response.get("Location", "")


PAGES = {  # the pages whose controls are collected: the dashboard's, the studies' admin list and pages
    "dashboard:index",
    "dashboard:study",
    "dashboard:prolific",
    "dashboard:prolific-job",
    "admin:annotation_study_changelist",
    "admin:annotation_study_change",
}


def _read(path: str) -> bool:
    try:
        return resolve(path).view_name in PAGES
    except Resolver404:
        return False


def _control(method: str, url: str, data: list[tuple[str, str]] = ()) -> str | None:
    """A role-bound control in words ("POST dashboard:rehearse", "GET dashboard:export payments-csv")."""
    match = resolve(urlsplit(url).path)
    if match.view_name not in ROLE_BOUND:
        return None
    word = match.kwargs.get("kind") or match.kwargs.get("operation") or dict(data).get("kind")
    if "job_id" in match.kwargs:  # an export job's file: what it holds is its kind's
        word = ExportJob.objects.get(pk=match.kwargs["job_id"]).kind
    if match.view_name == "admin:annotation_study_status" and ("override_blockers", "1") in data:
        word = "override_blockers"
    return " ".join(p for p in (method.upper(), match.view_name, word) if p)


def _multi(data: list[tuple[str, str]]) -> dict[str, list[str]]:
    """A form's data as the test client posts it: each name with its values, in order."""
    values: dict[str, list[str]] = {}
    for name, value in data:
        values.setdefault(name, []).append(value)
    return values


@dataclass
class Crawl:
    links: dict[str, str] = field(default_factory=dict)  # path -> a URL of it, and the page it is on
    on: dict[str, str] = field(default_factory=dict)
    forms: list[Form] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


def crawl(client: Client, start: list[str]) -> Crawl:
    """Read the pages from ``start`` on, following links to more pages that ``_read`` takes."""
    found, queue, seen = Crawl(), list(start), set()
    while queue:
        page = queue.pop(0)
        if urlsplit(page).path in seen:
            continue
        seen.add(urlsplit(page).path)
        response = client.get(page)
        if page not in start and response.status_code != 200:
            continue  # a link's answer is checked with the others
        assert response.status_code == 200, (page, response.status_code)
        html = response.content.decode()
        found.text.append(html)
        controls = Controls(page)
        controls.feed(html)
        known = {form.shape() for form in found.forms}
        found.forms += [form for form in controls.forms if form.shape() not in known]
        for href in controls.links:
            url = _internal(href, page)
            if url is None:
                continue
            path = urlsplit(url).path  # a link's answer to a role depends on its path, not its query
            found.links.setdefault(path, url)
            found.on.setdefault(path, page)
            if _read(path) and path not in seen:
                queue.append(url)
    return found


# --- The studies the pages show ------------------------------------------------------------------------------


@pytest.fixture
def pages(sst2, prolific_on):  # noqa: F811
    """A draft with a pilot share and a launch blocker (no posted reward), a piloting study with a worker
    done, an export of each sort done: the most controls the pages have."""
    draft = make_study(
        sst2, shots=(0, 10), slug="draft", status=Study.Status.DRAFT, base_reward=None, pilot_workers_per_condition=1
    )
    piloting = make_study(sst2, shots=(0, 10), slug="piloting", status=Study.Status.DRAFT, workers_per_condition=3)
    studies.study_update(study=piloting, pilot_workers_per_condition=1)
    studies.change_status(study=piloting, to_status=Study.Status.OPEN, pilot=True)
    add_annotator(piloting, 0, answers=gold_answers(sst2))
    for kind in DONE:
        export_job_run(job_id=export_job_create(kind=kind, study_refs=[piloting.slug]).pk)
    assert set(ExportJob.objects.values_list("status", flat=True)) == {"done"}
    return [
        "/dashboard/",
        "/dashboard/study/draft/",
        "/dashboard/study/piloting/",
        f"/admin/annotation/study/{draft.pk}/change/",
        f"/admin/annotation/study/{piloting.pk}/change/",
    ]


@pytest.mark.parametrize("role", ["assistant", "researcher", "pi"])
def test_each_role_finds_only_controls_it_may_use_and_all_of_those(role, pages):
    client = Client()
    client.force_login(team_member(role, role))
    found = crawl(client, pages)
    shown: set[str] = set()

    refused = []
    for path, url in found.links.items():
        if (control := _control("get", url)) is not None:
            shown.add(control)
        if _refused(client.get(url)):
            refused.append(f"link {url} on {found.on[path]}")
    for form in found.forms:
        url = _internal(form.action, form.page)
        if url is None:
            continue
        for data in form.variants():
            if (control := _control(form.method, url, data)) is not None:
                shown.add(control)
            if form.method == "post":
                response = client.post(url, _multi(data))
            else:
                response = client.get(f"{urlsplit(url).path}?{urlencode(data)}")
            if _refused(response):
                sent = [(name, value) for name, value in data if name != "csrfmiddlewaretoken"]
                refused.append(f"{form.method.upper()} {url} {sent} on {form.page}")
    assert not refused, f"{role} is shown controls that refuse them:\n" + "\n".join(refused)
    assert client.get("/dashboard/").status_code == 200  # still signed in: every answer above was the role's

    assert shown == EXPECTED[role], (
        f"missing: {sorted(EXPECTED[role] - shown)}; not expected: {sorted(shown - EXPECTED[role])}"
    )
    text = "\n".join(found.text)
    for note in NOTES[role]:
        assert note in text, note
