"""The command, admin, dashboard and API reach the same operations; with no token each says it is off."""

import json
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Participation, ProlificAction, ProlificJob
from tests.prolific.conftest import join

State = Participation.State


@pytest.fixture
def two_done(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED, slot=0)
    join(prolific_on, condition, "p2", state=State.COMPLETED, slot=1)
    return study, prolific_on


def test_the_command_shows_the_plan_by_default(two_done, capsys):
    study, standin = two_done
    call_command("prolific", "bonus", "--study", study.slug)
    out = capsys.readouterr().out
    assert "Dry run" in out and "p1" in out and "3.00 GBP" in out and "bonuses 6.00" in out
    assert standin.requests == [("GET", "/api/v1/studies/PS1/", {})]  # only the posted reward is read: nothing sent


def test_the_command_runs_and_prints_json(two_done, capsys):
    study, standin = two_done
    call_command("prolific", "review", "--study", study.slug, "--run", "--json")
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is False and report["counts"] == {"done": 2}
    assert standin.submissions["sub-p1"]["status"] == "APPROVED"


def test_the_command_fails_loudly_when_a_participant_fails(two_done):
    study, standin = two_done
    standin.fail_participants["p2"] = 500
    with pytest.raises(CommandError, match="failed or are uncertain"):
        call_command("prolific", "review", "--study", study.slug, "--run")
    assert standin.submissions["sub-p1"]["status"] == "APPROVED"


def test_the_command_says_the_feature_is_off_without_a_token(prolific_study, settings):
    settings.PROLIFIC_API_TOKEN = ""
    study, _ = prolific_study
    with pytest.raises(CommandError, match="PROLIFIC_API_TOKEN"):
        call_command("prolific", "review", "--study", study.slug, "--run")


def test_the_dashboard_shows_the_dry_run_then_runs_on_post(two_done, admin_client, django_capture_on_commit_callbacks):
    study, standin = two_done
    page = admin_client.get(reverse("dashboard:study", args=[study.slug]))
    assert reverse("dashboard:prolific", args=[study.slug, "bonus"]) in page.content.decode()
    url = reverse("dashboard:prolific", args=[study.slug, "bonus"])
    dry = admin_client.get(url)
    assert "Dry run: nothing has been sent" in dry.content.decode() and standin.requests == [
        ("GET", "/api/v1/studies/PS1/", {})
    ]
    # The POST queues a Celery job (eager here, once the request's transaction commits) and redirects to its
    # page, which shows the report once it is done.
    with django_capture_on_commit_callbacks(execute=True):
        queued = admin_client.post(url)
    assert queued.status_code == 302
    job = ProlificJob.objects.get()
    assert queued["Location"] == reverse("dashboard:prolific-job", args=[study.slug, job.pk])
    done = admin_client.get(queued["Location"])
    assert "Run finished" in done.content.decode() and "Done" in done.content.decode()
    job.refresh_from_db()
    assert (job.status, job.progress, job.report["counts"]) == ("done", {"done": 2, "total": 2}, {"done": 2})
    assert standin.paid_to("p1") == Decimal("3.00")
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url)
    assert standin.paid_to("p1") == Decimal("3.00")


def test_the_dashboard_says_off_and_refuses_to_run_without_a_token(prolific_study, admin_client, settings):
    settings.PROLIFIC_API_TOKEN = ""
    study, _ = prolific_study
    page = admin_client.get(reverse("dashboard:study", args=[study.slug])).content.decode()
    assert "Prolific integration is off" in page
    assert admin_client.post(reverse("dashboard:prolific", args=[study.slug, "review"])).status_code == 409


def test_the_dashboard_page_is_staff_only(prolific_study, client):
    study, _ = prolific_study
    response = client.post(reverse("dashboard:prolific", args=[study.slug, "review"]))
    assert response.status_code == 302 and "login" in response["Location"]


def test_the_admin_action_opens_the_dry_run_and_confirming_runs_it(
    two_done, admin_client, django_capture_on_commit_callbacks
):
    study, standin = two_done
    response = admin_client.post(
        reverse("admin:annotation_study_changelist"),
        {"action": "prolific_review", "_selected_action": [study.pk]},
    )
    assert response.status_code == 302
    dry = admin_client.get(response["Location"])
    assert "Dry run" in dry.content.decode() and standin.requests == []
    with django_capture_on_commit_callbacks(execute=True):
        queued = admin_client.post(response["Location"])
    job = ProlificJob.objects.get()
    assert queued["Location"] == reverse("admin:annotation_study_prolific_job", args=[study.pk, job.pk])
    assert ProlificAction.objects.filter(status="done").count() == 2
    page = admin_client.get(queued["Location"]).content.decode()
    assert "Run finished" in page and "approved in bulk" in page


def test_the_api_gives_the_dry_run_and_the_run(two_done, admin_client):
    study, standin = two_done
    url = reverse("study-prolific", args=[study.pk, "review"])
    dry = admin_client.post(url, {}, content_type="application/json")
    assert dry.status_code == 200 and dry.json()["dry_run"] is True and standin.requests == []
    done = admin_client.post(url, {"run": True}, content_type="application/json")
    assert done.json()["counts"] == {"done": 2}


def test_the_api_answers_409_when_off_and_404_for_an_unknown_operation(prolific_study, admin_client, settings):
    settings.PROLIFIC_API_TOKEN = ""
    study, _ = prolific_study
    off = admin_client.post(reverse("study-prolific", args=[study.pk, "review"]), {}, content_type="application/json")
    assert off.status_code == 409 and off.json()["error"] == "prolific_off"
    unknown = admin_client.post(reverse("study-prolific", args=[study.pk, "nope"]), {}, content_type="application/json")
    assert unknown.status_code == 404


def test_a_second_run_of_a_study_is_refused_while_one_is_queued(two_done, admin_client):
    study, standin = two_done
    url = reverse("dashboard:prolific", args=[study.slug, "review"])
    assert admin_client.post(url).status_code == 302  # queued: its task is sent only once the request commits
    refused = admin_client.post(url)
    assert refused.status_code == 409 and "already queued" in refused.content.decode()
    assert ProlificJob.objects.count() == 1 and standin.writes() == []
    page = admin_client.get(reverse("dashboard:prolific-job", args=[study.slug, ProlificJob.objects.get().pk]))
    assert 'http-equiv="refresh"' in page.content.decode()  # the page reloads until the run ends
