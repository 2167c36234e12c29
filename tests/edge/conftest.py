"""Clients for the edge tests: an admin, and a worker in the test step of a small NER study."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Participation
from tests.worker.conftest import NER_TEST, NER_TRAIN, login, make_participation, make_task_with_items


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


@pytest.fixture
def worker_client(db):
    task = make_task_with_items(slug="ner", test=NER_TEST, train=NER_TRAIN)
    client = Client()
    login(client, make_participation(task, state=Participation.State.TEST))
    client.get("/api/session/current/")
    return client


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def assert_error(response, status: int, code: str):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"] == code and isinstance(body["detail"], str)
    return body
