"""look and join_study: the start page, who gets a slot, who resumes, who is refused (writing nothing)."""

from collections import Counter

import pytest
from django.db import IntegrityError, transaction

from annotation.models import Participation, ParticipationEvent, Study, Worker
from annotation.services.admission import consent, entry
from annotation.services.admission.entry import Outcome
from annotation.services.state.platforms import EntryParams
from tests.factories import ParticipationFactory, WorkerFactory
from tests.studies.conftest import inhouse

pytestmark = pytest.mark.django_db
State = Participation.State


def _rows() -> tuple[int, int, int]:
    return Worker.objects.count(), Participation.objects.count(), ParticipationEvent.objects.count()


def test_a_new_worker_gets_a_claimed_slot_with_its_first_event(study):
    result = entry.join_study(study=study, params=inhouse("alice"))
    assert result.outcome == Outcome.JOINED and result.admitted
    p = result.participation
    assert (p.state, p.slot_index, p.task_id, p.study_id) == (State.CLAIMED, 0, study.task_id, study.pk)
    assert p.worker.external_id == "alice" and p.worker.platform == "inhouse"
    assert list(p.events.values_list("from_state", "to_state")) == [("", "claimed")]


def test_platform_data_of_the_entry_is_kept(study):
    params = EntryParams(platform="mturk", external_id="A1", platform_data={"assignmentId": "ASG", "hitId": "H"})
    p = entry.join_study(study=study, params=params).participation
    p.refresh_from_db()
    assert p.platform_data == {"assignmentId": "ASG", "hitId": "H"}


def test_twelve_workers_fill_four_conditions_evenly_then_the_study_is_full(study):
    results = [entry.join_study(study=study, params=inhouse(f"w{i}")) for i in range(12)]
    assert all(r.outcome == Outcome.JOINED for r in results)
    per_condition = Counter(r.participation.condition.shots for r in results)
    assert per_condition == {0: 3, 10: 3, 20: 3, 30: 3}
    slots = {(r.participation.condition_id, r.participation.slot_index) for r in results}
    assert len(slots) == 12 and {s for _, s in slots} == {0, 1, 2}
    before = _rows()
    assert entry.join_study(study=study, params=inhouse("late")).outcome == Outcome.FULL
    assert _rows() == before


def test_placement_never_lets_conditions_differ_by_more_than_one(study):
    for i in range(7):
        entry.join_study(study=study, params=inhouse(f"w{i}"))
        filled = Counter(Participation.objects.values_list("condition__shots", flat=True))
        sizes = [filled.get(s, 0) for s in (0, 10, 20, 30)]
        assert max(sizes) - min(sizes) <= 1


def test_ties_are_broken_at_random_so_arrival_order_does_not_decide(make_study):
    first_conditions = Counter()
    for _ in range(40):
        study = make_study()
        first = entry.join_study(study=study, params=inhouse(f"first-{study.pk}")).participation
        first_conditions[first.condition.shots] += 1
    assert len(first_conditions) >= 3  # 40 draws over 4 equally likely conditions


def test_choose_condition_prefers_the_most_free_slots():
    assert entry.choose_condition({1: [0], 2: [1, 2], 3: []}) == 2
    assert entry.choose_condition({1: [], 2: []}) is None
    assert {entry.choose_condition({1: [0], 2: [0]}) for _ in range(100)} == {1, 2}


def test_a_released_slot_is_taken_again_at_the_lowest_free_number(make_study):
    study = make_study(shots=[0], workers=3)
    joined = [entry.join_study(study=study, params=inhouse(f"w{i}")).participation for i in range(3)]
    Participation.objects.filter(pk=joined[1].pk).update(state=State.ABANDONED)
    fresh = entry.join_study(study=study, params=inhouse("fresh"))
    assert fresh.outcome == Outcome.JOINED and fresh.participation.slot_index == 1


def test_a_returning_worker_of_this_study_resumes_the_same_participation(study):
    first = entry.join_study(study=study, params=inhouse("alice")).participation
    Participation.objects.filter(pk=first.pk).update(state=State.TEST)
    before = _rows()
    again = entry.join_study(study=study, params=inhouse("alice"))
    assert again.outcome == Outcome.RESUMED and again.participation.pk == first.pk
    assert _rows() == before


