"""Playwright on Debian's Chromium against pytest-django's live server: one browser per test session.

The pages run in Debian's headless shell of Chromium (package chromium-headless-shell: the same Blink and
V8 as /usr/bin/chromium, built without the browser's windows), which is what Playwright itself runs for
headless pages. The full browser's headless mode opens a window with its toolbar for every context: its
omnibox pop-up, a WebUI page in a renderer of its own, cost a quarter of a CPU-second per page opened and
about 15% of a core while the page sat open, on the suite's two cores nearly half its browser time. A test
that needs what only windows give (a tab in front of another takes the focus) asks for ``full_browser``.

The fixtures are registered once, by tests/conftest.py (a second registration of the session-scoped
``browser`` would start Playwright twice in one thread); the helpers are imported from here."""

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "screenshots"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def playwright():
    """Playwright's driver, started once per session (a second one in the same thread would fail)."""
    from playwright.sync_api import sync_playwright

    # Sync Playwright keeps an event loop in this thread, which Django's ORM guard would refuse.
    # Only for the browser tests: the variable must not leak into other tests' subprocesses.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as p:
            yield p
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def _launch(playwright, executable: str, package: str):
    if not os.path.exists(executable):
        pytest.skip(f"{executable} not found (apt-get install {package})")
    browser = playwright.chromium.launch(executable_path=executable, headless=True, args=LAUNCH_ARGS)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def browser(playwright):
    """Chromium's headless shell: the browser of every page test."""
    yield from _launch(playwright, HEADLESS_SHELL, "chromium-headless-shell")


@pytest.fixture(scope="session")
def full_browser(playwright):
    """The full Chromium, in its headless mode, with windows: for a test that switches tabs (a module
    overrides ``browser`` with it). Started only when a test asks for it."""
    yield from _launch(playwright, CHROMIUM, "chromium")


# Each page records the Content-Security-Policy violations it meets: the DOM event (before any page
# script runs: Playwright injects this script itself, the policy does not apply to it) and Chromium's
# console message, which also covers what the event misses (e.g. a blocked frame-ancestors).
WATCH_CSP = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  const where = e.sourceFile + ':' + e.lineNumber;
  window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + where);
});
"""


def watch_csp(page) -> list[str]:
    """Starts recording the page's CSP violations (console messages and events); see ``csp_violations``."""
    messages: list[str] = []
    page.on(
        "console",
        lambda msg: messages.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    page.add_init_script(WATCH_CSP)
    page.csp_console = messages
    return messages


def csp_violations(page) -> list[str]:
    """The violations recorded so far on the page: console messages, then the document's events."""
    events = []
    if not page.is_closed():
        try:
            events = page.evaluate("window.__cspViolations || []")
        except Exception:  # a page being navigated away: the console still has them
            events = []
    return [*page.csp_console, *events]


@pytest.fixture
def open_as(browser, live_server):
    """open_as(participation, viewport=None, touch=False) -> a page logged in as that worker, on /work/.

    ``clock=True`` installs Playwright's clock before the page loads: the page's time (Date, timers,
    performance.now) still flows, and ``page.clock.run_for(ms)`` moves it on at once instead of a sleep.

    ``touch=True`` makes a phone-like context (touch screen, coarse pointer); ``participation=None`` opens
    the page without a worker session. ``cookies`` adds more (e.g. an admin's session). Every page is
    watched for Content-Security-Policy violations, and any makes the test fail at teardown.
    """
    from annotation.web import worker_cookie

    contexts = []
    pages = []

    def _open(participation, *, viewport=None, path="/work/", touch=False, cookies=None, clock=False):
        context = browser.new_context(
            viewport=viewport or {"width": 1280, "height": 900}, has_touch=touch, is_mobile=touch
        )
        jar = [{**cookie, "url": live_server.url} for cookie in cookies or []]
        if participation is not None:
            jar.append(
                {
                    "name": worker_cookie.COOKIE,
                    "value": worker_cookie.signed_value(participation.pk),
                    "url": live_server.url,
                }
            )
        if jar:
            context.add_cookies(jar)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.js_errors = errors
        watch_csp(page)
        pages.append(page)
        if clock:
            page.clock.install()
        page.first_response = page.goto(live_server.url + path)
        return page

    yield _open
    violations = [v for page in pages for v in csp_violations(page)]
    for context in contexts:
        context.close()
    if violations:
        pytest.fail("Content-Security-Policy violations:\n" + "\n".join(violations))


def shot(page, name: str, *, full_page: bool = True, always: bool = False) -> Path:
    """test-artifacts/screenshots/NAME.png, for a person to look at, taken when ``SCREENSHOTS=1`` is set or
    ``always`` (the README's images, copied to docs/img by hand). Off by default: no test reads a shot, and a
    full-page one costs about 0.3 s, a minute of the suite's worker time."""
    path = SCREENSHOTS / f"{name}.png"
    if always or os.environ.get("SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=full_page)
    return path


@pytest.fixture
def staff_session(db) -> list[dict]:
    """The cookies of a logged-in superuser, for ``open_as(..., cookies=staff_session)``."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    admin = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw")
    client = Client()
    client.force_login(admin)
    return [{"name": "sessionid", "value": client.cookies["sessionid"].value}]
