"""The places sync (annotation/services/prolific/places.py) pinned where mutation testing found it loose
(scripts/mutation.sh places): what each place given is recorded as, what a refused or lost call leaves, and
which study the sync acts on. Places counted by hand: two slots, two places on Prolific study PS1."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from annotation.models import Participation, ProlificAction, ProlificCall, ProlificEvent, Study
from annotation.services.prolific import operations, places, webhooks
from annotation.services.prolific.runs import CallLog, make_client
from annotation.services.state import lifecycle
from tests.factories import ConditionFactory, StudyFactory
from tests.prolific.conftest import join

State = Participation.State
Kind = Participation.ExclusionKind
PLACES_LOG = "annotation.services.prolific.places"
T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def test_a_place_given_is_recorded_as_a_place_on_the_prolific_study(full):
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    report = operations.run(operation="places", study=study)
    assert [(r.participant, r.action, r.state) for r in report.rows] == [
        ("p1", "PLACE +1", "done"),
        ("-", "PLACES 2→3", "done"),
    ]
    action = ProlificAction.objects.get(kind="places")
    assert (action.action, action.status, action.prolific_id) == ("PLACE", "done", "PS1")


def test_a_place_prolific_already_has_is_recorded_the_same_way(full):
    study, standin, ps = full
    standin.set_places("PS1", 3)  # someone raised it by hand
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    operations.run(operation="places", study=study)
    action = ProlificAction.objects.get(kind="places")
    assert (action.action, action.status, action.prolific_id) == ("PLACE", "done", "PS1")
    assert not any(method == "PATCH" for method, _, _ in standin.writes())


def test_a_refused_places_call_fails_the_places_with_why(full):
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    standin.update_study = lambda study_id, body: (400, {"error": {"detail": "Places are locked"}})
    report = operations.run(operation="places", study=study)
    rows = {r.action: r for r in report.rows}
    assert (rows["PLACES 2→3"].state, rows["PLACE +1"].state) == ("failed", "failed")
    action = ProlificAction.objects.get(kind="places")
    assert action.status == "failed"  # refused: nothing changed on Prolific, the next run tries again
    assert "Places are locked" in action.error and action.error == rows["PLACE +1"].note


def test_the_sync_acts_on_the_study_it_is_given_and_only_if_it_opts_in(full):
    study, standin, ps = full
    other = StudyFactory(prolific_sync_places=True)
    ConditionFactory(study=other, shots=0)
    assert places.sync(study_id=study.pk) == {"done": 1}  # the full study paused
    assert standin.studies["PS1"]["status"] == "PAUSED"
    assert ProlificCall.objects.filter(path="studies/PS1/transition/").count() == 1  # logged
    study.prolific_sync_places = False
    study.save()
    assert places.sync(study_id=study.pk) == {}


def test_the_sync_logs_what_it_changed(full, caplog):
    study, standin, _ = full
    with caplog.at_level("INFO", logger=PLACES_LOG):
        places.sync(study_id=study.pk)
    (line,) = [r.getMessage() for r in caplog.records if r.name == PLACES_LOG]
    assert line == (
        f"Prolific places of {study.slug}: {{'done': 1}}; the design has 2 slots, 0 free; 0 exclusion(s) kept "
        "their Prolific place; Prolific study PS1: 2 places, 2 taken, ACTIVE; "
        "PAUSE: done every slot is held: no more arrivals"
    )


def test_a_change_in_a_study_that_does_not_opt_in_queues_nothing_whatever_the_others_do(
    full, django_capture_on_commit_callbacks
):
    study, standin, ps = full
    StudyFactory(prolific_sync_places=True)  # another study opts in
    study.prolific_sync_places = False
    study.save()
    with django_capture_on_commit_callbacks() as queued:
        places.on_slot_change(ps[0])
        places.on_status_change(study)
    assert queued == []


def _design_note(study):
    rows, notes = places.places_rows(study, None)
    return rows, notes[0]


def test_only_this_studys_real_arrivals_name_its_prolific_study(full):
    study, standin, ps = full
    elsewhere = ConditionFactory(study=StudyFactory(), shots=0)
    join(standin, elsewhere, "q1", state=State.TEST, prolific_study="PS2")  # another study's arrival
    preview = join(standin, ps[0].condition, "q2", state=State.ABANDONED, slot=7, prolific_study="PS3")
    Participation.all_objects.filter(pk=preview.pk).update(is_preview=True, slot_index=None)
    bare = join(standin, ps[0].condition, "q3", state=State.ABANDONED, slot=8)
    Participation.all_objects.filter(pk=bare.pk).update(platform_data={})  # no STUDY_ID recorded
    rows, first = _design_note(study)
    assert first == "the design has 2 slots, 0 free; 0 exclusion(s) kept their Prolific place"


def test_before_anyone_came_the_study_is_not_known(prolific_on, prolific_study):
    study, _ = prolific_study
    assert places.places_rows(study, None) == (
        [],
        ["no Prolific participant has come yet: the Prolific study is not known"],
    )


def test_two_prolific_studies_are_named_and_left_to_a_person(full):
    study, standin, ps = full
    join(standin, ps[0].condition, "q1", state=State.ABANDONED, slot=9, prolific_study="PS2")
    assert places.places_rows(study, None) == (
        [],
        ["participants came from several Prolific studies (PS1, PS2): set their places by hand"],
    )


def test_with_the_operations_off_the_plan_counts_the_places_and_their_cost(full):
    study, standin, ps = full
    for p in ps:
        lifecycle.exclude(p, reason="low", kind=Kind.TRAINING_FILTER)
    rows, notes = places.places_rows(study, None)
    assert notes == [
        "the design has 2 slots, 2 free; 2 exclusion(s) kept their Prolific place",
        "Prolific study PS1: its places are not read while the operations are off",
    ]
    last = rows[-1]  # two places at the 3.00 posted
    assert (last.participation_id, last.participant, last.study, last.prolific_study) == (0, "-", study.slug, "PS1")
    assert (last.action, last.state, last.note, last.amount, last.currency) == (
        "PLACES +2",
        "to do",
        "",
        Decimal("6.00"),
        "GBP",
    )


def test_an_unreadable_prolific_study_gives_no_place(full):
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    del standin.studies["PS1"]  # Prolific answers 404
    rows, notes = places.places_rows(study, make_client())
    assert notes[1].startswith("could not read Prolific study PS1: ") and "404" in notes[1]
    assert [(r.action, r.state, r.note) for r in rows] == [("PLACE +1", "skip", "the Prolific study could not be read")]


def test_with_the_operations_off_a_paused_study_gets_no_place(full):
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    study.status = Study.Status.PAUSED
    study.save()
    rows, notes = places.places_rows(study, None)
    assert notes == [
        "the design has 2 slots, 1 free; 1 exclusion(s) kept their Prolific place",
        "our study is paused: Prolific's study is paused, started again only once ours is open",
        "Prolific study PS1: its status is not read while the operations are off",
    ]
    assert [(r.action, r.state, r.note) for r in rows] == [
        ("PLACE +1", "skip", "our study is paused: places are added only while it is open")
    ]


def test_a_pilot_names_its_share_of_the_design(prolific_on, prolific_study):
    study, condition = prolific_study
    study.workers_per_condition, study.pilot_workers_per_condition = 2, 1
    study.pilot_opened_at = timezone.now()
    study.save()
    join(prolific_on, condition, "p0", state=State.TEST, slot=0)
    _, notes = places.places_rows(study, None)
    assert notes[0] == "the pilot opens 1 of the design's 2 slots, 0 free; 0 exclusion(s) kept their Prolific place"


def test_a_prolific_study_answered_without_its_places_is_left_alone(full):
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    standin.study_answer = lambda study_id: {"id": study_id, "reward": 300}  # no places, no status
    rows, notes = places.places_rows(study, make_client())
    assert notes[1:] == [
        "Prolific study PS1: None places, ? taken, status unknown",
        "Prolific gave no total_available_places: the places are left as they are",
    ]
    assert [(r.action, r.state, r.note) for r in rows] == [
        ("PLACE +1", "skip", "Prolific's total of places is unknown")
    ]


def test_with_the_operations_off_and_no_posted_reward_the_cost_is_unknown(full):
    study, standin, ps = full
    study.base_reward = None
    study.save()
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    rows, _ = places.places_rows(study, None)
    assert [(r.action, r.state, r.amount, r.currency) for r in rows] == [
        ("PLACE +1", "to do", None, ""),
        ("PLACES +1", "to do", None, "GBP"),
    ]


def test_a_study_without_a_currency_names_none(full):
    study, standin, ps = full
    study.currency = ""
    study.save()
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    rows, _ = places.places_rows(study, None)
    assert [(r.action, r.amount, r.currency) for r in rows] == [
        ("PLACE +1", None, ""),
        ("PLACES +1", Decimal("3.00"), ""),
    ]


def _grown_and_full(full):
    """p1 excluded (its place kept), p2 in its freed slot: Prolific's 2 places must become 3, and every slot is
    held, so the study is paused too."""
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    join(standin, study.conditions.get(), "p2", state=State.TEST, slot=1)
    return study, standin


def test_the_sync_logs_every_change_it_made(full, caplog):
    study, standin = _grown_and_full(full)
    with caplog.at_level("INFO", logger=PLACES_LOG):
        assert places.sync(study_id=study.pk) == {"done": 3}
    (line,) = [r.getMessage() for r in caplog.records if r.name == PLACES_LOG]
    assert line.endswith(
        "; PLACES 2→3: done 2 → 3 places; expected cost 1 × reward (3.00 GBP each) + Prolific's service fee"
        "; PAUSE: done every slot is held: no more arrivals"
    )


def test_an_unreachable_prolific_fails_the_call_and_leaves_the_rest_not_tried(full):
    study, standin = _grown_and_full(full)
    client = make_client()
    report = operations.Report(operation="places", study=study.slug, dry_run=False)
    report.rows, report.notes = places.places_rows(study, client)
    standin.stop()  # read before, unreachable now
    places.run_places(client, CallLog(), study, report)
    place, grow, pause = report.rows
    assert (place.state, grow.state, pause.state) == ("failed", "failed", "not tried")
    assert grow.note == place.note and place.note.startswith("Could not reach Prolific for PATCH studies/PS1/: ")
    assert pause.note == f"not tried: {grow.note}"


def test_a_refused_places_call_notes_why_on_the_studys_row(full):
    study, standin = _grown_and_full(full)
    standin.update_study = lambda study_id, body: (400, {"error": {"detail": "Places are locked"}})
    rows = {r.action: r for r in operations.run(operation="places", study=study).rows}
    assert rows["PLACES 2→3"].note == rows["PLACE +1"].note and "Places are locked" in rows["PLACES 2→3"].note
    assert rows["PAUSE"].state == "done"  # a refusal is not unreachability: the pause is still sent


def test_a_study_that_does_not_opt_in_is_not_synced_even_with_something_to_do(full):
    study, standin, _ = full
    study.prolific_sync_places = False
    study.save()
    assert places.sync(study_id=study.pk) == {}
    assert standin.requests == [] and standin.studies["PS1"]["status"] == "ACTIVE"


def test_places_prolific_has_already_are_noted_and_more_cannot_be_lowered(full):
    study, standin, ps = full
    standin.set_places("PS1", 5)  # target: 2 slots + 1 exclusion = 3
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    rows, notes = places.places_rows(study, make_client())
    assert notes[2:] == ["Prolific has more places than the design needs (5 > 3); they cannot be lowered"]
    assert [(r.action, r.state, r.note) for r in rows] == [
        ("PLACE +1", "to do", "Prolific already has 5 places (needed: 3): recorded, nothing sent")
    ]


def test_exactly_the_places_needed_add_no_note(full):
    study, standin, ps = full
    standin.set_places("PS1", 3)
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    _, notes = places.places_rows(study, make_client())
    assert len(notes) == 2  # the design's, Prolific's study's: nothing about places beyond need


def test_two_places_cost_twice_the_reward_and_resume_names_the_free_slots(full):
    study, standin, ps = full
    standin.studies["PS1"]["status"] = "PAUSED"
    for p in ps:
        lifecycle.exclude(p, reason="low", kind=Kind.TRAINING_FILTER)
    rows, _ = places.places_rows(study, make_client())
    grow, resume = rows[2:]
    note = "2 → 4 places; expected cost 2 × reward (3.00 GBP each) + Prolific's service fee"
    assert (grow.action, grow.note, grow.amount, grow.currency) == ("PLACES 2→4", note, Decimal("6.00"), "GBP")
    assert (resume.action, resume.state, resume.note) == ("RESUME", "to do", "2 slot(s) free again")


def test_an_unknown_reward_gives_no_cost(full):
    study, standin, ps = full
    answer = standin.study_answer
    standin.study_answer = lambda study_id: {**answer(study_id), "reward": None}
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    rows, _ = places.places_rows(study, make_client())
    grow = rows[1]
    note = "2 → 3 places; expected cost 1 × reward (reward unknown) + Prolific's service fee"
    assert (grow.action, grow.note, grow.amount, grow.currency) == ("PLACES 2→3", note, None, "GBP")


def test_a_paused_study_of_ours_pauses_prolifics_saying_why(full):
    study, standin, _ = full
    study.status = Study.Status.PAUSED
    study.save()
    rows, _ = places.places_rows(study, make_client())
    assert [(r.action, r.state, r.note) for r in rows] == [("PAUSE", "to do", "our study is paused: no more arrivals")]


def test_every_slot_held_pauses_prolifics_saying_why(full):
    study, standin, _ = full
    rows, _ = places.places_rows(study, make_client())
    assert [(r.action, r.state, r.note) for r in rows] == [("PAUSE", "to do", "every slot is held: no more arrivals")]


def _heard(p, status, seconds, event_id):
    ProlificEvent.objects.create(
        event_id=event_id,
        source="webhook",
        event_type=webhooks.SUBMISSION_EVENT,
        resource_id=f"sub-{p.worker.external_id}",
        participant_id=p.worker.external_id,
        status=status,
        sent_at=T0 + timedelta(seconds=seconds),
        participation=p,
    )


def test_a_status_heard_after_an_approval_does_not_count(full):
    study, _, ps = full
    lifecycle.exclude(ps[1], reason="attention", kind=Kind.ATTENTION)
    _heard(ps[1], "APPROVED", 0, "e1")
    _heard(ps[1], "RETURNED", 5, "e2")  # an approval is final: the place stays the submission's
    assert [p.pk for p in places._needing_a_place(study)] == [ps[1].pk]


def test_of_statuses_heard_at_the_same_instant_the_later_recorded_counts(full):
    study, _, ps = full
    lifecycle.exclude(ps[1], reason="attention", kind=Kind.ATTENTION)
    _heard(ps[1], "AWAITING REVIEW", 0, "e1")
    _heard(ps[1], "REJECTED", 0, "e2")
    assert places._needing_a_place(study) == []


def test_the_exclusions_needing_a_place_come_in_order_withdrawn_ones_too_and_no_close_out(full):
    study, standin, ps = full
    for p in ps:
        lifecycle.exclude(p, reason="low", kind=Kind.TRAINING_FILTER)
    Participation.all_objects.filter(pk=ps[0].pk).update(withdrawn_at=T0)
    closed = join(standin, study.conditions.get(), "p2", state=State.TEST, slot=0)
    Participation.all_objects.filter(pk=closed.pk).update(state=State.EXCLUDED, exclusion_kind=Kind.CLOSED)
    assert [p.pk for p in places._needing_a_place(study)] == [ps[0].pk, ps[1].pk]


def test_places_given_as_text_are_not_a_number_of_places(full):
    study, standin, ps = full
    answer = standin.study_answer
    standin.study_answer = lambda study_id: {**answer(study_id), "total_available_places": "2", "places_taken": True}
    lifecycle.exclude(ps[1], reason="low", kind=Kind.TRAINING_FILTER)
    rows, notes = places.places_rows(study, make_client())
    assert notes[1:] == [
        "Prolific study PS1: None places, ? taken, ACTIVE",
        "Prolific gave no total_available_places: the places are left as they are",
    ]
    assert [(r.action, r.state) for r in rows] == [("PLACE +1", "skip")]


def test_the_last_status_is_the_last_sent_whatever_order_it_was_recorded_in(full):
    study, _, ps = full
    lifecycle.exclude(ps[1], reason="attention", kind=Kind.ATTENTION)
    _heard(ps[1], "REJECTED", 10, "e1")  # recorded first, sent last: the place went back to Prolific
    _heard(ps[1], "AWAITING REVIEW", 0, "e2")
    assert places._needing_a_place(study) == []


def test_another_studys_exclusions_need_no_place_of_ours(full):
    study, standin, _ = full
    other = ConditionFactory(study=StudyFactory(task=study.task, slug="other-study"), shots=0, training_set=None)
    elsewhere = join(standin, other, "q1", state=State.TEST, slot=0, prolific_study="PS9")
    lifecycle.exclude(elsewhere, reason="low", kind=Kind.TRAINING_FILTER)
    assert places._needing_a_place(study) == []
