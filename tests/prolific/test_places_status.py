"""Places follow our study's status and every submission status Prolific's reference lists.

The expectation is Prolific's own state on the stand-in, which follows the reference: after a sync, the places
open to newcomers (total − taken) are exactly our free slots while our study is open, and the Prolific study is
paused whenever ours is paused or closed, never started again after a close.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Participation, ProlificAction, ProlificEvent, Study
from annotation.services.admission import abandonment, closing
from annotation.services.prolific import operations, places, webhooks
from annotation.services.state import lifecycle, slots
from annotation.services.studies import studies
from tests.factories import make_classification_task

State = Participation.State
Kind = Participation.ExclusionKind

# Prolific's API reference, "Submission object" (and PARTIALLY APPROVED, a status its transition endpoint
# names): whether the study place "becomes available for another participant" (RETURNED, REJECTED; TIMED-OUT
# from its help pages). Written out here, apart from the code's own list.
REOPENS_ITS_PLACE = {
    "RESERVED": False,
    "ACTIVE": False,
    "TIMED-OUT": True,
    "AWAITING REVIEW": False,
    "APPROVED": False,
    "RETURNED": True,
    "REJECTED": True,
    "SCREENED OUT": False,
    "PARTIALLY APPROVED": False,
}


def open_places(standin):
    """The places Prolific would fill with newcomers now."""
    place = standin.places["PS1"]
    return place["total"] - place["taken"]


def prolific_status(standin):
    return standin.studies["PS1"]["status"]


def free_slots(study):
    return sum(c.free for c in slots.condition_counts([study])[study.pk])


def hear(pid, status):
    """Prolific tells us (webhook or polling: the same function) that ``pid``'s submission is now ``status``."""
    payload = {"event_type": webhooks.SUBMISSION_EVENT, "resource_id": f"sub-{pid}", "participant_id": pid}
    webhooks.record_and_apply(
        event_id=f"ev-{pid}-{status}",
        source=ProlificEvent.Source.WEBHOOK,
        payload={**payload, "status": status},
        sent_at=timezone.now(),
    )


def test_the_reference_lists_these_statuses():
    from annotation.services.prolific import standin

    assert set(standin.STATUSES) == set(REOPENS_ITS_PLACE)
    assert set(standin.REOPENING) == {s for s, reopens in REOPENS_ITS_PLACE.items() if reopens}


@pytest.mark.parametrize("status", list(REOPENS_ITS_PLACE))
def test_an_exclusion_gets_a_new_place_only_if_its_submission_kept_its_own(full, status):
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low training score", kind=Kind.TRAINING_FILTER)
    standin.set_status("sub-p1", status, notify=False)
    hear("p1", status)

    places.sync(study_id=study.pk)

    assert free_slots(study) == 1
    assert open_places(standin) == 1  # exactly one newcomer replaces p1, whatever Prolific did with the place
    given = ProlificAction.objects.filter(participation=ps[1], kind="places").exists()
    assert given is not REOPENS_ITS_PLACE[status]
    assert standin.places["PS1"]["total"] == (2 if REOPENS_ITS_PLACE[status] else 3)
    assert prolific_status(standin) == "ACTIVE"


def test_the_last_status_heard_decides(full):
    """A rejection overturned by an approval: the place is the submission's again, so the exclusion needs one."""
    study, _, ps = full
    lifecycle.exclude(ps[1], reason="attention", kind=Kind.ATTENTION)
    hear("p1", "REJECTED")
    assert [p.pk for p in places._needing_a_place(study)] == []
    ProlificEvent.objects.create(
        event_id="later",
        source="webhook",
        event_type=webhooks.SUBMISSION_EVENT,
        resource_id="sub-p1",
        participant_id="p1",
        status="APPROVED",
        sent_at=timezone.now() + timedelta(seconds=5),
        participation=ps[1],
    )
    assert [p.pk for p in places._needing_a_place(study)] == [ps[1].pk]


# --- Our study's status --------------------------------------------------------------------------------------


