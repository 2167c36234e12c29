"""This project as a peer of the span-annotation harness in ../shared/peers/ (``--peer human-perf``).

The harness (``bench_peers.py``, never copied here) creates a project with labels PER/ORG/LOC and
its text items, then times (c) a next-item flow, (a) sequential submissions, (b) submissions from
``--threads`` client threads, and (d) exports. This file maps its concepts onto ours::

    python3 ../shared/peers/bench_peers.py --adapter-file bench/peers_adapter.py --peer human-perf \
        --base-url http://127.0.0.1:PORT --username admin --password pass --n-seq 100 --n-conc 200

``bench/peers.py`` starts the servers, runs it next to doccano and prints the ratios.

How the harness's phases map onto this project's study/worker model
-------------------------------------------------------------------
- **project** = a new span task (multiple spans, question types PER/ORG/LOC) plus a study of it
  with a single 0-shot condition, opened, fixed test order: workers go straight to the test step.
  A task has one test set and a worker takes part in a task once, so every harness project
  gets a task of its own. ``create_project`` only names them; the work is in ``create_items``.
- **items** = that task's test set, in the harness's order. ``create_items`` writes them as
  unified-format JSONL (context = the sentence, question = the label's question, gold = the
  item's span) and runs ``manage.py import_tasks`` (there is no import over HTTP), then
  creates and opens the study over the admin API (``/api/studies/``). The harness's item id
  is the item's position in the test set (0..N-1), which is also its position in every
  worker's test step.
- **session** (one per client thread) = a crowd worker. Workers are laid out in advance, at
  set-up and outside every timed call: each one takes part through the entry link ``/join/<slug>/?worker_id=``
  (the signed ``worker`` cookie), ``GET /api/session/current/`` (the CSRF cookie) and ``POST
  /api/session/start/``, which lays out its test step. Each has its own ``requests.Session``
  holding only the worker and CSRF cookies, as a browser would (the admin's session cookie
  never travels with a worker's request). A harness session takes a free worker at its first
  worker call and keeps it; when the harness drops the session, the worker goes back to the pool.
- **submit(s, project, item_id, item)** = exactly one ``POST /api/session/submit/`` by the
  session's worker on *its current item*, with one span ``{start, end, text}`` and a confidence:
  the server checks that it is the worker's current item, validates the span against the
  context, scores it with S1, locks the answer (once, never changed), stores the span and
  returns the next item, whose id the worker keeps for its next submission (no other request).
  Our protocol makes every worker answer its test step in order and each item once, so the item
  answered is the worker's current one. It is the harness's ``item_id`` whenever the two
  coincide, and the harness's own gold span of the item at that position otherwise. In (c) and
  (a) they always coincide: one worker answers positions 0, 1, 2, ... and the sequential phase
  takes over the next-item flow's worker where it stopped. In (b), 16 threads take item ids from
  one shared iterator, so thread k's ids are not consecutive; its worker answers its own items
  in order (the first ~N/16 positions of its step), so each thread's worker is on a different
  sentence from the id the harness named. Every submission is still one real, validated,
  scored and locked answer with one span, and the export counts them. The export's
  ``submits_on_named_item`` and ``submits_on_own_current_item`` say how often each case happened.
- **next_item** = ``GET /api/session/current/`` (what the worker page loads: the current item,
  marked shown); its position is the harness's item id. **complete_item** does nothing: the
  submission itself locks the answer and moves the worker on.
- **export** = the asynchronous export job of the reports API, like doccano's: ``POST
  /api/reports/exports/`` (kind ``annotations-jsonl``, the study), poll the job's status URL,
  download the file. Its lines are every response row of the study (the reproducibility header
  first, then answered and still-pending rows of each worker); ``records`` counts the answered
  ones, which must equal the submissions made, and ``lines`` all of them. Every worker's step is
  laid out in full, so the (b) project's export carries ``--threads`` x N rows for N answers
  (32,000 lines at the harness's defaults) where doccano's carries N: export B is not like for
  like.

Set-up outside HTTP needs the server's settings: the harness must run with the server's
environment (``DJANGO_SETTINGS_MODULE``, ``DATABASE_URL``, ``SECRET_KEY``, ...) so that
``manage.py import_tasks`` writes to the server's database. ``HUMAN_PERF_PYTHON`` names the
interpreter with Django (default: the repository's ``.venv/bin/python``).
``HUMAN_PERF_POOL`` overrides the number of workers laid out per project (default: 2 for the
harness's ``-seq`` project, ``--threads`` for its ``-conc`` one, ``--threads`` + 2 otherwise).
``--username``/``--password`` are an admin (superuser) account of the server.
"""

