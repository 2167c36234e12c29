"""Two app nodes behind nginx, sharing PostgreSQL (directly or through PgBouncer) and Redis: the
protocol's guarantees hold whichever node answers.

Each test runs twice, once per stack in tests/deploy/conftest.py. A test that needs to know which
node answers talks to the nodes directly with the headers nginx adds (``nodes``); the others go through
the proxy (``browser``), whose round robin spreads them over both nodes.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.deploy.conftest import SESSION_API, https_session, plain_session, query
from tests.threads import bounded_barrier, join_all, start_threads

pytestmark = [pytest.mark.multinode, pytest.mark.timeout(600)]


def join(client, slug: str, worker_id: str):
    """Taking part through the entry link on one node (its start page's Start; not followed)."""
    return client.post(f"/join/{slug}/?worker_id={worker_id}", data={"choice": "start"})


def enter(stack, browser, slug: str, worker_id: str, **kwargs):
    """Taking part through the entry link, through the proxy (its start page's Start)."""
    link = f"{stack.url}/join/{slug}/?worker_id={worker_id}"
    return browser.post(link, data={"choice": "start"}, timeout=120, **kwargs)


def answer_for(item: dict, task: dict) -> dict:
    """A valid answer to the demo SST-2 item: its first label."""
    assert item["answer_kind"] == "label", item
    return {"item": item["item"], "label": task["labels"][0]["name"], "confidence": 3}


def lines_with(path: Path, text: str) -> int:
    return sum(text in line for line in path.read_text(errors="replace").splitlines())


# --- slots ---------------------------------------------------------------------------------------


def test_racing_entries_through_the_proxy_fill_exactly_n_slots_per_condition(stack):
    """40 workers at once for 12 places (4 conditions x 3): 12 get in, 3 a condition, the rest are told it is full."""
    racers = 40
    barrier = bounded_barrier(racers)
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def race(number: int) -> None:
        session = https_session(stack)
        barrier.wait()
        reply = enter(stack, session, "demo-mnli", f"racer-{number}", allow_redirects=False)
        with lock:
            statuses[number] = reply.status_code

    join_all(start_threads(race, [(n,) for n in range(racers)]))

    assert sorted(set(statuses.values())) == [302, 409], statuses  # admitted, or "this study is full"
    assert list(statuses.values()).count(302) == 12
    per_condition = query(
        stack,
        "SELECT c.shots, count(p.id) FROM annotation_condition c JOIN annotation_study s ON s.id = c.study_id "
        "LEFT JOIN annotation_participation p ON p.condition_id = c.id WHERE s.slug = 'demo-mnli' "
        "GROUP BY c.shots ORDER BY c.shots",
    )
    assert per_condition == [(0, 3), (10, 3), (20, 3), (30, 3)]
    for index in range(2):  # the proxy spread the race over both nodes
        assert lines_with(stack.run_dir / f"node{index}.log", "/join/demo-mnli/") > 0


# --- locking -------------------------------------------------------------------------------------


def test_a_locked_answer_stays_locked_whichever_node_receives_the_second_submission(stack, nodes):
    # demo-sst2 is this test's alone: the PgBouncer tests fill demo-wikiann's slots, and pytest may run them first.
    first, second = nodes
    assert join(first, "demo-sst2", "locker").status_code == 302
    current = first.get(SESSION_API + "current/").json()
    assert second.post(SESSION_API + "start/", json={}).status_code == 200
    current = first.get(SESSION_API + "current/").json()
    body = answer_for(current["item"], current["task"])

    stored = first.post(SESSION_API + "submit/", json=body)
    assert stored.status_code == 200, stored.text
    other_label = {**body, "label": current["task"]["labels"][1]["name"]}
    again = second.post(SESSION_API + "submit/", json=other_label)

    assert again.status_code == 409, again.text
    assert again.json()["error"] == "already_locked"
    assert again.json()["answer"] == stored.json()["answer"]
    labels = query(
        stack,
        "SELECT r.label FROM annotation_response r JOIN annotation_participation p ON p.id = r.participation_id "
        "JOIN annotation_worker w ON w.id = p.worker_id WHERE w.external_id = 'locker' AND r.label <> ''",
    )
    assert labels == [(body["label"],)]


# --- sessions and CSRF ---------------------------------------------------------------------------


def log_in(stack, first, second) -> None:
    """The admin's login form from the first node, posted to the second."""
    form = first.get("/admin/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
    login = second.post(
        "/admin/login/?next=/admin/",
        data={"csrfmiddlewaretoken": token, "username": stack.admin_user, "password": stack.admin_password},
    )
    assert login.status_code == 302 and login.headers["Location"] == "/admin/", login.text[:500]


def test_an_admin_logged_in_on_one_node_posts_with_csrf_on_the_other(stack, nodes):
    first, second = nodes
    log_in(stack, first, second)
    assert first.get("/admin/").status_code == 200  # the session, stored by the other node

    study_id = query(stack, "SELECT id FROM annotation_study WHERE slug = 'demo-wikiann'")[0][0]
    refused = second.post(f"/api/studies/{study_id}/status/", json={"status": "paused"}, headers={"X-CSRFToken": "x"})
    assert refused.status_code == 403  # CSRF is enforced ...
    paused = second.post(f"/api/studies/{study_id}/status/", json={"status": "paused"})
    assert paused.status_code == 200, paused.text  # ... and the token from the first node is good on the second
    assert first.get(f"/api/studies/{study_id}/").json()["status"] == "paused"


def test_an_export_queued_on_one_node_is_run_by_the_celery_worker_and_read_on_the_other(stack, nodes):
    """The stack's Celery worker (through PgBouncer too: QuerySet.iterator() without server-side cursors)."""
    first, second = nodes
    log_in(stack, first, second)
    queued = second.post("/api/reports/exports/", json={"kind": "annotations-jsonl", "all": True})
    assert queued.status_code == 202, queued.text
    deadline = time.monotonic() + 90
    while (job := first.get(f"/api/reports/exports/{queued.json()['id']}/").json())["status"] != "done":
        assert job["status"] in ("queued", "running") and time.monotonic() < deadline, job
        time.sleep(0.5)
    assert job["download_url"].startswith(stack.url + "/")  # the address the browser used, https and all
    download = second.get(job["download_url"].removeprefix(stack.url))
    assert download.status_code == 200, download.text[:300]


def test_a_worker_goes_on_through_the_proxy_whichever_node_answers(stack, browser):
    assert enter(stack, browser, "demo-conll03", "roamer").status_code == 200  # followed to /work/
    for _ in range(4):  # round robin: both nodes read the cookie and the CSRF token
        current = browser.get(f"{stack.url}{SESSION_API}current/")
        assert current.status_code == 200 and current.json()["state"] == "claimed"
    started = browser.post(
        f"{stack.url}{SESSION_API}start/",
        json={},
        headers={"X-CSRFToken": browser.cookies["csrftoken"], "Referer": f"{stack.url}/work/"},
    )
    assert started.status_code == 200, started.text


# --- static files and the secure cookie behind the proxy ----------------------------------------


def test_static_files_come_from_nginx_compressed_and_cacheable(stack, browser):
    page = enter(stack, browser, "demo-squad2", "reader")
    assert page.status_code == 200 and page.url.endswith("/work/")
    static = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
    assert static, page.text[:1000]
    for path in static:
        reply = browser.get(stack.url + path, headers={"Accept-Encoding": "gzip"})
        assert reply.status_code == 200, path
        assert "immutable" in reply.headers["Cache-Control"]  # hashed names from the manifest
        assert reply.headers["X-Content-Type-Options"] == "nosniff"
        assert reply.content == (stack.run_dir / "static" / path.removeprefix("/static/")).read_bytes()
    assert not any(lines_with(stack.run_dir / f"node{index}.log", "/static/") for index in range(2))  # nginx alone


def test_the_worker_cookie_is_secure_behind_the_proxy(stack, browser):
    entry = enter(stack, browser, "demo-record", "cookie", allow_redirects=False)
    assert entry.status_code == 302
    cookie = next(c for c in browser.cookies if c.name == "worker")
    assert cookie.secure and cookie.has_nonstandard_attr("HttpOnly")
    # The header is what tells a node the browser used HTTPS: without it, a node redirects there.
    plain = plain_session().get(
        f"http://127.0.0.1:{stack.node_ports[0]}/join/demo-record/?worker_id=other",
        headers={"Host": stack.host},
        allow_redirects=False,
        timeout=30,
    )
    assert plain.status_code == 301 and plain.headers["Location"].startswith("https://")
    # And nginx's plain-HTTP port only redirects to HTTPS, whatever X-Forwarded-Proto the client claims.
    forged = plain_session().get(
        f"http://127.0.0.1:{stack.http_port}/join/demo-record/?worker_id=other",
        headers={"X-Forwarded-Proto": "https"},
        allow_redirects=False,
        timeout=30,
    )
    assert forged.status_code == 301 and forged.headers["Location"].startswith("https://")
    assert query(stack, "SELECT count(*) FROM annotation_worker WHERE external_id = 'other'") == [(0,)]


# --- PgBouncer -----------------------------------------------------------------------------------


def pgbouncer_show(stack, what: str) -> list[dict[str, str]]:
    """``SHOW <what>`` on PgBouncer's admin console (simple query protocol: psql), one dict a row."""
    out = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-p", str(stack.pgbouncer_port), "-U", "postgres", "-d", "pgbouncer"]
        + ["-A", "-F", "|", "-P", "footer=off", "-c", f"SHOW {what}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    columns = out[0].split("|")
    return [dict(zip(columns, line.split("|"), strict=True)) for line in out[1:]]


@pytest.mark.parametrize("stack", ["pgbouncer"], indirect=True)
def test_through_pgbouncer_many_client_connections_share_a_few_server_connections(stack):
    racers = 16  # as many as the nodes have threads: each thread keeps a client connection (DB_CONN_MAX_AGE)
    barrier = bounded_barrier(racers)
    statuses: list[int] = []

    def request(number: int) -> None:
        session = https_session(stack)
        barrier.wait()
        statuses.append(enter(stack, session, "demo-wikiann", f"pooled-{number}", allow_redirects=False).status_code)

    join_all(start_threads(request, [(n,) for n in range(racers)]))

    assert set(statuses) <= {302, 409}, statuses
    clients = [row for row in pgbouncer_show(stack, "CLIENTS") if row["database"] == stack.database]
    servers = [row for row in pgbouncer_show(stack, "SERVERS") if row["database"] == stack.database]
    assert 0 < len(servers) <= stack.pool_size + 2 < len(clients), (len(clients), len(servers))  # + reserve pool
    stats = next(row for row in pgbouncer_show(stack, "STATS") if row["database"] == stack.database)
    assert int(stats["total_xact_count"]) > 50
    backends = query(stack, "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (stack.database,))
    assert backends[0][0] <= stack.pool_size + 3  # PgBouncer's pool and its reserve, and this query's connection


@pytest.mark.parametrize("stack", ["pgbouncer"], indirect=True)
def test_through_pgbouncer_1_21_the_app_prepares_its_statements(stack):
    """psycopg's protocol-level prepared statements, kept per server connection by PgBouncer's
    max_prepared_statements: the app's statements are prepared, and clients interleaving on shared
    server connections each get their own."""
    if not stack.pgbouncer_keeps_prepared_statements():
        pytest.skip(f"{stack.pgbouncer_binary} is older than 1.21: set PGBOUNCER=$(bash scripts/build_pgbouncer.sh)")
    assert stack.settings()["DB_PREPARE_THRESHOLD"] == "2"
    for number in range(6):  # each statement of the entry runs more than twice on some connection
        assert enter(stack, https_session(stack), "demo-wikiann", f"prepared-{number}").status_code in (200, 409)
    servers = [row for row in pgbouncer_show(stack, "SERVERS") if row["database"] == stack.database]
    assert sum(int(row["prepared_statements"]) for row in servers) > 0, servers
    interleaved_clients_prepare(stack, expect_errors=False)


def test_an_older_pgbouncer_cannot_keep_prepared_statements_so_the_stack_prepares_none(old_pgbouncer):
    """Debian 12's PgBouncer 1.18: two clients preparing on one server connection collide, which is why
    the stack (and docs/deployment.md) turn preparation off with it."""
    assert old_pgbouncer.settings()["DB_PREPARE_THRESHOLD"] == "none"
    assert "max_prepared_statements = " not in (old_pgbouncer.run_dir / "pgbouncer.ini").read_text()
    interleaved_clients_prepare(old_pgbouncer, expect_errors=True)


def interleaved_clients_prepare(stack, *, expect_errors: bool) -> None:
    import psycopg

    url = f"host=127.0.0.1 port={stack.pgbouncer_port} user=postgres dbname={stack.database}"
    clients = [psycopg.connect(url, prepare_threshold=0, autocommit=True) for _ in range(2)]
    try:

        def run() -> None:
            for _ in range(3):
                for client in clients:
                    assert client.execute("SELECT %s::int + 1", (1,)).fetchone() == (2,)

        if expect_errors:
            with pytest.raises(psycopg.errors.ProgrammingError):  # duplicate, or unknown, prepared statement
                run()
        else:
            run()
    finally:
        for client in clients:
            client.close()
