"""The Dockerfile and compose.yaml agree with the tested scripts (tests/deploy/localstack.py).

This project's machines cannot run containers, so the files are never started here: these checks read
them. The last one hands compose.yaml to `docker compose config` (or Debian's docker-compose), which
validates it against the Compose schema; it runs in CI's multi-node stage, which installs the tool.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import REPO_ROOT
from tests.deploy.localstack import GUNICORN_COMMAND, LocalStack

COMPOSE = REPO_ROOT / "compose.yaml"
DOCKERFILE = REPO_ROOT / "Dockerfile"
NGINX_TEMPLATE = REPO_ROOT / "deploy" / "nginx" / "site.conf.template"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def settings_variables() -> set[str]:
    """Every variable the settings modules and gunicorn's config read, and the two read by name elsewhere."""
    names = {"DJANGO_SETTINGS_MODULE", "FORWARDED_ALLOW_IPS"}  # Django's and gunicorn's own
    for path in [*(REPO_ROOT / "annotation" / "settings").glob("*.py"), REPO_ROOT / "deploy" / "gunicorn.conf.py"]:
        names |= set(re.findall(r'(?:env_\w+|os\.environ\.get|_int)\(\s*"([A-Z][A-Z0-9_]*)"', path.read_text()))
    return names


def test_compose_has_the_services_of_the_tested_stack(compose):
    assert set(compose["services"]) == {"postgres", "redis", "migrate", "app", "worker", "beat", "nginx"}
    assert compose["services"]["app"]["deploy"]["replicas"] >= 2
    assert compose["services"]["beat"]["deploy"]["replicas"] == 1  # never two beats


def test_the_nodes_run_the_gunicorn_command_and_config_of_the_local_stack(compose):
    assert compose["services"]["app"]["command"] == GUNICORN_COMMAND
    cmd = re.search(r"^CMD (\[.*\])$", DOCKERFILE.read_text(), re.M)
    assert cmd and yaml.safe_load(cmd.group(1)) == GUNICORN_COMMAND
    assert compose["services"]["worker"]["command"][:4] == ["celery", "-A", "annotation", "worker"]
    assert compose["services"]["beat"]["command"][:4] == ["celery", "-A", "annotation", "beat"]


def test_the_image_runs_the_python_and_requirements_the_tests_use():
    dockerfile = DOCKERFILE.read_text()
    assert re.search(r"^FROM python:3\.11-", dockerfile, re.M)
    assert "COPY requirements.txt" in dockerfile and "pip install -r requirements.txt" in dockerfile
    assert "DJANGO_SETTINGS_MODULE=annotation.settings.production" in dockerfile


def test_every_variable_compose_sets_is_one_the_settings_read(compose):
    known = settings_variables()
    for name in ("app", "worker", "beat", "migrate"):
        environment = compose["services"][name]["environment"]
        assert set(environment) <= known, f"{name}: {sorted(set(environment) - known)}"


def local_stack_settings() -> dict[str, str]:
    stack = LocalStack(node_ports=[1], https_port=1, http_port=1, pgbouncer_port=1)  # nothing started
    try:
        return stack.settings()
    finally:
        stack.stop()


def test_compose_gives_the_app_what_the_local_stack_gives_it(compose):
    """The same production settings: every variable the stack sets for the app, bar this machine's tuning
    and the pooler's (compose has no PgBouncer), is set in compose too."""
    ours = local_stack_settings()
    tuning = {"GUNICORN_WORKERS", "GUNICORN_THREADS", "GUNICORN_ACCESS_LOG", "CELERY_QUEUE", "LOG_LEVEL"}
    pooler = {"DB_PREPARE_THRESHOLD", "DB_DISABLE_SERVER_SIDE_CURSORS"}
    app = compose["services"]["app"]["environment"]
    assert set(ours) - tuning - pooler <= set(app), sorted(set(ours) - tuning - pooler - set(app))
    for name in ("DJANGO_SETTINGS_MODULE", "PROXY_SSL_HEADER", "DB_CONN_MAX_AGE"):
        assert app[name] == ours[name], name
    assert set(ours) <= settings_variables(), sorted(set(ours) - settings_variables())


def test_nginx_gets_a_value_for_every_placeholder_of_the_site_template(compose):
    nginx = compose["services"]["nginx"]
    placeholders = set(re.findall(r"\$\{(ANNOTATION_[A-Z_]+)\}", NGINX_TEMPLATE.read_text()))
    assert placeholders <= set(nginx["environment"]), sorted(placeholders - set(nginx["environment"]))
    assert "./deploy/nginx/site.conf.template:/etc/nginx/templates/default.conf.template:ro" in nginx["volumes"]
    assert nginx["environment"]["ANNOTATION_STATIC_ROOT"] == compose["x-app-environment"]["STATIC_ROOT"]


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


@pytest.mark.multinode
def test_docker_compose_config_accepts_the_file():
    command = _compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor docker-compose is installed (scripts/install_deploy_tools.sh)")
    env = {**os.environ, "SECRET_KEY": "checked-not-used", "POSTGRES_PASSWORD": "checked-not-used"}
    result = subprocess.run([*command, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    missing = subprocess.run(
        [*command, "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        env={k: v for k, v in env.items() if k != "SECRET_KEY"},
    )
    assert missing.returncode != 0 and "SECRET_KEY" in missing.stderr  # no container starts without one
