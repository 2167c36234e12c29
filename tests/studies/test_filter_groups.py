"""The relative training filter judges the condition's group once it has trained, each worker against
the mean (or median) of the others; hand-worked figures throughout."""

import itertools
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.background.celery_tasks import decide_training_filters
from annotation.models import AuditEntry, FilterDecision, Participation, Response, Study
from annotation.reporting.options import MetricOptions
from annotation.reporting.provenance import reproducibility_header
from annotation.services.admission.entry import completion_target
from annotation.services.state import lifecycle
from annotation.services.verdicts import filter_groups, overrides, step_end
from tests.factories import ExampleFactory, ParticipationFactory, ResponseFactory

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def condition(make_study):
    def build(threshold=0.2, workers=3, reference=Study.FilterReference.MEAN, timeout=120):
        study = make_study(
            shots=[10],
            workers=workers,
            filter_rule=Study.FilterRule.RELATIVE,
            filter_threshold=threshold,
            filter_reference=reference,
            filter_group_timeout_minutes=timeout,
        )
        return study.conditions.get()

    return build


def _trained(condition, s1: float, *, slot: int) -> Participation:
    p = ParticipationFactory(condition=condition, slot_index=slot, state=State.TRAINING)
    ResponseFactory(
        participation=p, example=ExampleFactory(task=condition.study.task), phase=Response.Phase.TRAINING, score=s1
    )
    return p


def _finish_all(condition, scores, capture):
    """Each worker finishes training in turn, the verdicts asked after each commit as on the live path."""
    workers = []
    for slot, s1 in enumerate(scores):
        p = _trained(condition, s1, slot=slot)
        with capture(execute=True):
            step_end.end_step(p)
        workers.append(p)
    for p in workers:
        p.refresh_from_db()
    return workers


def _final(p: Participation) -> FilterDecision:
    return p.filter_decisions.get(pending_group=False)


def test_a_worker_goes_on_to_the_test_at_once_with_a_pending_verdict(condition, django_capture_on_commit_callbacks):
    c = condition()
    (p,) = _finish_all(c, [0.1], django_capture_on_commit_callbacks)
    assert p.state == State.TEST
    decision = p.filter_decisions.get()
    assert decision.pending_group and decision.passed and decision.reference == "mean"
    assert "judged against the group once it has trained" in decision.reason


def test_the_order_does_not_decide_the_first_worker_is_judged_like_the_others(
    condition, django_capture_on_commit_callbacks
):
    # threshold 0.2. 0.1: others' mean (0.9 + 0.5) / 2 = 0.7, floor 0.5 -> excluded (it passed as the
    # first worker under the old rule). 0.9: (0.1 + 0.5) / 2 = 0.3, floor 0.1 -> passes. 0.5: (0.1 + 0.9) / 2
    # = 0.5, floor 0.3 -> passes.
    first, second, third = _finish_all(condition(), [0.1, 0.9, 0.5], django_capture_on_commit_callbacks)
    assert (first.state, second.state, third.state) == (State.EXCLUDED, State.TEST, State.TEST)
    decision = _final(first)
    assert not decision.passed and decision.reference_mean == pytest.approx(0.7)
    assert decision.group_training_s1 == pytest.approx([0.9, 0.5])
    assert "training S1 0.100 < 0.500 (others' mean 0.700 - 0.200; group of 3" in decision.reason
    assert _final(second).reference_mean == pytest.approx(0.3) and _final(third).reference_mean == pytest.approx(0.5)
    assert first.events.get(to_state=State.EXCLUDED).reason.startswith("failed training filter: training S1 0.100")


@pytest.mark.parametrize(
    ("reference", "excluded"),
    [
        # threshold 0.2. 0.0: mean of others 0.7, median 0.8. 0.4: mean (0.0 + 0.8 + 0.9) / 3 = 0.567, floor
        # 0.367 -> passes; median 0.8, floor 0.6 -> excluded. 0.8 and 0.9 pass either way.
        (Study.FilterReference.MEAN, [0.0]),
        (Study.FilterReference.MEDIAN, [0.0, 0.4]),
    ],
)
def test_the_reference_is_the_others_mean_or_median(condition, django_capture_on_commit_callbacks, reference, excluded):
    c = condition(workers=4, reference=reference)
    workers = _finish_all(c, [0.0, 0.4, 0.8, 0.9], django_capture_on_commit_callbacks)
    scores = {0: 0.0, 1: 0.4, 2: 0.8, 3: 0.9}
    assert [scores[p.slot_index] for p in workers if p.state == State.EXCLUDED] == excluded


