"""A participant withdraws: answers gone, identifier nowhere, payment rows kept, their link refuses them."""

import io
import json
import logging

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from annotation.models import ConsentDecline, Participation, ProlificAction, ProlificEvent, Response, Withdrawal
from tests.entry_link import take_part
from tests.factories import ConditionFactory, StudyFactory, make_classification_task

pytestmark = pytest.mark.django_db

PID = "5f0c0ffee0ddba11deadbeef"
OTHER = "60aaaaaaaaaaaaaaaaaaaaaa"


def _answer_everything(client, pid: str, slug: str = "w-study", label: str = "negative") -> Participation:
    take_part(client, slug, {"PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": f"sess-{pid}"})
    client.post("/api/session/start/", content_type="application/json")
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        client.post(
            "/api/session/submit/",
            {"item": item["item"], "label": label, "confidence": 2},
            content_type="application/json",
        )
    return Participation.objects.get(worker__external_id=pid)


@pytest.fixture
def study():
    task = make_classification_task(slug="wtask", n_test=3)
    study = StudyFactory(
        task=task, slug="w-study", workers_per_condition=2, outcome_codes={"completed": {"code": "DONE42"}}
    )
    ConditionFactory(study=study, shots=0)
    return study


def _everything_stored(*, but_the_trail: bool = False, dump: str | None = None) -> str:
    """Every table as dumpdata writes it (an independent reading of every column, JSON ones included);
    ``but_the_trail``: without the audit trail's rows (of ``dump``, an earlier reading, when given)."""
    if dump is None:
        out = io.StringIO()
        call_command("dumpdata", stdout=out)
        dump = out.getvalue()
    if not but_the_trail:
        return dump
    return json.dumps([row for row in json.loads(dump) if row["model"] != "annotation.auditentry"])


def _withdraw(*args: str) -> str:
    out = io.StringIO()
    call_command("withdraw_participant", "--platform", "prolific", "--id", *args, stdout=out)
    return out.getvalue()


def test_after_a_withdrawal_the_identifier_is_stored_nowhere_and_the_payment_rows_stay(client, study):
    mine = _answer_everything(client, PID)
    client.logout()
    _answer_everything(client, OTHER)
    action = ProlificAction.objects.create(
        participation=mine, kind="bonus", action="BONUS", status="done", amount="1.50", currency="GBP"
    )
    action.calls.create(
        method="POST",
        path="/submissions/bonus-payments/",
        request={"csv_bonuses": f"{PID},1.50\n{OTHER},1.50"},
        ok=True,
    )
    ProlificEvent.objects.create(
        event_id="e1",
        source="webhook",
        event_type="submission.status.change",
        resource_id="sess",
        participant_id=PID,
        participation=mine,
        payload={"participant_id": PID, "status": "APPROVED"},
    )
    mine.events.create(to_state="completed", at=mine.created_at, reason=f"entry of {PID}")
    assert PID in _everything_stored()

    dry = _withdraw(PID, "--study", "w-study")
    assert "dry run" in dry and PID not in dry and "delete 3 answer(s)" in dry
    assert Response.objects.filter(participation=mine).count() == 3  # the dry run changed nothing

    _withdraw(PID, "--study", "w-study", "--run")
    stored = _everything_stored()
    assert PID not in stored
    assert OTHER in stored  # the other participant is untouched, in the shared bulk-bonus call too
    assert not Response.all_objects.filter(participation=mine).exists()
    assert Participation.objects.count() == 1  # the withdrawn one leaves every count
    kept = ProlificAction.objects.get(pk=action.pk)
    assert str(kept.amount) == "1.50" and kept.participation.worker.external_id.startswith("pseud-")
    record = Withdrawal.objects.get()
    assert (record.study, record.condition) == (study, mine.condition)


def test_a_withdrawn_worker_coming_back_is_refused_as_one_who_took_part(client, study):
    _answer_everything(client, PID)
    _withdraw(PID, "--run")
    client.logout()
    page = client.get(f"/join/w-study/?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x")
    assert "already" in page.content.decode().lower()
    assert Participation.all_objects.filter(is_preview=False).count() == 1  # no second participation


