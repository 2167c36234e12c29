"""python manage.py study_appendix SLUG [-o DIR]: the statement's appendix of a study.

Writes DIR/texts.md, the exact texts workers saw in each language the study shows
(annotation.reporting.appendix), and DIR/<language>-<page>.png, screenshots of the start, training,
reveal and test pages as a worker sees them (never the staff preview), taken in headless Chromium.

The screenshots come from a throwaway worker who joins the study's condition with the most training
examples inside a transaction that is rolled back at the end, so nothing of it stays: the browser's
requests are answered by Django's test client in this process (Playwright's request routing), the
static files too. Where Chromium or Playwright is missing, the texts are still written and the
command says the screenshots were skipped. On SQLite the transaction holds the write lock while the
command runs (seconds): run it before the study opens, or on a copy.
"""

from __future__ import annotations

import mimetypes
import os
import queue
import secrets
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management.base import CommandError, CommandParser
from django.db import transaction
from django.test import Client
from django.utils import timezone

from annotation.models import Participation, Study, SurveyResponse, Worker
from annotation.reporting.appendix import appendix_texts
from annotation.reporting.statement_design import shown_languages
from annotation.services.admission import consent, entry, survey
from annotation.services.state import lifecycle, slots
from annotation.web import worker_cookie
from tasks_app.management.base import ProjectCommand

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
WAIT_MS = 15_000


class Rollback(Exception):
    """Leaves the throwaway worker's transaction."""


class Command(ProjectCommand):
    help = "Write a study's appendix: the texts workers saw (texts.md) and screenshots of their pages."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The study's slug.")
        parser.add_argument("-o", "--output", default=None, metavar="DIR", help="Folder (default: appendix-SLUG).")
        parser.add_argument("--no-screenshots", action="store_true", help="Write the texts only.")

    def handle(self, *args: Any, **opts: Any) -> None:
        study = Study.objects.select_related("task").filter(slug=opts["slug"]).first()
        if study is None:
            raise CommandError(f"unknown study {opts['slug']!r}")
        out = Path(opts["output"] or f"appendix-{study.slug}")
        if out.exists() and not out.is_dir():
            raise CommandError(f"{out} exists and is not a folder")
        if not out.parent.is_dir():
            raise CommandError(f"the folder {out.parent} does not exist")
        out.mkdir(exist_ok=True)
        (out / "texts.md").write_text(appendix_texts(study), encoding="utf-8")
        self.stdout.write(f"wrote {out / 'texts.md'}")
        if opts["no_screenshots"]:
            return
        missing = _browser_missing()
        if missing:
            self.stdout.write(f"screenshots skipped: {missing}")
            return
        for path in take_screenshots(study, out):
            self.stdout.write(f"wrote {path}")


def served_host() -> str:
    """A host the settings serve, for the browser's address and the requests' Host header.

    The requests never leave this process (the browser's are routed to the test client), but the app
    still checks the Host header against ALLOWED_HOSTS: so the pages are asked for under a host the
    running settings allow, whatever they are, and nothing is added to them."""
    for allowed in settings.ALLOWED_HOSTS:
        host = "localhost" if allowed == "*" else allowed.lstrip(".")
        if host:
            return host
    if settings.DEBUG:  # Django's own default with DEBUG on and ALLOWED_HOSTS empty
        return "localhost"
    raise CommandError("ALLOWED_HOSTS is empty: the app serves no host, so no page can be shown")


def _browser_missing() -> str:
    if not os.path.exists(CHROMIUM):
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (requirements-dev.txt)"
    return ""


def _throwaway_participation(study: Study) -> Participation:
    """A new worker in the condition with the most training examples, in a slot made free for it."""
    condition = study.conditions.order_by("-shots").first()
    if condition is None:
        raise CommandError(f"study {study.slug!r} has no conditions")
    held = slots.held_numbers(condition.pk)
    slot = next(i for i in range(len(held) + 1) if i not in held)
    Study.objects.filter(pk=study.pk).update(
        status=Study.Status.OPEN, workers_per_condition=max(study.workers_per_condition, slot + 1)
    )
    worker = Worker.objects.create(platform=Worker.Platform.INHOUSE, external_id=f"appendix-{secrets.token_hex(6)}")
    return entry.new_participation(study=study, condition=condition, worker=worker, slot_index=slot)


class MainThread:
    """Runs the database work of the browser's thread in this one, inside its transaction.

    Sync Playwright runs an event loop in its thread, where Django gives each context its own
    connection; the throwaway worker's rows live in this thread's uncommitted transaction, so every
    request of the browser and every step of the walk is answered here, one at a time."""

    def __init__(self) -> None:
        self.jobs: queue.Queue[tuple[Callable[[], Any], threading.Event, dict[str, Any]]] = queue.Queue()

    def call(self, fn: Callable[[], Any]) -> Any:
        done: threading.Event = threading.Event()
        box: dict[str, Any] = {}
        self.jobs.put((fn, done, box))
        done.wait()
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def serve(self, browser_thread: threading.Thread) -> None:
        while browser_thread.is_alive() or not self.jobs.empty():
            try:
                fn, done, box = self.jobs.get(timeout=0.05)
            except queue.Empty:
                continue
            try:
                box["value"] = fn()
            except BaseException as exc:  # handed to the browser's thread, which raises it
                box["error"] = exc
            done.set()


