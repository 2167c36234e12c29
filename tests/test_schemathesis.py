"""Schemathesis against the real server: every documented response is true, and nothing answers 5xx.

A bounded run (SCHEMATHESIS_MAX_TIME seconds of generation, SCHEMATHESIS_MAX_EXAMPLES cases per
operation) of the schemathesis CLI over the whole schema at /api/schema/: the admins' API (a superuser's
session from the admin's login form: basic auth would hash the password on every request, a second
each) and the worker's session API (the worker cookie from a join link); unsafe methods carry the
CSRF token, as the browser's pages do.
The server is ``manage.py runserver`` with DEBUG off on a free 127.0.0.1 port, over a fresh SQLite
database with the demo data (demo studies and tasks) and an admin. Checks: no server error, status
codes, content types and bodies as documented.

Only with ``SCHEMATHESIS=1`` (CI runs it as a step of its own, .ci/run); the seed is printed, and
SCHEMATHESIS_SEED replays a run.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from bench.ports import free_port

pytestmark = [pytest.mark.schemathesis, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parent.parent
MAX_TIME = int(os.environ.get("SCHEMATHESIS_MAX_TIME", "180"))
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "10"))
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
ADMIN = ("fuzz-admin", "fuzz-admin-password")


def _manage(env: dict, *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, check=True, timeout=300)


@pytest.fixture
def server(tmp_path):
    """The app on a free port over a fresh SQLite database with the demo data: yields its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "annotation.settings.base",
        "DEBUG": "0",
        "SECRET_KEY": "schemathesis-only-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "STATIC_MANIFEST": "0",
        "LOG_LEVEL": "ERROR",
    }
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL"):
        env.pop(name, None)  # in-process Celery, a local cache: the server needs nothing else
    _manage(env, "migrate", "--noinput", "-v0")
    _manage(env, "load_demo")
    _manage(env, "ensure_admin", "--username", ADMIN[0], "--password", ADMIN[1])
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/api/schema/", timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert process.poll() is None, (tmp_path / "server.log").read_text()
            assert time.monotonic() < deadline, "the server did not start in 60 s"
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
        log.close()
        errors = (tmp_path / "server.log").read_text()
        if "Traceback" in errors:
            print(errors[-20000:])  # shown with the failure: what the 5xx were


def _cookies(url: str) -> dict[str, str]:
    """An admin's session, a fresh worker's cookie (demo SST-2 study, as docs/session-api.md says) and the CSRF
    token, in one cookie jar."""
    http = requests.Session()
    http.get(f"{url}/admin/login/", timeout=30)
    login = http.post(
        f"{url}/admin/login/",
        data={"username": ADMIN[0], "password": ADMIN[1], "csrfmiddlewaretoken": http.cookies["csrftoken"]},
        allow_redirects=False,
        timeout=30,
    )
    assert login.status_code == 302 and "sessionid" in http.cookies, login.text
    link = f"{url}/join/demo-sst2/?worker_id=schemathesis"
    joined = http.post(link, data={"choice": "start"}, allow_redirects=False, timeout=30)
    assert joined.status_code == 302, joined.text
    assert http.get(f"{url}/api/session/current/", timeout=30).status_code == 200
    assert http.get(f"{url}/api/studies/", timeout=30).status_code == 200
    return {name: http.cookies[name] for name in ("sessionid", "worker", "csrftoken")}


def test_every_response_matches_the_schema_and_none_is_a_server_error(server, tmp_path):
    cookies = _cookies(server)
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        "run",
        f"{server}/api/schema/?format=json",
        "--header",
        "Cookie: " + "; ".join(f"{name}={value}" for name, value in cookies.items()),
        "--header",
        f"X-CSRFToken: {cookies['csrftoken']}",
        "--checks",
        CHECKS,
        "--max-examples",
        str(MAX_EXAMPLES),
        "--max-time",
        str(MAX_TIME),
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--no-color",
    ]
    if os.environ.get("SCHEMATHESIS_SEED"):
        command += ["--seed", os.environ["SCHEMATHESIS_SEED"]]
    started = time.monotonic()
    # In the test's folder: schemathesis keeps its replay files in the working directory.
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=MAX_TIME + 300)
    print(result.stdout[-30000:], result.stderr[-5000:], f"schemathesis ran {time.monotonic() - started:.0f} s")
    assert result.returncode == 0, "schemathesis found responses that break the schema (output above)"
