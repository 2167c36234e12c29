"""Playwright on Debian's Chromium against pytest-django's live server: one browser per test session."""

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
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
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # Sync Playwright keeps an event loop in this thread, which Django's ORM guard would refuse.
    # Only for the browser tests: the variable must not leak into other tests' subprocesses.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def open_as(browser, live_server):
    """open_as(participation, viewport=None, touch=False) -> a page logged in as that worker, on /work/.

    ``touch=True`` makes a phone-like context (touch screen, coarse pointer); ``participation=None`` opens
    the page without a worker session.
    """
    from annotation import worker_cookie

    contexts = []

    def _open(participation, *, viewport=None, path="/work/", touch=False):
        context = browser.new_context(
            viewport=viewport or {"width": 1280, "height": 900}, has_touch=touch, is_mobile=touch
        )
        if participation is not None:
            context.add_cookies(
                [
                    {
                        "name": worker_cookie.COOKIE,
                        "value": worker_cookie.signed_value(participation.pk),
                        "url": live_server.url,
                    }
                ]
            )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.js_errors = errors
        page.goto(live_server.url + path)
        return page

    yield _open
    for context in contexts:
        context.close()


def shot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
