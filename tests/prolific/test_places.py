"""Places follow the design: an exclusion adds a place for its replacement, a full study is paused, a freed
slot starts it again; the dry run states the cost and changes nothing (the stand-in keeps Prolific's state)."""

from decimal import Decimal

from django.core.management import call_command

from annotation.models import Participation, ProlificAction, ProlificCall
from annotation.services.admission import abandonment
from annotation.services.prolific import operations
from annotation.services.state import lifecycle

State = Participation.State
Kind = Participation.ExclusionKind


def places(standin):
    return standin.places["PS1"]["total"], standin.studies["PS1"]["status"]


def test_the_dry_run_states_the_pause_and_changes_nothing(full):
    study, standin, _ = full
    report = operations.plan(operation="places", study=study)
    assert [(r.action, r.state) for r in report.rows] == [("PAUSE", "to do")]
    assert "Prolific study PS1: 2 places, 2 taken, ACTIVE" in report.notes
    assert standin.writes() == [] and not ProlificAction.objects.exists() and not ProlificCall.objects.exists()
    assert places(standin) == (2, "ACTIVE")


def test_a_full_study_is_paused_and_a_second_run_sends_nothing(full):
    study, standin, _ = full
    assert operations.run(operation="places", study=study).counts == {"done": 1}
    assert places(standin) == (2, "PAUSED")
    sent = len(standin.writes())
    assert operations.run(operation="places", study=study).rows == []
    assert len(standin.writes()) == sent


def test_a_filter_exclusion_adds_one_place_and_resumes_after_showing_the_cost(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    operations.run(operation="places", study=study)  # paused while full
    p1 = ps[1]
    # The exclusion itself, through the one function, with the study opted in: the sync follows on commit.
    with django_capture_on_commit_callbacks() as queued:
        lifecycle.exclude(p1, reason="low training score", kind=Kind.TRAINING_FILTER)
    dry = operations.plan(operation="places", study=study)
    assert [(r.participant, r.action, r.state) for r in dry.rows] == [
        ("p1", "PLACE +1", "to do"),
        ("-", "PLACES 2→3", "to do"),
        ("-", "RESUME", "to do"),
    ]
    assert dry.total == Decimal("3.00") and "expected cost 1 × reward (3.00 GBP each)" in dry.rows[1].note
    assert places(standin) == (2, "PAUSED")
    for callback in queued:  # Celery eager: the sync runs now
        callback()
    assert places(standin) == (3, "ACTIVE")
    action = ProlificAction.objects.get(participation=p1, kind="places")
    assert (action.status, action.prolific_id) == ("done", "PS1")
    sent = len(standin.writes())
    again = operations.run(operation="places", study=study)
    assert again.counts == {"done": 1} and len(standin.writes()) == sent  # p1's place is recorded: nothing sent


def test_a_return_reopens_its_own_place_and_only_resumes(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    operations.run(operation="places", study=study)
    standin.set_status("sub-p0", "RETURNED", notify=False)  # Prolific reopens the place itself
    with django_capture_on_commit_callbacks(execute=True):
        abandonment.abandon(ps[0], reason="returned the study on Prolific")
    assert places(standin) == (2, "ACTIVE") and standin.places["PS1"]["taken"] == 1
    assert not ProlificAction.objects.filter(kind="places").exists()


def test_the_last_claim_pauses_the_study(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.record_claim(ps[1])  # the slot taken last (at consent): every slot is held now
    assert places(standin) == (2, "PAUSED")


def test_without_the_study_opting_in_nothing_follows_a_change(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    study.prolific_sync_places = False
    study.save()
    with django_capture_on_commit_callbacks(execute=True) as queued:
        lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    assert queued == [] and standin.writes() == []


def test_a_lost_answer_to_the_places_call_is_settled_by_the_next_run(full):
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="attention", kind=Kind.ATTENTION)
    standin.drop_reply["studies/PS1/"] = "reset"
    first = operations.run(operation="places", study=study)
    assert {r.action: r.state for r in first.rows}["PLACES 2→3"] == "failed"
    assert places(standin)[0] == 3  # it took effect on Prolific
    assert ProlificAction.objects.get(kind="places").status == "uncertain"
    second = operations.run(operation="places", study=study)
    assert [(r.action, r.state) for r in second.rows] == [("PLACE +1", "done")]
    assert ProlificAction.objects.get(kind="places").status == "done" and places(standin)[0] == 3


def test_the_command_prints_the_plan_and_runs_it(full, capsys):
    study, standin, _ = full
    call_command("prolific", "places", "--study", study.slug)
    out = capsys.readouterr().out
    assert "Dry run" in out and "PAUSE" in out and places(standin) == (2, "ACTIVE")
    call_command("prolific", "places", "--study", study.slug, "--run")
    assert places(standin) == (2, "PAUSED")
