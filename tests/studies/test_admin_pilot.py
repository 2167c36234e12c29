"""The admin's pilot launch: the share beside the workers per condition, "Open as pilot" on a draft with a share,
"Open the rest" during the pilot, and a clear message when either is refused."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from annotation.services.studies import studies
from tests.studies.test_admin import _change_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


@pytest.fixture
def draft(make_study):
    from decimal import Decimal

    return make_study(status=Study.Status.DRAFT, pilot_workers_per_condition=1, base_reward=Decimal("1.50"))


def _messages(response):
    return [str(m) for m in response.context["messages"]]


def _page(client, study):
    return client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()


def test_open_as_pilot_then_open_the_rest_from_the_study_page(admin_client, draft):
    page = _page(admin_client, draft)
    assert 'name="pilot_workers_per_condition"' in page
    assert 'value="open-pilot"' in page and "Open as pilot (1 per condition)" in page
    url = reverse("admin:annotation_study_status", args=[draft.pk])
    shown = _messages(admin_client.post(url, {"to_status": "open-pilot"}, follow=True))
    assert f"“{draft.name}” is now open as a pilot (1 per condition)." in shown, shown
    draft.refresh_from_db()
    assert draft.in_pilot and draft.status == Study.Status.OPEN

    page = _page(admin_client, draft)
    assert 'value="open-rest"' in page and "Open the rest (3 per condition)" in page
    assert 'value="open-pilot"' not in page
    shown = _messages(admin_client.post(url, {"to_status": "open-rest"}, follow=True))
    assert f"“{draft.name}”: the rest is open, 3 workers per condition." in shown, shown
    draft.refresh_from_db()
    assert not draft.in_pilot and 'value="open-rest"' not in _page(admin_client, draft)


def test_the_rest_of_a_study_not_in_pilot_is_refused_with_its_reason(admin_client, draft):
    url = reverse("admin:annotation_study_status", args=[draft.pk])
    shown = _messages(admin_client.post(url, {"to_status": "open-rest"}, follow=True))
    assert any("not in a pilot" in m for m in shown), shown
    assert Study.objects.get(pk=draft.pk).status == Study.Status.DRAFT


def test_a_share_above_the_design_is_refused_on_the_form(admin_client, draft):
    url = reverse("admin:annotation_study_change", args=[draft.pk])
    response = admin_client.post(url, _change_data(draft, pilot_workers_per_condition=4))
    assert response.status_code == 200
    assert "at most the 3 workers per condition" in response.content.decode()
    assert Study.objects.get(pk=draft.pk).pilot_workers_per_condition == 1


def test_a_running_pilots_share_saved_from_the_form(admin_client, draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    url = reverse("admin:annotation_study_change", args=[draft.pk])
    response = admin_client.post(url, _change_data(draft, pilot_workers_per_condition=2))
    assert response.status_code == 302, response.content.decode()[-2000:]
    study = Study.objects.get(pk=draft.pk)
    assert study.pilot_workers_per_condition == 2 and study.in_pilot


def test_a_form_read_before_the_rest_opened_does_not_undo_it(admin_client, draft):
    """The form's save writes back no status change made meanwhile: the rest stays open."""
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    url = reverse("admin:annotation_study_change", args=[draft.pk])
    data = _change_data(Study.objects.get(pk=draft.pk), pilot_workers_per_condition=1)
    studies.change_status(study=draft, to_status=Study.Status.OPEN, rest=True)
    assert admin_client.post(url, data).status_code == 302
    study = Study.objects.get(pk=draft.pk)
    assert study.rest_opened_at is not None and not study.in_pilot
