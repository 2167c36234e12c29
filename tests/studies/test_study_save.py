"""Saving a study: one service (services.studies.studies.study_save) that the admin, the API and the commands use."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from annotation.protocol.outcomes import Outcome
from annotation.services.studies import studies

pytestmark = pytest.mark.django_db
EVERY_OUTCOME = {o.value for o in Outcome}


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


def test_study_save_gives_every_outcome_a_code_and_stores_a_null_survey_or_translations_as_none(task):
    study = Study(slug="s", name="S", task=task, outcome_codes={"declined": {"code": "NO"}})
    study.survey, study.translations = None, None
    studies.study_save(study=study)
    study.refresh_from_db()
    assert set(study.outcome_codes) == EVERY_OUTCOME and study.outcome_codes["declined"] == {"code": "NO", "url": ""}
    assert (study.survey, study.translations) == ([], {})
    codes = study.outcome_codes
    studies.study_save(study=study)  # codes are kept for the study's life
    study.refresh_from_db()
    assert study.outcome_codes == codes


def test_a_study_added_in_the_admin_has_a_code_for_every_outcome(admin_client, task):
    data = {
        "name": "Mine",
        "slug": "mine",
        "task": task.pk,
        "split_number": 1,
        "condition_shots": ["0"],
        "workers_per_condition": 3,
        "hourly_rate": "12.00",
        "currency": "USD",
        "base_reward": "0.00",
        "test_order": "fixed",
        "abandon_after_minutes": 60,
        "filter_rule": "none",
        "filter_threshold": 0,
        "filter_reference": "mean",
        "filter_group_timeout_minutes": 120,
        "conditions-TOTAL_FORMS": 0,
        "conditions-INITIAL_FORMS": 0,
    }
    response = admin_client.post(reverse("admin:annotation_study_add"), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert set(Study.objects.get(slug="mine").outcome_codes) == EVERY_OUTCOME


def test_a_study_created_through_the_api_has_a_code_for_every_outcome(admin_client, task):
    response = admin_client.post(
        "/api/studies/", {"task": "sst2", "slug": "api", "name": "API", "shots": [0]}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert set(Study.objects.get(slug="api").outcome_codes) == EVERY_OUTCOME


def test_a_study_created_by_the_clues_command_has_a_code_for_every_outcome(task):
    call_command("create_clues_studies", "--split", "1")  # the tasks not in the database are skipped
    study = Study.objects.get(task=task)
    assert set(study.outcome_codes) == EVERY_OUTCOME