def test_a_completed_worker_resumes_to_see_the_finish_page(study):
    first = entry.join_study(study=study, params=inhouse("alice")).participation
    Participation.objects.filter(pk=first.pk).update(state=State.COMPLETED)
    assert entry.join_study(study=study, params=inhouse("alice")).outcome == Outcome.RESUMED


def test_an_abandoned_worker_of_this_study_is_told_their_slot_was_released_and_gets_no_new_one(study):
    first = entry.join_study(study=study, params=inhouse("alice")).participation
    Participation.objects.filter(pk=first.pk).update(state=State.ABANDONED)
    before = _rows()
    assert entry.join_study(study=study, params=inhouse("alice")).outcome == Outcome.SLOT_RELEASED
    assert _rows() == before


def test_a_worker_who_abandoned_another_study_of_the_task_has_already_taken_part(make_study):
    study, other = make_study(), make_study()
    first = entry.join_study(study=study, params=inhouse("alice")).participation
    Participation.objects.filter(pk=first.pk).update(state=State.ABANDONED)
    assert entry.join_study(study=other, params=inhouse("alice")).outcome == Outcome.ALREADY_TOOK_PART


def test_an_excluded_worker_of_this_study_gets_back_to_their_own_participation_and_no_new_slot(study):
    first = entry.join_study(study=study, params=inhouse("alice")).participation
    Participation.objects.filter(pk=first.pk).update(state=State.EXCLUDED)
    before = _rows()
    again = entry.join_study(study=study, params=inhouse("alice"))
    assert again.outcome == Outcome.RESUMED and again.participation.pk == first.pk
    assert again.participation.state == State.EXCLUDED
    assert _rows() == before


@pytest.mark.parametrize("state", list(State))
def test_a_worker_of_another_study_of_the_same_task_has_already_taken_part_whatever_the_state(make_study, state):
    earlier, later = make_study(), make_study()
    worker = WorkerFactory(external_id="alice")
    ParticipationFactory(condition=earlier.conditions.get(shots=0), worker=worker, state=state)
    before = _rows()
    assert entry.join_study(study=later, params=inhouse("alice")).outcome == Outcome.ALREADY_TOOK_PART
    assert _rows() == before


def test_the_same_worker_may_join_a_study_of_another_task(make_study):
    from tests.factories import make_classification_task

    other_task = make_classification_task(slug="mnli")
    first, other = make_study(), make_study(for_task=other_task)
    assert entry.join_study(study=first, params=inhouse("alice")).outcome == Outcome.JOINED
    assert entry.join_study(study=other, params=inhouse("alice")).outcome == Outcome.JOINED
    assert Worker.objects.count() == 1


def test_the_same_id_on_another_platform_is_another_worker(study):
    entry.join_study(study=study, params=inhouse("same"))
    result = entry.join_study(study=study, params=EntryParams(platform="prolific", external_id="same"))
    assert result.outcome == Outcome.JOINED


def test_a_blocked_worker_is_refused_and_nothing_is_written(study):
    WorkerFactory(external_id="mallory", blocked=True)
    before = _rows()
    assert entry.join_study(study=study, params=inhouse("mallory")).outcome == Outcome.BLOCKED
    assert _rows() == before


@pytest.mark.parametrize("status", [Study.Status.DRAFT, Study.Status.PAUSED, Study.Status.CLOSED])
def test_a_study_that_is_not_open_admits_no_new_worker(make_study, status):
    study = make_study(status=status)
    assert entry.join_study(study=study, params=inhouse("alice")).outcome == Outcome.NOT_OPEN
    assert _rows() == (0, 0, 0)


def test_paused_and_closed_studies_let_their_workers_back_but_nobody_new(study):
    """A closed study's workers go on in its grace period, and afterwards find their page (and code)."""
    first = entry.join_study(study=study, params=inhouse("alice")).participation
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PAUSED)
    study.refresh_from_db()
    assert entry.join_study(study=study, params=inhouse("alice")).participation.pk == first.pk
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    assert entry.join_study(study=study, params=inhouse("alice")).participation.pk == first.pk
    assert entry.join_study(study=study, params=inhouse("bob")).outcome == Outcome.NOT_OPEN


