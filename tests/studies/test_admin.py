"""The Django admin for studies, workers and participations."""

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.admin.study_forms import StudyForm
from annotation.models import AnswerSpan, FilterDecision, Participation, Study, Worker
from annotation.services.admission import entry
from tasks_app.models import ExampleSetItem
from tests.factories import ExampleSetFactory, ParticipationFactory, WorkerFactory
from tests.studies.conftest import inhouse

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def admin_user(db):
    return get_user_model().objects.create_superuser("admin", password="pw")


@pytest.fixture
def client(client, admin_user):
    client.force_login(admin_user)
    return client


def _action(client, model, action, ids, **extra):
    url = reverse(f"admin:annotation_{model}_changelist")
    return client.post(url, {"action": action, "_selected_action": [str(i) for i in ids], **extra}, follow=True)


def test_changelist_offers_the_standard_design_and_shows_slots_filled(client, study):
    entry.join_study(study=study, params=inhouse("alice"))
    page = client.get(reverse("admin:annotation_study_changelist")).content.decode()
    assert "Create standard CLUES design" in page
    assert "1 / 12" in page


def test_change_page_shows_entry_links_counts_and_export_links(client, study):
    entry.join_study(study=study, params=inhouse("alice"))
    page = client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert f"http://testserver/join/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in page
    assert f"http://testserver/join/{study.slug}/?worker_id=" in page
    assert '<table class="cohorts">' in page and "in training" in page
    assert reverse("admin:annotation_study_participants", args=[study.task_id, "mturk"]) in page


def test_standard_design_view_creates_the_study_in_one_step(client, task):
    url = reverse("admin:annotation_study_standard_design")
    assert client.get(url).status_code == 200
    response = client.post(url, {"task": task.pk, "split_number": 1, "workers_per_condition": 3, "open_now": "on"})
    study = Study.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "admin:annotation_study_change", args=[study.pk]
    )
    assert sorted(study.conditions.values_list("shots", flat=True)) == [0, 10, 20, 30]
    # "Open right away" opens through the launch check: a new study has no posted reward yet, so it stays a draft.
    page = client.get(response["Location"]).content.decode()
    assert study.status == "draft" and "not opened: No posted reward" in page


def test_standard_design_view_offers_the_training_filter(client, task):
    url = reverse("admin:annotation_study_standard_design")
    assert 'name="filter_rule"' in client.get(url).content.decode()
    data = {"task": task.pk, "split_number": 1, "workers_per_condition": 3}
    client.post(url, {**data, "filter_rule": "relative", "filter_threshold": "0.15", "filter_reference": "median"})
    study = Study.objects.get()
    assert (study.filter_rule, study.filter_threshold, study.filter_reference) == ("relative", 0.15, "median")


def test_standard_design_view_shows_why_it_cannot(client, task):
    task.splits.update(is_nested=False)
    response = client.post(
        reverse("admin:annotation_study_standard_design"),
        {"task": task.pk, "split_number": 1, "workers_per_condition": 3},
    )
    assert response.status_code == 200 and "not nested" in response.content.decode()
    assert not Study.objects.exists()