# No `from __future__ import annotations`: the harness loads this file without putting it in
# sys.modules, and dataclasses then cannot resolve string annotations.
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from bench_peers import REQUEST_TIMEOUT, Adapter, HTTPError, Item, Project, log, register

REPO = Path(__file__).resolve().parent.parent

# The questions the CLUES NER tasks ask (tasks_app.catalog); other labels get one of the same shape.
QUESTIONS = {
    "PER": "List all the people names in the context",
    "ORG": "List all the organizations in the context",
    "LOC": "List all the locations in the context",
}
CONFIDENCE = 4  # the 1..5 scale's "agree": every answer needs one


def _question(label: str) -> str:
    return QUESTIONS.get(label, f"List all the {label} names in the context")


def _python() -> str:
    configured = os.environ.get("HUMAN_PERF_PYTHON")
    if configured:
        return configured
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


@dataclass(eq=False)
class Worker:
    """One crowd worker: its own cookie jar and connection, and where it is in its test step."""

    external_id: str
    http: requests.Session
    item_pk: int | None = None  # the Response id of its current item
    position: int | None = None  # that item's position in the test step; None once it finished


@dataclass
class StudyState:
    """What the adapter knows about one harness project (a task and its study)."""

    slug: str
    name: str
    labels: list[str]
    pool_size: int
    study_id: int | None = None
    items: list[Item] = field(default_factory=list)
    free: list[Worker] = field(default_factory=list)
    joined: int = 0
    inline_joins: int = 0
    submitted: int = 0
    on_named_item: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@register("human-perf")
