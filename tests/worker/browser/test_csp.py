"""Every page under the Content-Security-Policy in a real browser: no violation, and the flow still works.

The ``open_as`` fixture fails any test whose pages meet a CSP violation; the tests here walk the pages the
other browser tests do not: an MTurk worker from the link to the HIT posted back, the staff dashboard,
the front page and the error pages.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Participation, Study
from annotation.services.studies import studies
from tests.worker.browser.conftest import HEADLESS_SHELL, LAUNCH_ARGS, csp_violations, shot
from tests.worker.conftest import NER_TEST, NER_TRAIN, make_participation, make_task_with_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
SANDBOX = "https://workersandbox.mturk.com"


def policy(page) -> str:
    return page.first_response.headers.get("content-security-policy", "")


def wait_for_item(page, phase, position):
    page.wait_for_function(
        "([phase, position]) => window.workerPage && window.workerPage.item && "
        "window.workerPage.item.phase === phase && window.workerPage.item.position === position",
        arg=[phase, position],
    )


def test_an_mturk_worker_from_the_link_to_the_hit_posted_back(open_as, db):
    task = make_task_with_items(slug="csp", test=NER_TEST, train=NER_TRAIN)
    study = studies.study_create(
        task=task, slug="csp-study", shots=[10], outcome_codes={"completed": {"code": "CSPCODE1"}}
    )
    studies.change_status(study=study, to_status="open")

    # The HIT's preview: the page MTurk frames (frame-ancestors names MTurk there, and only there).
    preview = open_as(None, path=f"/join/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
    assert "This is a preview" in preview.content()
    assert f"frame-ancestors {SANDBOX.replace('workersandbox', 'www')} {SANDBOX}" in policy(preview)

    # The accepted HIT: the link leads to the start page, then training with the reveal, then the test.
    page = open_as(None, path=f"/join/{study.slug}/?workerId=W1&assignmentId=A1&hitId=H1&turkSubmitTo={SANDBOX}")
    assert "/join/" in page.url and not Participation.objects.exists()  # the study at a glance: no slot yet
    page.locator("#entry-start").click()  # taking part claims the slot
    page.wait_for_url("**/work/")
    assert "frame-ancestors 'none'" in page.context.request.get(page.url).headers["content-security-policy"]
    page.locator("#start-button").click()
    for position in range(len(NER_TRAIN)):
        wait_for_item(page, "training", position)
        page.keyboard.press("n")  # no answer
        page.keyboard.press("w")
        page.keyboard.press("Enter")
        page.locator("#reveal .verdict").wait_for()
        if position == 0:
            shot(page, "csp-reveal")
        page.keyboard.press("Enter")
    posted = []

    def mturk(route):  # stands in for MTurk: what the finish page's form posts there
        posted.append((route.request.method, route.request.url, route.request.post_data))
        route.fulfill(status=200, content_type="text/html", body="<p>HIT submitted</p>")

    page.route(f"{SANDBOX}/**", mturk)
    for position in range(len(NER_TEST)):
        wait_for_item(page, "test", position)
        page.keyboard.press("s")
        page.keyboard.press("s")  # a skip is confirmed by a second S
    page.wait_for_url(f"{SANDBOX}/mturk/externalSubmit", timeout=15_000)
    assert posted and posted[0][0] == "POST" and "assignmentId=A1" in posted[0][2]
    assert "completion_code=CSPCODE1" in posted[0][2]
    assert not page.js_errors


def test_mturk_can_frame_the_entry_page_and_nobody_else_can(browser, live_server, db):
    task = make_task_with_items(slug="cspf", test=NER_TEST)
    study = studies.study_create(task=task, slug="csp-framed", shots=[0])
    studies.change_status(study=study, to_status="open")
    link = f"{live_server.url}/join/{study.slug}/?workerId=W9&assignmentId=A9&hitId=H9&turkSubmitTo={SANDBOX}"
    hit = f'<html><body><iframe id="hit" src="{link}" width="800" height="600"></iframe></body></html>'
    # A browser of its own: a public https page framing the test server on localhost is blocked by
    # Chromium's private/local network access checks before any header is read.
    blocking = "PrivateNetworkAccessForNavigations,PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks"
    framed = browser.browser_type.launch(
        executable_path=HEADLESS_SHELL, headless=True, args=[*LAUNCH_ARGS, f"--disable-features={blocking}"]
    )
    context = framed.new_context()
    try:
        page = context.new_page()
        messages = []
        page.on("console", lambda msg: messages.append(msg.text))
        # The HIT page as MTurk's sandbox serves it (Playwright answers for the host), then as another site.
        page.route(f"{SANDBOX}/**", lambda route: route.fulfill(status=200, content_type="text/html", body=hit))
        page.route("https://elsewhere.example/**", lambda route: route.fulfill(content_type="text/html", body=hit))
        page.goto(f"{SANDBOX}/mturk/preview")
        frame = page.frame_locator("#hit")
        frame.locator("h1").wait_for()
        assert "Take part in a tab of its own" in frame.locator("h1").inner_text()  # the open-in-a-tab page
        assert not [m for m in messages if "Content Security Policy" in m or "X-Frame-Options" in m]
        # Until Chromium reports the refusal (no fixed wait): the frame is then refused for good.
        with page.expect_console_message(lambda msg: "frame-ancestors" in msg.text):
            page.goto("https://elsewhere.example/hit")
        assert not any("Take part in a tab" in frame.content() for frame in page.frames)  # refused
        assert any("frame-ancestors" in m for m in messages)
    finally:
        context.close()
        framed.close()


def test_the_excluded_page_posts_to_mturk_too(open_as, db):
    task = make_task_with_items(slug="cspx", test=NER_TEST, train=NER_TRAIN)
    p = make_participation(task, shots=10, state=State.EXCLUDED)
    p.worker.platform = "mturk"
    p.worker.save()
    p.platform_data = {"assignmentId": "A2", "hitId": "H2", "turkSubmitTo": SANDBOX}
    p.save()
    page = open_as(p)
    assert "form-action 'self' https://www.mturk.com https://workersandbox.mturk.com" in policy(page)
    page.route(f"{SANDBOX}/**", lambda route: route.fulfill(status=200, content_type="text/html", body="ok"))
    page.locator("#completion-form button").click()
    page.wait_for_url(f"{SANDBOX}/mturk/externalSubmit")


def test_staff_pages_front_page_and_error_pages(open_as, db, settings):
    settings.DEBUG = False  # Django's own error pages, as in production
    task = make_task_with_items(slug="cspd", test=NER_TEST)
    make_participation(task, state=State.COMPLETED)
    admin = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw")
    client = Client()
    client.force_login(admin)
    session = [{"name": "sessionid", "value": client.cookies["sessionid"].value}]

    dashboard = open_as(None, path="/dashboard/", cookies=session)
    assert dashboard.locator("h1").inner_text().startswith("Human performance")
    dashboard.locator("img.plot").evaluate("img => img.complete || new Promise(r => img.onload = r)")
    assert "default-src 'self'" in policy(dashboard)
    open_as(None, path=f"/dashboard/study/{Study.objects.get(task=task).slug}/", cookies=session)
    pages = {
        "/": "Human performance on few-shot language understanding",
        "/no/such/page/": "Page not found",
        "/work/": "No study session",
    }
    for path, heading in pages.items():
        page = open_as(None, path=path)
        assert heading in page.locator("h1").inner_text()
        assert "default-src 'self'" in policy(page)
    # The CSRF failure page: a form posted without its token.
    page = open_as(None, path="/admin/login/")
    page.evaluate("document.querySelector('input[name=csrfmiddlewaretoken]').value = 'x'.repeat(64)")
    page.fill("#id_username", "staff")
    page.fill("#id_password", "pw")
    page.locator("input[type=submit]").click()
    assert "Please reload the page" in page.locator("h1").inner_text()
    assert not csp_violations(page)