def test_open_a_free_slot_starts_a_paused_prolific_study(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    places.sync(study_id=study.pk)
    assert prolific_status(standin) == "PAUSED"  # every slot held
    standin.set_status("sub-p0", "RETURNED", notify=False)
    with django_capture_on_commit_callbacks(execute=True):
        abandonment.abandon(ps[0], reason="returned the study on Prolific")
    assert prolific_status(standin) == "ACTIVE" and open_places(standin) == free_slots(study) == 1


def test_pausing_ours_pauses_prolifics_and_a_freed_slot_does_not_start_it(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    standin.set_status("sub-p0", "RETURNED", notify=False)
    abandonment.abandon(ps[0], reason="returned the study on Prolific")
    places.sync(study_id=study.pk)
    assert prolific_status(standin) == "ACTIVE"

    with django_capture_on_commit_callbacks(execute=True):
        studies.change_status(study=study, to_status=Study.Status.PAUSED)
    assert prolific_status(standin) == "PAUSED"

    # While ours is paused: an exclusion frees a slot and is given no place, nothing starts Prolific's study.
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.exclude(ps[1], reason="low training score", kind=Kind.TRAINING_FILTER)
    assert prolific_status(standin) == "PAUSED" and standin.places["PS1"]["total"] == 2
    plan = operations.plan(operation="places", study=study)
    assert [(r.participant, r.action, r.state) for r in plan.rows] == [("p1", "PLACE +1", "skip")]
    assert "our study is paused" in plan.rows[0].note


def test_reopening_ours_gives_the_places_held_back_and_starts_prolifics(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    Study.objects.filter(pk=study.pk).update(task=make_classification_task(slug="reopenable"))  # it can open
    study.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        studies.change_status(study=study, to_status=Study.Status.PAUSED)
        lifecycle.exclude(ps[1], reason="low training score", kind=Kind.TRAINING_FILTER)
    assert prolific_status(standin) == "PAUSED" and standin.places["PS1"]["total"] == 2

    with django_capture_on_commit_callbacks(execute=True):
        studies.change_status(study=study, to_status=Study.Status.OPEN)

    assert prolific_status(standin) == "ACTIVE"
    assert open_places(standin) == free_slots(study) == 1
    assert ProlificAction.objects.get(participation=ps[1], kind="places").status == "done"


def test_closing_ours_pauses_prolifics_for_good(full, django_capture_on_commit_callbacks):
    study, standin, ps = full
    standin.set_status("sub-p0", "RETURNED", notify=False)
    abandonment.abandon(ps[0], reason="returned the study on Prolific")
    places.sync(study_id=study.pk)
    assert prolific_status(standin) == "ACTIVE"

    with django_capture_on_commit_callbacks(execute=True):
        studies.change_status(study=study, to_status=Study.Status.CLOSED, grace_minutes=0)
    assert prolific_status(standin) == "PAUSED"

    # The last worker returns: a slot frees, and nothing starts Prolific's study again (the beat neither).
    standin.set_status("sub-p1", "RETURNED", notify=False)
    with django_capture_on_commit_callbacks(execute=True):
        abandonment.abandon(ps[1], reason="returned the study on Prolific")
    from annotation.services.prolific import polling

    polling.poll_all()
    assert prolific_status(standin) == "PAUSED"
    assert not any(body.get("action") == "START" for _, _, body in standin.writes())


def test_a_close_out_gets_no_place_and_does_not_start_prolifics(full, django_capture_on_commit_callbacks):
    """Closed with grace 0, then closed out: the close-outs free slots, none is replaced, Prolific stays paused."""
    study, standin, ps = full
    lifecycle.exclude(ps[1], reason="low training score", kind=Kind.TRAINING_FILTER)
    places.sync(study_id=study.pk)  # p1's place is given while the study is open
    assert standin.places["PS1"]["total"] == 3 and prolific_status(standin) == "ACTIVE"

    with django_capture_on_commit_callbacks(execute=True):
        studies.change_status(study=study, to_status=Study.Status.CLOSED, grace_minutes=0)
    with django_capture_on_commit_callbacks(execute=True):
        closing.close_out(Participation.objects.get(pk=ps[0].pk), at=timezone.now())
    ps[0].refresh_from_db()
    assert (ps[0].state, ps[0].exclusion_kind) == (State.EXCLUDED, Kind.CLOSED)

    assert prolific_status(standin) == "PAUSED" and standin.places["PS1"]["total"] == 3
    plan = operations.plan(operation="places", study=study)
    # Only the filter exclusion, given its place before the close; the close-out is no exclusion to replace.
    assert [(r.participant, r.state) for r in plan.rows] == [("p1", "done")]
    assert "1 exclusion(s) kept their Prolific place" in plan.notes[0]