def test_add_form_creates_the_chosen_conditions_and_refuses_missing_levels(client, task):
    url = reverse("admin:annotation_study_add")
    data = {
        "name": "Mine",
        "slug": "mine",
        "task": task.pk,
        "split_number": 1,
        "condition_shots": ["0", "20"],
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
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    study = Study.objects.get(slug="mine")
    assert sorted(study.conditions.values_list("shots", flat=True)) == [0, 20]
    response = client.post(url, {**data, "slug": "other", "split_number": 2})
    assert response.status_code == 200 and "no training split 2" in response.content.decode()
    assert not Study.objects.filter(slug="other").exists()
    response = client.post(url, {**data, "slug": "strict", "filter_rule": "absolute", "filter_threshold": 80})
    assert response.status_code == 200 and "from 0 to 1" in response.content.decode()
    assert not Study.objects.filter(slug="strict").exists()


def test_status_actions_apply_the_rules(client, task, make_study):
    draft, closed = make_study(status="draft"), make_study(status="closed")
    page = _action(client, "study", "open_studies", [draft.pk]).content.decode()
    assert "not opened: No posted reward" in page  # the launch check's blocker (services.studies.launch)
    Study.objects.filter(pk=draft.pk).update(base_reward=1)
    page = _action(client, "study", "open_studies", [draft.pk, closed.pk]).content.decode()
    draft.refresh_from_db(), closed.refresh_from_db()
    assert draft.status == "open" and closed.status == "closed"
    assert "A closed study cannot become open" in page
    _action(client, "study", "pause_studies", [draft.pk])
    draft.refresh_from_db()
    assert draft.status == "paused"
    _action(client, "study", "close_studies", [draft.pk])
    draft.refresh_from_db()
    assert draft.status == "closed"


def test_participant_downloads(client, study):
    ParticipationFactory(
        condition=study.conditions.get(shots=0), worker=WorkerFactory(platform="prolific", external_id="PX")
    )
    response = client.get(reverse("admin:annotation_study_participants", args=[study.task_id, "prolific"]))
    assert response.content == b"PX\n" and "attachment" in response["Content-Disposition"]
    bad = client.get(reverse("admin:annotation_study_participants", args=[study.task_id, "xls"]))
    assert bad.status_code == 400


def test_worker_block_and_unblock_actions(client):
    worker = WorkerFactory()
    _action(client, "worker", "block_workers", [worker.pk])
    worker.refresh_from_db()
    assert worker.blocked and worker.blocked_reason == "blocked from the admin (by admin)"
    _action(client, "worker", "unblock_workers", [worker.pk])
    worker.refresh_from_db()
    assert not worker.blocked
    assert client.get(reverse("admin:annotation_worker_changelist")).status_code == 200


def test_participation_page_shows_events_and_decisions(client, study):
    p = entry.join_study(study=study, params=inhouse("alice")).participation
    page = client.get(reverse("admin:annotation_participation_change", args=[p.pk])).content.decode()
    assert "joined" in page and "Filter decisions" in page


def test_override_action_asks_for_a_reason_then_readmits_and_logs_it(client, study):
    p = ParticipationFactory(condition=study.conditions.get(shots=10), state=State.EXCLUDED)
    page = _action(client, "participation", "readmit_participations", [p.pk]).content.decode()
    assert "The reason is logged" in page
    p.refresh_from_db()
    assert p.state == State.EXCLUDED  # nothing until a reason is given
    page = _action(client, "participation", "readmit_participations", [p.pk], apply="1", reason="").content.decode()
    assert "This field is required" in page
    _action(client, "participation", "readmit_participations", [p.pk], apply="1", reason="browser crashed")
    p.refresh_from_db()
    assert p.state == State.TEST
    decision = FilterDecision.objects.get(participation=p)
    assert decision.is_override and decision.reason == "browser crashed" and decision.decided_by.username == "admin"


def test_exclude_action_reports_what_it_cannot_do(client, study):
    p = ParticipationFactory(condition=study.conditions.get(shots=10), state=State.ABANDONED)
    page = _action(client, "participation", "exclude_participations", [p.pk], apply="1", reason="x").content.decode()
    assert "cannot go from abandoned to excluded" in page
    assert Worker.objects.count() == 1


def _change_data(study, **overrides):
    data = {
        "name": study.name,
        "split_number": study.split_number,
        "condition_shots": ["0", "10", "20", "30"],
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
        "outcome_codes": json.dumps(study.outcome_codes),
        "conditions-TOTAL_FORMS": 4,
        "conditions-INITIAL_FORMS": 4,
        "conditions-MIN_NUM_FORMS": 0,
        "conditions-MAX_NUM_FORMS": 1000,
        "attention_checks-TOTAL_FORMS": 0,
        "attention_checks-INITIAL_FORMS": 0,
    }
    for i, condition in enumerate(study.conditions.order_by("shots")):
        data[f"conditions-{i}-id"] = condition.pk
        data[f"conditions-{i}-study"] = study.pk
    return {**data, **overrides}


def test_editing_settings_keeps_a_status_changed_meanwhile(client, study):
    entry.join_study(study=study, params=inhouse("alice"))
    url = reverse("admin:annotation_study_change", args=[study.pk])
    Study.objects.filter(pk=study.pk).update(status="paused")  # e.g. an action in another tab
    response = client.post(url, _change_data(study, hourly_rate="14.00"))
    assert response.status_code == 302, response.content.decode()[:3000]
    study.refresh_from_db()
    assert (study.status, str(study.hourly_rate)) == ("paused", "14.00")


def test_editing_the_conditions_after_workers_joined_is_refused(client, study):
    entry.join_study(study=study, params=inhouse("alice"))
    response = client.post(
        reverse("admin:annotation_study_change", args=[study.pk]), _change_data(study, condition_shots=["0", "10"])
    )
    assert response.status_code == 200 and "already joined" in response.content.decode()
    assert study.conditions.count() == 4


def test_changing_the_test_order_after_workers_joined_is_refused(client, study):
    entry.join_study(study=study, params=inhouse("alice"))
    response = client.post(
        reverse("admin:annotation_study_change", args=[study.pk]), _change_data(study, test_order="shuffled")
    )
    assert response.status_code == 200 and "reorder the items" in response.content.decode()
    study.refresh_from_db()
    assert study.test_order == "fixed"


def test_the_conditions_offer_every_shot_level_a_split_has(client, task):
    split = task.splits.get(number=1)
    ExampleSetFactory(task=task, role="train", split=split, shots=5)
    html = client.get(reverse("admin:annotation_study_add")).content.decode()
    offered = re.findall(r'name="condition_shots" value="(\d+)"', html)
    assert offered == ["0", "5", "10", "20", "30"]


def test_every_admin_page_of_the_area_renders(client, study):
    p = entry.join_study(study=study, params=inhouse("alice")).participation
    for url in (
        reverse("admin:annotation_study_add"),
        reverse("admin:annotation_study_changelist"),
        reverse("admin:annotation_worker_changelist"),
        reverse("admin:annotation_worker_change", args=[p.worker_id]),
        reverse("admin:annotation_participation_changelist") + "?state=claimed",
    ):
        assert client.get(url).status_code == 200, url


def test_staff_without_permissions_cannot_use_the_area_s_own_views(client, study):
    staff = get_user_model().objects.create_user("staff", password="pw", is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("admin:annotation_study_standard_design")).status_code == 403
    assert client.get(reverse("admin:annotation_study_participants", args=[study.task_id, "mturk"])).status_code == 403


def test_the_study_form_has_every_editable_study_field_but_status():
    # StudyForm lists its fields (not `exclude`): a new Study field is left out until it is added there.
    editable = [f.name for f in Study._meta.concrete_fields if f.editable and not f.auto_created]
    assert sorted(StudyForm._meta.fields) == sorted(name for name in editable if name != "status")


def test_filter_decisions_and_spans_and_set_items_read_as_text():
    assert str(FilterDecision(participation_id=7, passed=False, is_override=True)) == "7: failed (override)"
    assert str(FilterDecision(participation_id=7, passed=True)) == "7: passed"
    assert str(AnswerSpan(response_id=5, start=0, end=3)) == "5[0:3]"
    assert str(ExampleSetItem(example_set_id=2, position=4, example_id=9)) == "2#4: example 9"


def _field_errors(html: str) -> dict[str, str]:
    """The admin form's errors by field (its rows are classed field-<name> and list the errors inside)."""
    found = {}
    for name, body in re.findall(r'<div class="form-row[^"]*field-(\w+)[^"]*">(.*?)</div>\s*</div>', html, re.S):
        if "errorlist" in body:
            found[name] = re.sub(r"<[^>]+>", " ", body.split("errorlist", 1)[1])
    return found


def test_a_negative_rate_is_an_error_on_the_field_not_the_database_constraint(client, study):
    url = reverse("admin:annotation_study_change", args=[study.pk])
    response = client.post(url, _change_data(study, hourly_rate="-5.00"))
    html = response.content.decode()
    assert response.status_code == 200 and "study_rate_not_negative" not in html
    assert "An hourly rate is not negative." in _field_errors(html).get("hourly_rate", ""), _field_errors(html)
    study.refresh_from_db()
    assert str(study.hourly_rate) == "12.00"


def test_the_survey_and_comprehension_errors_show_with_the_others_at_once(client, study):
    url = reverse("admin:annotation_study_change", args=[study.pk])
    bad = _change_data(
        study,
        hourly_rate="-1",
        filter_threshold="3",
        survey="age: How old are you? | single",  # a single-choice question without options
        comprehension=json.dumps({"not": "a list"}),
    )
    errors = _field_errors(client.post(url, bad).content.decode())
    assert {"hourly_rate", "filter_threshold", "survey", "comprehension"} <= set(errors), errors
