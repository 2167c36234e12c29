"""The multi-node stack (tests/deploy/localstack.py) for the tests beside this file, and clients for it.

Marked ``multinode``: they run only with MULTINODE=1 (a CI stage of their own), on this machine's
PostgreSQL and Redis, with nginx and PgBouncer from Debian (scripts/install_deploy_tools.sh).
MULTINODE_DATABASE (default annotation_multinode) names the database, created and dropped per stack;
MULTINODE_REDIS_DB (default 8) the broker's Redis db, the cache taking the next one. PGBOUNCER names
the PgBouncer binary of the stacks (default: Debian's; CI: 1.21+ from scripts/build_pgbouncer.sh).
MULTINODE_KEEP_FILES=1 keeps each stack's run directory (configuration and logs).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import psycopg
import pytest
import requests

from tests.deploy.localstack import LocalStack

SESSION_API = "/api/session/"


def _stack(pgbouncer: bool) -> LocalStack:
    database = os.environ.get("MULTINODE_DATABASE", "annotation_multinode")
    return LocalStack(
        nodes=2,
        pgbouncer=pgbouncer,
        celery_workers=1,
        database=f"{database}_pgbouncer" if pgbouncer else database,
        redis_db=int(os.environ.get("MULTINODE_REDIS_DB", "8")),
        access_log=True,  # which node answered what: the tests read the nodes' logs
        keep_files=os.environ.get("MULTINODE_KEEP_FILES") == "1",  # configuration and logs, to look into
    )


@pytest.fixture(scope="module", params=["direct", "pgbouncer"])
def stack(request):
    """Two gunicorn nodes behind nginx, one Celery worker and beat; PostgreSQL directly, or through PgBouncer."""
    with _stack(pgbouncer=request.param == "pgbouncer") as running:
        yield running


def https_session(stack: LocalStack) -> requests.Session:
    """A browser at the proxy: HTTPS with the stack's certificate, cookies kept. Not from the environment:
    requests would let REQUESTS_CA_BUNDLE override ``verify``, and a proxy variable would send us elsewhere."""
    session = requests.Session()
    session.trust_env = False
    session.verify = str(stack.certificate)
    return session


def plain_session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    return session


@pytest.fixture(scope="module")
def old_pgbouncer():
    """Debian's own PgBouncer in front of an empty database, if it is older than 1.21 (Debian 12: 1.18)."""
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    stack = _stack(pgbouncer=True)
    stack.pgbouncer_binary = binary
    stack.database += "_old"
    if stack.pgbouncer_keeps_prepared_statements():
        stack.stop()
        pytest.skip(f"{binary} is 1.21 or later")
    stack.start_pooler_only()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def browser(stack) -> requests.Session:
    return https_session(stack)


class Node:
    """One gunicorn node, reached directly with the headers nginx adds, sharing a cookie jar with other Nodes.

    What a browser behind the proxy looks like to that node: Host as the browser sent it, X-Forwarded-Proto
    https. The cookie jar is a plain dict, sent whatever the cookies' Secure flag (this hop is plain HTTP).
    """

    def __init__(self, stack: LocalStack, index: int, cookies: dict[str, str]) -> None:
        self.base = f"http://127.0.0.1:{stack.node_ports[index]}"
        self.origin = stack.url
        self.headers = {"Host": stack.host, "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}
        self.cookies = cookies
        self.http = requests.Session()
        self.http.trust_env = False  # no proxy from the environment

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {**self.headers, **kwargs.pop("headers", {})}
        if method != "GET":
            headers.setdefault("Origin", self.origin)
            headers.setdefault("Referer", self.origin + "/")
            if "csrftoken" in self.cookies:
                headers.setdefault("X-CSRFToken", self.cookies["csrftoken"])
        response = self.http.request(
            method, self.base + path, headers=headers, cookies=self.cookies, allow_redirects=False, timeout=30, **kwargs
        )
        self.cookies.update({cookie.name: cookie.value for cookie in response.cookies if cookie.value})
        self.http.cookies.clear()  # the shared dict is the jar
        return response

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)


@pytest.fixture
def nodes(stack) -> tuple[Node, Node]:
    """The two nodes, one browser: a cookie set by one is sent to the other."""
    cookies: dict[str, str] = {}
    return Node(stack, 0, cookies), Node(stack, 1, cookies)


def query(stack: LocalStack, sql: str, params: tuple = ()) -> list[tuple]:
    """Read the stack's database directly (not through the pooler)."""
    with psycopg.connect(stack.direct_database_url) as connection:
        return connection.execute(sql, params).fetchall()  # type: ignore[arg-type]