def test_bad_input_changes_nothing(client, study):
    _answer_everything(client, PID)
    other_study = StudyFactory(task=make_classification_task(slug="t2"), slug="other-study")
    ConditionFactory(study=other_study, shots=0)
    before = _everything_stored()
    with pytest.raises(CommandError, match="no prolific participant"):
        _withdraw("nobody", "--run")
    with pytest.raises(CommandError, match="did not take part in study 'other-study'"):
        _withdraw(PID, "--study", "other-study", "--run")
    assert _everything_stored() == before
    _withdraw(PID, "--run")
    after = _everything_stored()
    with pytest.raises(CommandError, match="already withdrawn"):
        _withdraw(PID, "--run")
    assert _everything_stored() == after


def test_a_decline_is_a_consent_record_and_goes(client, study):
    ConsentDecline.objects.create(study=study, worker=_answer_everything(client, PID).worker, at=timezone.now())
    _withdraw(PID, "--run")
    assert not ConsentDecline.objects.exists()


def test_participant_data_holds_every_row_about_them_and_nothing_of_others(client, study):
    mine = _answer_everything(client, PID)
    client.logout()
    _answer_everything(client, OTHER)
    out = io.StringIO()
    call_command("participant_data", "--platform", "prolific", "--id", PID, stdout=out)
    data = json.loads(out.getvalue())
    assert [w["external_id"] for w in data["worker"]] == [PID]
    assert [p["id"] for p in data["participations"]] == [mine.pk]
    assert sorted(a["id"] for a in data["answers"]) == sorted(
        Response.all_objects.filter(participation=mine).values_list("pk", flat=True)
    )
    assert OTHER not in out.getvalue()
    with pytest.raises(CommandError, match="no prolific participant"):
        call_command("participant_data", "--platform", "prolific", "--id", "nobody")


def test_an_entry_logs_no_identifier(client, study, caplog):
    caplog.set_level(logging.DEBUG)
    _answer_everything(client, PID)
    assert caplog.records and PID not in caplog.text


def test_the_statement_counts_the_withdrawal_and_leaves_their_answers_out(client, study):
    from annotation.reporting.statement import consent_facts

    study.consent_required, study.consent_text = True, "# Consent\n\nYou agree."
    study.save()
    _answer_everything(client, PID)
    client.logout()
    _answer_everything(client, OTHER)
    assert "(2 agreed, 0 declined;" in consent_facts(study)
    _withdraw(PID, "--run")
    assert "(1 agreed, 0 declined, 1 withdrew later (answers erased);" in consent_facts(study)


def test_the_admin_action_shows_the_dry_run_then_withdraws(client, study):
    from django.contrib.auth.models import User
    from django.test import Client

    mine = _answer_everything(client, PID)
    User.objects.create_superuser("pi", "pi@example.org", "pw")
    staff = Client()
    staff.login(username="pi", password="pw")
    url = "/admin/annotation/participation/"
    form = {"action": "withdraw_participants", "_selected_action": [mine.pk]}
    page = staff.post(url, form)
    assert page.status_code == 200 and "delete 3 answer(s)" in page.content.decode()
    assert PID not in page.content.decode()
    assert Response.objects.filter(participation=mine).count() == 3  # the page changed nothing
    staff.post(url, {**form, "apply": "1"})
    assert Withdrawal.objects.get().run_by == "pi"
    assert PID not in _everything_stored()


def test_the_table_is_recomputed_without_them(client, study):
    from annotation.reporting.scores import annotator_rows

    _answer_everything(client, PID, label="negative")
    client.logout()
    other = _answer_everything(client, OTHER, label="positive")
    gold = [r.example.gold_answers for r in Response.objects.filter(participation=other, phase="test")]
    expected = sum(g == ["positive"] for g in gold) / len(gold)  # S1 of one label: 1 when it is the gold
    assert len(annotator_rows(studies=[study])) == 2
    _withdraw(PID, "--run")
    [row] = annotator_rows(studies=[study])
    assert (row.participation_id, row.test_s1) == (other.pk, pytest.approx(expected))