def test_a_worker_who_completed_the_test_before_the_verdict_is_excluded_after_it(
    condition, django_capture_on_commit_callbacks
):
    c = condition()
    fast = _trained(c, 0.1, slot=0)
    with django_capture_on_commit_callbacks(execute=True):
        step_end.end_step(fast)
    fast.refresh_from_db()
    lifecycle.transition(fast, to_state=State.COMPLETED, reason="finished")
    shown = lifecycle.give_completion_code(fast)  # the finish page's code
    assert shown == c.study.outcome_codes["completed"]["code"]
    _finish_all_rest = [_trained(c, s1, slot=i) for i, s1 in ((1, 0.9), (2, 0.5))]
    for p in _finish_all_rest:
        with django_capture_on_commit_callbacks(execute=True):
            step_end.end_step(p)
    fast.refresh_from_db()
    assert fast.state == State.EXCLUDED and fast.exclusion_kind == "training_filter"  # paid for the time all the same
    # They keep the completed code they were shown (docs/studies.md), and reopening the link shows it again.
    assert fast.completion_code == shown and completion_target(fast).code == shown


def test_the_group_waits_for_every_slot_then_the_timeout_judges_the_group_so_far(
    condition, django_capture_on_commit_callbacks
):
    c = condition(timeout=60)
    weak, strong = _finish_all(c, [0.1, 0.9], django_capture_on_commit_callbacks)
    assert (weak.state, strong.state) == (State.TEST, State.TEST)  # the third slot has not trained
    assert filter_groups.decide_due() == []
    later = timezone.now() + timedelta(minutes=61)
    decisions = filter_groups.decide_due(now=later)  # what Celery beat runs
    assert len(decisions) == 2
    weak.refresh_from_db()
    # 0.1 against the other one, 0.9: floor 0.7 -> excluded; 0.9 against 0.1: floor -0.1 -> passes
    assert weak.state == State.EXCLUDED and _final(weak).group_training_s1 == pytest.approx([0.9])


def test_a_replacement_is_judged_against_the_group_and_earlier_verdicts_stand(
    condition, django_capture_on_commit_callbacks
):
    c = condition()
    first, second, third = _finish_all(c, [0.1, 0.9, 0.5], django_capture_on_commit_callbacks)
    replacement = _trained(c, 0.6, slot=first.slot_index)  # the freed slot
    with django_capture_on_commit_callbacks(execute=True):
        step_end.end_step(replacement)
    replacement.refresh_from_db()
    # others: everyone who finished training, the excluded worker included: 0.1, 0.9 and 0.5, mean 0.5,
    # floor 0.3 -> passes
    decision = _final(replacement)
    assert decision.passed and decision.group_training_s1 == pytest.approx([0.1, 0.9, 0.5])
    assert FilterDecision.objects.filter(participation__in=[second, third], pending_group=False).count() == 2


def test_an_admin_override_is_final_and_the_group_does_not_judge_it_again(
    condition, django_capture_on_commit_callbacks
):
    c = condition()
    first = _finish_all(c, [0.1], django_capture_on_commit_callbacks)[0]
    overrides.override(first, admit=False, reason="copied answers", actor=None)
    _finish_all_rest = [_trained(c, s1, slot=i) for i, s1 in ((1, 0.9), (2, 0.5))]
    for p in _finish_all_rest:
        with django_capture_on_commit_callbacks(execute=True):
            step_end.end_step(p)
    assert not first.filter_decisions.filter(pending_group=False, is_override=False).exists()


def test_the_command_and_the_celery_task_judge_what_is_due(condition, django_capture_on_commit_callbacks, capsys):
    c = condition()
    _finish_all(c, [0.1, 0.9], django_capture_on_commit_callbacks)
    assert decide_training_filters() == 0  # not due: a slot is still free and the timeout is far
    call_command("decide_training_filter", "--study", c.study.slug, "--now")
    out = capsys.readouterr().out
    assert "excluded: training S1 0.100 < 0.700" in out and "2 verdict(s), 1 excluded" in out
    # Forced by a person, not the rule's timing: the audit trail says who, for which study, what it judged.
    (entry,) = AuditEntry.objects.filter(action=AuditEntry.Action.FILTER_FORCED)
    assert (entry.actor_name, entry.study_id) == ("manage.py decide_training_filter", c.study.pk)
    assert entry.after == {"shots": c.shots, "judged": 2, "excluded": 1}


def _verdicts_by_score(workers) -> dict[float, tuple[str, list[float]]]:
    """Each worker's state and the others' training S1 they were compared with, by their own S1."""
    for p in workers:
        p.refresh_from_db()
    return {_final(p).training_s1: (p.state, sorted(_final(p).group_training_s1)) for p in workers}