def test_mturk_preview_writes_nothing(study):
    params = EntryParams(platform="mturk", preview=True, platform_data={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert entry.join_study(study=study, params=params).outcome == Outcome.PREVIEW
    assert _rows() == (0, 0, 0)


def test_a_study_status_change_seen_under_the_lock_wins(study):
    """The entry re-reads the study under its row lock: a stale open copy cannot admit anyone."""
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    assert study.status == Study.Status.OPEN  # the caller's stale copy
    assert entry._claim(study=study, params=inhouse("alice")).outcome == Outcome.NOT_OPEN
    assert _rows() == (0, 0, 0)


def test_shuffled_test_order_records_a_seed_per_worker(make_study):
    study = make_study(test_order=Study.TestOrder.SHUFFLED)
    seeds = {entry.join_study(study=study, params=inhouse(f"w{i}")).participation.test_seed for i in range(4)}
    assert None not in seeds and len(seeds) == 4
    fixed = make_study()
    assert entry.join_study(study=fixed, params=inhouse("x")).participation.test_seed is None


# --- The database's own guards -------------------------------------------------------------


def test_the_database_refuses_a_holding_slot_number_twice(study):
    condition = study.conditions.get(shots=0)
    ParticipationFactory(condition=condition, slot_index=0, state=State.TEST)
    ParticipationFactory(condition=condition, slot_index=0, state=State.ABANDONED)  # released slots may repeat
    with pytest.raises(IntegrityError), transaction.atomic():
        ParticipationFactory(condition=condition, slot_index=0, state=State.CLAIMED)


def test_the_database_refuses_a_second_participation_of_a_worker_in_a_task(make_study):
    first, second = make_study(), make_study()
    worker = WorkerFactory()
    ParticipationFactory(condition=first.conditions.get(shots=0), worker=worker, state=State.ABANDONED)
    with pytest.raises(IntegrityError), transaction.atomic():
        ParticipationFactory(condition=second.conditions.get(shots=10), worker=worker, state=State.CLAIMED)


def test_a_concurrent_win_of_the_same_worker_becomes_already_took_part(make_study, monkeypatch):
    """If the (worker, task) constraint fires at insert time, the answer is polite, not an error."""
    first, second = make_study(), make_study()
    worker = WorkerFactory(external_id="alice")
    # Simulate the other entry committing between our checks and our insert: the checks do not see it.
    monkeypatch.setattr(entry, "_find_worker", lambda params: None)
    ParticipationFactory(condition=first.conditions.get(shots=0), worker=worker, state=State.CLAIMED)
    result = entry.join_study(study=second, params=inhouse("alice"))
    assert result.outcome == Outcome.ALREADY_TOOK_PART
    assert Participation.objects.count() == 1


# --- Completion ------------------------------------------------------------------------------


def test_completion_target_follows_the_platform_of_the_entry(make_study):
    study = make_study(
        outcome_codes={"completed": {"code": "CC1", "url": "https://app.prolific.com/submissions/complete"}}
    )
    prolific = entry.join_study(study=study, params=EntryParams(platform="prolific", external_id="p1")).participation
    target = entry.completion_target(prolific)
    assert (target.kind, target.url) == ("redirect", "https://app.prolific.com/submissions/complete?cc=CC1")
    mturk = entry.join_study(
        study=study,
        params=EntryParams(
            platform="mturk",
            external_id="A1",
            platform_data={"assignmentId": "ASG", "turkSubmitTo": "https://www.mturk.com"},
        ),
    ).participation
    mturk.completion_code = "OWN"
    target = entry.completion_target(mturk)
    assert (target.kind, target.url, target.fields["assignmentId"], target.code) == (
        "form_post",
        "https://www.mturk.com/mturk/externalSubmit",
        "ASG",
        "OWN",
    )
    local = entry.join_study(study=study, params=inhouse("me")).participation
    assert entry.completion_target(local).kind == "code"


def test_looking_shows_the_start_page_and_writes_nothing(study):
    for name in ("w1", "w2", "w3", "w4"):
        assert entry.look(study=study, params=inhouse(name)).outcome == Outcome.START
    assert _rows() == (0, 0, 0)


def test_a_look_resumes_a_worker_who_holds_a_slot(study):
    first = entry.join_study(study=study, params=inhouse("alice")).participation
    again = entry.look(study=study, params=inhouse("alice"))
    assert again.outcome == Outcome.RESUMED and again.participation.pk == first.pk


def test_declining_a_study_without_consent_is_refused(study):
    with pytest.raises(consent.ConsentError):
        entry.decline(study=study, params=inhouse("alice"))
    assert _rows() == (0, 0, 0)