class HumanPerfAdapter(Adapter):
    supports_next = True

    # --- auth ------------------------------------------------------------------------------

    def login(self) -> None:
        """Log the admin in through the admin's login form (the session cookie and CSRF token)."""
        s = requests.Session()
        self.check(s.get(self.url("/admin/login/"), timeout=REQUEST_TIMEOUT), 200)
        r = s.post(
            self.url("/admin/login/"),
            data={
                "username": self.opts.username,
                "password": self.opts.password,
                "csrfmiddlewaretoken": s.cookies.get("csrftoken", ""),
                "next": "/admin/",
            },
            allow_redirects=False,
            timeout=REQUEST_TIMEOUT,
        )
        if r.status_code != 302 or "sessionid" not in s.cookies:
            raise SystemExit(f"human-perf: admin login failed for {self.opts.username!r} (HTTP {r.status_code})")
        self.admin_cookies = s.cookies.get_dict()
        s.close()

    def new_session(self) -> requests.Session:
        """An admin session; the first worker call binds a worker to it (see Worker)."""
        s = requests.Session()
        s.cookies.update(self.admin_cookies)
        s.headers["X-CSRFToken"] = self.admin_cookies.get("csrftoken", "")
        return s

    def server_version(self, s: requests.Session) -> str | None:
        try:
            r = s.get(self.url("/api/schema/"), params={"format": "json"}, timeout=REQUEST_TIMEOUT)
            return "human-perf " + r.json()["info"]["version"]
        except Exception:  # informational only
            return None

    # --- set-up: task, test set, study, workers --------------------------------------------

    def create_project(self, s: requests.Session, name: str, labels) -> Project:
        slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:40] + "-" + secrets.token_hex(3)
        override = os.environ.get("HUMAN_PERF_POOL")
        if override:
            pool = int(override)
        elif name.endswith("-seq"):
            pool = 2  # (c) then (a): one worker, and one spare
        elif name.endswith("-conc"):
            pool = self.opts.threads
        else:
            pool = self.opts.threads + 2
        state = StudyState(slug=slug, name=name, labels=list(labels), pool_size=max(1, pool))
        return Project(slug, {"state": state})

    def create_items(self, s: requests.Session, project: Project, items: list[Item], deadline: float):
        state: StudyState = project.extra["state"]
        state.items = list(items)
        self.import_test_set(state, deadline)
        body = {
            "slug": state.slug,
            "name": state.name,
            "task": state.slug,
            "shots": [0],
            # a few more slots than laid-out workers, in case a session has to join during a phase
            "workers_per_condition": state.pool_size + 4,
            "base_reward": "0.00",  # paid by the hour: the launch check needs the posted reward stated
        }
        study = self.check(s.post(self.url("/api/studies/"), json=body, timeout=REQUEST_TIMEOUT), 201).json()
        state.study_id = study["id"]
        status_url = self.url(f"/api/studies/{state.study_id}/status/")
        self.check(s.post(status_url, json={"status": "open"}, timeout=REQUEST_TIMEOUT), 200)
        for _ in range(state.pool_size):
            if time.monotonic() > deadline:
                break
            state.free.append(self.join(state))
        return list(enumerate(state.items))  # the harness's item id is the test position

    def import_test_set(self, state: StudyState, deadline: float) -> None:
        """Write the items as unified-format JSONL and import them with ``manage.py import_tasks``."""
        with tempfile.TemporaryDirectory(prefix="human-perf-peers-") as folder:
            path = Path(folder) / f"{state.slug}_test.jsonl"
            with open(path, "w", encoding="utf-8") as f:
                for position, it in enumerate(state.items):
                    line = {
                        "id": f"{state.slug}-{position}",
                        "context": it.text,
                        "question": _question(it.label),
                        "answer": [{"text": it.text[it.start : it.end], "answer_start": it.start}],
                    }
                    f.write(json.dumps(line, ensure_ascii=False) + "\n")
            command = [_python(), str(REPO / "manage.py"), "import_tasks", str(path), "--task", state.slug]
            command += ["--name", state.name[:100], "--kind", "span", "--description", "Peer benchmark items."]
            for label in state.labels:
                command += ["--question-type", f"{label}={_question(label)}"]
            done = subprocess.run(
                command,
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=max(10.0, deadline - time.monotonic()),
            )
            if done.returncode != 0:
                raise RuntimeError(f"import_tasks failed: {(done.stderr or done.stdout).strip()[-500:]}")

    def join(self, state: StudyState) -> Worker:
        """A new worker through the entry link, in its test step: the three requests a browser makes."""
        with state.lock:
            state.joined += 1
            external_id = f"{state.slug}-w{state.joined}"
        http = requests.Session()
        r = http.post(  # the start page's Start: takes the slot
            self.url(f"/join/{state.slug}/"),
            params={"worker_id": external_id},
            data={"choice": "start"},
            allow_redirects=False,
            timeout=REQUEST_TIMEOUT,
        )
        self.check(r, 302)
        self.check(http.get(self.url("/api/session/current/"), timeout=REQUEST_TIMEOUT), 200)
        http.headers["X-CSRFToken"] = http.cookies.get("csrftoken", "")
        r = self.check(http.post(self.url("/api/session/start/"), json={}, timeout=REQUEST_TIMEOUT), 200)
        worker = Worker(external_id=external_id, http=http)
        self._follow(state, worker, r.json()["item"])
        return worker

    # --- workers and sessions --------------------------------------------------------------

    def _follow(self, state: StudyState, worker: Worker, item: dict | None) -> None:
        """Move the worker to ``item`` (an item payload of the session API), checking the layout."""
        if item is None:
            worker.item_pk = worker.position = None
            return
        position = item["position"]
        if not 0 <= position < len(state.items) or item["context"] != state.items[position].text:
            raise RuntimeError(f"{worker.external_id}: the item at position {position} is not the harness's item")
        worker.item_pk, worker.position = item["item"], position

    def _worker(self, s: requests.Session, state: StudyState, want: int | None) -> Worker:
        """The session's worker in this study; a free one (at ``want`` if possible) on first use."""
        bound: dict = s.__dict__.setdefault("_human_perf_workers", {})
        worker = bound.get(state.slug)
        if worker is not None and worker.position is not None:
            return worker
        with state.lock:
            waiting = [w for w in state.free if w.position is not None]
            exact = [w for w in waiting if w.position == want]
            worker = (exact or sorted(waiting, key=lambda w: w.position))[0] if waiting else None
            if worker is not None:
                state.free.remove(worker)
        if worker is None:  # none laid out left: this join is inside a timed call, and counted
            worker = self.join(state)
            with state.lock:
                state.inline_joins += 1
            log(f"[human-perf] {state.slug}: no free worker left, joined {worker.external_id} during a phase")
        bound[state.slug] = worker
        weakref.finalize(s, _give_back, state, worker)  # when the harness drops the session
        return worker

    # --- timed operations --------------------------------------------------------------------

    def submit(self, s: requests.Session, project: Project, item_id: Any, item: Item) -> None:
        state: StudyState = project.extra["state"]
        worker = self._worker(s, state, want=item_id)
        current = state.items[worker.position]  # == item whenever the worker is on item_id
        body = {
            "item": worker.item_pk,
            "spans": [{"start": current.start, "end": current.end, "text": current.text[current.start : current.end]}],
            "confidence": CONFIDENCE,
        }
        r = worker.http.post(self.url("/api/session/submit/"), json=body, timeout=REQUEST_TIMEOUT)
        if r.status_code != 200:
            self._resync(state, worker)
            raise HTTPError(r.status_code, r.text[:300])
        data = r.json()
        if data["answer"]["status"] != "answered" or len(data["answer"]["spans"]) != 1:
            raise RuntimeError(f"unexpected stored answer: {data['answer']}")
        with state.lock:
            state.submitted += 1
            state.on_named_item += worker.position == item_id
        following = data.get("next")
        self._follow(state, worker, following["item"] if following else None)

    def _resync(self, state: StudyState, worker: Worker) -> None:
        """After a refused submission, ask where the worker really is (part of the failed call)."""
        try:
            r = worker.http.get(self.url("/api/session/current/"), timeout=REQUEST_TIMEOUT)
            if r.status_code == 200:
                self._follow(state, worker, r.json()["item"])
        except (requests.RequestException, RuntimeError, KeyError, ValueError):
            pass

    def next_item(self, s: requests.Session, project: Project):
        state: StudyState = project.extra["state"]
        worker = self._worker(s, state, want=None)
        r = self.check(worker.http.get(self.url("/api/session/current/"), timeout=REQUEST_TIMEOUT), 200)
        self._follow(state, worker, r.json()["item"])
        return worker.position

    def complete_item(self, s: requests.Session, project: Project, item_id: Any) -> None:
        """Nothing: the submission locked the answer and moved the worker to its next item."""

    # --- export --------------------------------------------------------------------------------

    def export(self, s: requests.Session, project: Project, deadline: float) -> dict[str, Any]:
        state: StudyState = project.extra["state"]
        r = s.post(
            self.url("/api/reports/exports/"),
            json={"kind": "annotations-jsonl", "studies": [state.slug]},
            timeout=REQUEST_TIMEOUT,
        )
        job = self.check(r, 202).json()
        polls = 0
        while job["status"] not in ("done", "failed"):
            if time.monotonic() > deadline:
                raise TimeoutError("export job not done before the deadline (is the Celery worker running?)")
            time.sleep(0.05)
            job = self.check(s.get(job["status_url"], timeout=REQUEST_TIMEOUT), 200).json()
            polls += 1
        if job["status"] == "failed":
            raise RuntimeError(f"export failed: {job['error']}")
        data = self.check(s.get(job["download_url"], timeout=max(REQUEST_TIMEOUT, 120)), 200).content
        lines = [json.loads(line) for line in data.splitlines() if line.strip()]
        rows = [line for line in lines if "meta" not in line]
        answered = [row for row in rows if row["status"] != "pending"]
        with state.lock:
            submitted, named = state.submitted, state.on_named_item
        if len(answered) != submitted:
            raise RuntimeError(f"the export has {len(answered)} answers, the adapter made {submitted} submissions")
        return {
            "bytes": len(data),
            "records": len(answered),
            "lines": len(lines),
            "pending_rows": len(rows) - len(answered),
            "spans": sum(len(row.get("spans") or []) for row in answered),
            "status_polls": polls,
            "format": "JSONL (annotations-jsonl export job)",
            "workers": state.joined,
            "inline_joins": state.inline_joins,
            "submits_on_named_item": named,
            "submits_on_own_current_item": submitted - named,
        }


def _give_back(state: StudyState, worker: Worker) -> None:
    """A dropped session's worker returns to the pool (where it is in its step is kept)."""
    with state.lock:
        if worker.position is not None and worker not in state.free:
            state.free.append(worker)