@pytest.mark.parametrize("order", list(itertools.permutations([0.1, 0.5, 0.9])))
def test_the_same_scores_give_the_same_verdicts_whatever_the_order_and_a_timeout_alone(
    condition, django_capture_on_commit_callbacks, order
):
    # The first arrival waits past the timeout alone (the sweep runs): it is not judged alone, and is
    # judged with the others once they have trained. 0.1: others' mean 0.7, floor 0.5 -> excluded;
    # 0.5: mean 0.5, floor 0.3 -> passes; 0.9: mean 0.3 -> passes. Under rule 1 the first always passed.
    c = condition(timeout=60)
    first = _finish_all(c, [order[0]], django_capture_on_commit_callbacks)
    assert filter_groups.decide_due(now=timezone.now() + timedelta(minutes=61)) == []
    rest = []
    for slot, s1 in enumerate(order[1:], start=1):
        p = _trained(c, s1, slot=slot)
        with django_capture_on_commit_callbacks(execute=True):
            step_end.end_step(p)
        rest.append(p)
    assert _verdicts_by_score(first + rest) == {
        0.1: (State.EXCLUDED, [0.5, 0.9]),
        0.5: (State.TEST, [0.1, 0.9]),
        0.9: (State.TEST, [0.1, 0.5]),
    }


@pytest.mark.parametrize("order", list(itertools.permutations([0.0, 0.4, 0.8, 0.9])))
def test_a_replacement_is_judged_against_the_full_group_whatever_the_order(
    condition, django_capture_on_commit_callbacks, order
):
    # 3 slots; the fourth score arrives as the replacement of the one who failed (0.0, or 0.4 against
    # 0.8 and 0.9: floor 0.65). The replacement is judged against the three who trained before it, the
    # excluded worker included (rule 1 left the excluded one out).
    c = condition(workers=3, threshold=0.2)
    workers = _finish_all(c, list(order[:3]), django_capture_on_commit_callbacks)
    (freed,) = [p for p in workers if p.state == State.EXCLUDED]
    replacement = _trained(c, order[3], slot=freed.slot_index)
    with django_capture_on_commit_callbacks(execute=True):
        step_end.end_step(replacement)
    replacement.refresh_from_db()
    decision = _final(replacement)
    assert sorted(decision.group_training_s1) == sorted(order[:3])
    assert decision.rule_version == FilterDecision.RULE_VERSION == 2


def test_a_group_of_one_is_never_judged_not_even_at_the_timeout_or_by_force(
    condition, django_capture_on_commit_callbacks
):
    c = condition(timeout=60)
    (alone,) = _finish_all(c, [0.1], django_capture_on_commit_callbacks)
    assert filter_groups.decide_due(now=timezone.now() + timedelta(days=3), force=True) == []
    assert list(filter_groups.undecided(c)) == [alone]
    second = _trained(c, 0.9, slot=1)
    with django_capture_on_commit_callbacks(execute=True):
        step_end.end_step(second)
    decisions = filter_groups.decide_due(now=timezone.now() + timedelta(minutes=61))
    assert {d.participation_id: d.passed for d in decisions} == {alone.pk: False, second.pk: True}


def test_a_group_exclusion_is_recorded_as_the_training_filter_not_an_admin(
    condition, django_capture_on_commit_callbacks, admin_client
):
    first, _, _ = _finish_all(condition(), [0.1, 0.9, 0.5], django_capture_on_commit_callbacks)
    assert first.state == State.EXCLUDED
    assert first.exclusion_kind == Participation.ExclusionKind.TRAINING_FILTER
    detail = admin_client.get(f"/api/participations/{first.pk}/").json()
    assert detail["exclusion_kind"] == "training_filter"


def test_every_decision_records_the_rule_version_that_made_it(
    condition, django_capture_on_commit_callbacks, admin_client
):
    workers = _finish_all(condition(), [0.1, 0.9, 0.5], django_capture_on_commit_callbacks)
    override = overrides.override(workers[0], admit=True, reason="ambiguous items", actor=None)
    versions = FilterDecision.objects.filter(participation__in=workers).values_list("rule_version", flat=True)
    assert set(versions) == {2} and override.rule_version == 2
    # Reports name the rules: the current version, and those the study's verdicts were made under.
    study = workers[0].study
    FilterDecision.objects.filter(participation=workers[1]).update(rule_version=1)  # decided before the change
    header = reproducibility_header(studies=[study], options=MetricOptions(), export="annotations-jsonl")
    assert header["filter_rule_version"] == 2 and header["studies"][0]["filter_decision_rule_versions"] == [1, 2]
    detail = admin_client.get(f"/api/participations/{workers[2].pk}/").json()
    assert {d["rule_version"] for d in detail["filter_decisions"]} == {2}