def _respond(client: Client, method: str, path: str, body: bytes, kind: str, language: str) -> tuple[int, bytes, dict]:
    """One browser request answered by the test client (static files from the finders if not served)."""
    headers = {"Accept-Language": language}
    if method == "GET":  # secure: as behind the deployment's TLS (no redirect to https)
        response = client.get(path, headers=headers, secure=True)
    else:
        response = client.generic(method, path, body, kind, headers=headers, secure=True)
    if response.status_code == 404 and path.startswith("/static/"):
        found = finders.find(path.removeprefix("/static/").split("?")[0])
        if found:
            guessed = mimetypes.guess_type(str(found))[0] or "application/octet-stream"
            return 200, Path(str(found)).read_bytes(), {"content-type": guessed}
    content = response.getvalue()  # streamed or not
    return response.status_code, content, dict(response.items())


def _wait_for_item(page: Any, position: int) -> None:
    page.wait_for_function(
        "(position) => window.workerPage && window.workerPage.item && window.workerPage.item.position === position",
        arg=position,
        timeout=WAIT_MS,
    )


def _walk(study: Study, page: Any, main: MainThread, language: str, out: Path) -> list[Path]:
    """Drives one throwaway worker through the pages (in the browser's thread), a screenshot at each."""
    shots: list[Path] = []
    host = served_host()
    origin = f"https://{host}"  # never reached over the network: every request is routed below
    client = Client(HTTP_HOST=host)

    def shot(name: str) -> None:
        path = out / f"{language}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        shots.append(path)

    def route(route: Any, request: Any) -> None:
        path = request.url.removeprefix(origin) or "/"
        kind = request.headers.get("content-type", "application/octet-stream")
        body = request.post_data_buffer or b""
        status, content, headers = main.call(lambda: _respond(client, request.method, path, body, kind, language))
        route.fulfill(status=status, body=content, headers=headers)

    participation = main.call(lambda: _throwaway_participation(study))
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    page.route("**/*", route)
    page.goto(f"{origin}/work/")
    if main.call(lambda: consent.required(participation)):
        shot("consent")
        main.call(lambda: consent.agree(participation, language=language))
        page.goto(f"{origin}/work/")
    placement = main.call(lambda: survey.due(participation))
    if placement is not None:  # a survey before training: shown, then passed over (nothing stays)
        shot("survey")
        main.call(
            lambda: SurveyResponse.objects.create(
                participation=participation, placement=placement, answers={}, submitted_at=timezone.now()
            )
        )
        page.goto(f"{origin}/work/")
    shot("start")
    main.call(lambda: lifecycle.begin(participation))
    page.goto(f"{origin}/work/")
    _wait_for_item(page, 0)
    if participation.state == Participation.State.TRAINING:
        shot("training")
        page.keyboard.press("1" if study.task.is_classification else "n")  # the first label, or no answer
        page.keyboard.press("e")  # confidence 3 of 5
        page.keyboard.press("Enter")
        page.locator("#reveal .verdict").wait_for(timeout=WAIT_MS)
        shot("reveal")
        main.call(
            lambda: lifecycle.transition(
                participation, to_state=Participation.State.TEST, reason="appendix screenshots"
            )
        )
        page.goto(f"{origin}/work/")
        _wait_for_item(page, 0)
    shot("test")
    return shots


def _browse(study: Study, out: Path, languages: list[str], main: MainThread, result: dict[str, Any]) -> None:
    """The browser's thread: one Chromium, a walk a language, each in a savepoint rolled back after it (the
    next walk starts from the study as it was); the shots, or the error and its language, go to ``result``."""
    from playwright.sync_api import sync_playwright

    result["shots"] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            try:
                for language in languages:
                    result["language"] = language
                    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale=language)
                    page = context.new_page()
                    page.set_default_timeout(WAIT_MS)
                    mark = main.call(transaction.savepoint)
                    try:
                        result["shots"] += _walk(study, page, main, language, out)
                    finally:
                        main.call(partial(transaction.savepoint_rollback, mark))
                        context.close()
            finally:
                browser.close()
    except BaseException as exc:  # raised again in the command's thread
        result["error"] = exc


def take_screenshots(study: Study, out: Path) -> list[Path]:
    """Every shown language's walk, in a transaction that is rolled back: nothing of the throwaway workers stays."""
    study.task.is_classification  # noqa: B018  (loaded here: the browser's thread never touches the database)
    main = MainThread()
    result: dict[str, Any] = {}
    languages = list(shown_languages(study))
    thread = threading.Thread(target=_browse, args=(study, out, languages, main, result), daemon=True)
    try:
        with transaction.atomic():
            thread.start()
            main.serve(thread)
            raise Rollback
    except Rollback:
        pass
    if "error" in result:
        raise CommandError(f"the screenshots ({result['language']}) failed: {result['error']}") from result["error"]
    shots: list[Path] = result["shots"]
    return shots
