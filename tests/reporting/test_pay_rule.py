"""The pay rule (annotation.services.money.pay): paid time ends with the work, never with a later verdict."""

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest

from annotation.models import Participation, Response
from annotation.reporting.exports import export_with_provenance
from annotation.reporting.options import MetricOptions
from annotation.services.admission import abandonment, closing
from annotation.services.money.pay import PAY_RULE_VERSION, paid_time, pay_line, pay_lines, work_ends
from annotation.services.state import lifecycle
from annotation.services.verdicts import overrides
from tests.reporting.builders import T0, add_annotator, gold_answers, make_study

State = Participation.State
Kind = Participation.ExclusionKind


def _hours(study, p) -> Decimal:
    return Decimal(str(pay_lines(study=study, participations=[p])[p.pk].seconds)) / 3600


def _answered_at(p, at) -> None:
    Response.all_objects.filter(participation=p).update(submitted_at=at)


def test_a_verdict_after_completion_and_a_readmission_do_not_move_the_end_of_paid_time(sst2):
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2), minutes=30)  # claimed at T0, completed at T0 + 30 min
    _answered_at(p, T0 + timedelta(minutes=30))
    # The group training filter judges the group 6 hours later and excludes the worker.
    lifecycle.exclude(p, reason="failed training filter", kind=Kind.TRAINING_FILTER, at=T0 + timedelta(hours=6.5))
    assert _hours(study, p) == Decimal("0.5")
    line = pay_lines(study=study, participations=[p])[p.pk]
    assert (line.owed, line.bonus) == (Decimal("6.00"), Decimal("6.00"))
    # An admin readmits them (now, a day later): back to the test, finished at once; still half an hour.
    overrides.override(p, admit=True, reason="the verdict was wrong", actor=None)
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    assert _hours(study, p) == Decimal("0.5")


def test_a_worker_the_training_filter_excludes_is_paid_to_their_last_answer(sst2):
    # Rule 4: answered the last training item at 10 minutes, excluded by the training filter at 12 (a group
    # verdict, after the worker's last act). By hand: 10 minutes (version 3 paid 12, to the exclusion).
    study = make_study(sst2, shots=(0, 10), base_reward=Decimal("0.00"))
    p = add_annotator(study, 10, answers=[], training_answers=[["positive"]] * 3, state=State.TRAINING)
    _answered_at(p, T0 + timedelta(minutes=10))
    lifecycle.exclude(p, reason="failed training filter", kind=Kind.TRAINING_FILTER, at=T0 + timedelta(minutes=12))
    assert _hours(study, p) == Decimal(10) / 60


def test_a_worker_an_admin_excludes_while_idle_is_paid_to_their_last_act(sst2):
    # Issue 39 (found by the lifecycle model): claimed at T0, answered until 20 minutes, then idle on the page;
    # an admin excludes them at 50. By hand: 20 minutes at 12.00/h = 4.00 (version 3 paid 50 minutes, 10.00).
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2)[:2], state=State.TEST)
    _answered_at(p, T0 + timedelta(minutes=20))
    lifecycle.exclude(p, reason="admin override: idle", kind=Kind.ADMIN, at=T0 + timedelta(minutes=50))
    assert _hours(study, p) == Decimal(20) / 60
    line = pay_lines(study=study, participations=[p])[p.pk]
    assert (line.owed, line.bonus) == (Decimal("4.00"), Decimal("4.00"))


def test_an_admin_exclusion_before_any_act_pays_nothing(sst2):
    # Claimed at T0 and never began; an admin excludes them an hour later: nothing was done, nothing is paid.
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=[], state=State.CLAIMED)
    lifecycle.exclude(p, reason="admin override", kind=Kind.ADMIN, at=T0 + timedelta(hours=1))
    assert _hours(study, p) == 0


def test_a_close_out_ends_paid_time_at_the_last_activity_it_is_dated_at(sst2):
    # The close-out is dated at the worker's last activity (closing.close_out): answered until 20, on the page
    # until 35, closed out when the sweep ran at 90. By hand: 35 minutes.
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2)[:2], state=State.TEST)
    _answered_at(p, T0 + timedelta(minutes=20))
    Participation.all_objects.filter(pk=p.pk).update(last_activity_at=T0 + timedelta(minutes=35))
    p.refresh_from_db()
    closing.close_out(p, at=T0 + timedelta(minutes=90))
    p.refresh_from_db()
    assert (p.state, p.exclusion_kind) == (State.EXCLUDED, Kind.CLOSED)
    assert _hours(study, p) == Decimal(35) / 60


def test_the_end_of_the_work_is_read_as_paid_time_reads_it(sst2):
    # work_ends (what a close-out is dated at) by hand: claimed at T0 and abandoned before starting, at T0 + 2 h:
    # T0, the claim; answered until 20 minutes, then excluded idle by an admin at 50: 20 minutes.
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    left = add_annotator(study, 0, answers=[], state=State.CLAIMED, worker_id="left")
    lifecycle.transition(left, to_state=State.ABANDONED, reason="idle", at=T0 + timedelta(hours=2))
    idle = add_annotator(study, 0, answers=gold_answers(sst2)[:2], state=State.TEST, worker_id="idle")
    _answered_at(idle, T0 + timedelta(minutes=20))
    lifecycle.exclude(idle, reason="admin override: idle", kind=Kind.ADMIN, at=T0 + timedelta(minutes=50))
    assert work_ends([left, idle]) == {left.pk: T0, idle.pk: T0 + timedelta(minutes=20)}
    assert _hours(study, left) == 0 and _hours(study, idle) == Decimal(20) / 60


def test_after_a_readmission_the_end_is_the_last_answer_less_the_wait_for_the_readmission(sst2):
    # Excluded at the end of training (12 min), readmitted (20 min), test answered until 50 min.
    # Taking the first completion or exclusion would pay 12 minutes; paying the wait (rule 2), 50.
    # By hand: 12 minutes of training, then 50 - 20 = 30 minutes of test: 42 minutes.
    study = make_study(sst2, shots=(0, 10), base_reward=Decimal("0.00"))
    p = add_annotator(study, 10, answers=[], training_answers=[["positive"]] * 3, state=State.TRAINING)
    _answered_at(p, T0 + timedelta(minutes=10))
    lifecycle.exclude(p, reason="failed training filter", kind=Kind.TRAINING_FILTER, at=T0 + timedelta(minutes=12))
    lifecycle.transition(p, to_state=State.TEST, reason="admin override", at=T0 + timedelta(minutes=20))
    Response.all_objects.filter(participation=p).update(submitted_at=T0 + timedelta(minutes=50))
    lifecycle.finish_test(p, at=T0 + timedelta(minutes=50))
    assert _hours(study, p) == Decimal(42) / 60


def test_an_attention_exclusion_at_the_end_of_the_test_ends_paid_time(sst2):
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2), state=State.TEST)
    _answered_at(p, T0 + timedelta(minutes=24))
    lifecycle.exclude(p, reason="attention", kind=Kind.ATTENTION, at=T0 + timedelta(minutes=24))
    assert _hours(study, p) == Decimal("0.4")


def test_an_abandonment_ends_paid_time_at_the_last_activity_not_when_it_was_noticed(sst2):
    # The idle sweep (or a return on the platform) notices a worker an hour after they stopped: the work
    # ended at their last activity, 20 minutes in.
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2), state=State.TEST)
    _answered_at(p, T0 + timedelta(minutes=20))
    Participation.all_objects.filter(pk=p.pk).update(last_activity_at=T0 + timedelta(minutes=20))
    p.refresh_from_db()
    abandonment.abandon(p, reason="no activity for 60 minutes", at=T0 + timedelta(minutes=80))
    assert _hours(study, p) == Decimal(20) / 60


def test_pay_is_rounded_half_up_to_the_cent():
    # 1.01/h for half an hour is 0.505: half-up gives 0.51 (half-to-even would give 0.50).
    line = pay_line(rate=Decimal("1.01"), base=Decimal("0.00"), participation_id=1, seconds=1800)
    assert (line.owed, line.amount, line.bonus) == (Decimal("0.51"), Decimal("0.51"), Decimal("0.51"))
    # With a posted reward the effective hourly pay is rounded the same way: 0.2525/0.5 h = 0.505/h -> 0.51.
    line = pay_line(rate=Decimal("12.00"), base=Decimal("0.2525"), participation_id=1, seconds=1800)
    assert line.effective_hourly == Decimal("0.51")


def test_the_payments_export_rounds_half_up_and_names_the_pay_rule_version(sst2):
    study = make_study(sst2, shots=(0,), hourly_rate=Decimal("1.01"), base_reward=Decimal("0.00"))
    add_annotator(study, 0, answers=gold_answers(sst2), minutes=30, worker_id="w1")
    text, provenance = export_with_provenance(kind="payments-csv", studies=[study], options=MetricOptions())
    (columns,) = csv.DictReader(io.StringIO(text.decode()))
    assert (columns["minutes"], columns["amount"], columns["bonus"]) == ("30.00", "0.51", "0.51")
    assert provenance["pay_rule_version"] == PAY_RULE_VERSION == "4"
    assert f"pay rule version {PAY_RULE_VERSION}" in provenance["notes"][0]


@pytest.mark.parametrize("kind", ["payments-csv", "annotators-csv"])
def test_exports_leave_base_and_bonus_empty_while_the_posted_reward_is_not_set(sst2, kind):
    study = make_study(sst2, shots=(0,))
    add_annotator(study, 0, answers=gold_answers(sst2), minutes=30, worker_id="w1")
    text, _ = export_with_provenance(kind=kind, studies=[study], options=MetricOptions())
    (columns,) = csv.DictReader(io.StringIO(text.decode()))
    assert columns["bonus"] == ""
    assert columns.get("amount", columns.get("pay")) == "6.00"  # the owed amount at 12.00/h


def test_work_end_counts_a_screen_out_from_claimed_as_the_end_of_the_work():
    from annotation.services.money.pay import work_end

    claimed_at = T0
    screened_out_at = T0 + timedelta(minutes=3)  # the second failed attempt: the worker's act
    events = [(State.CLAIMED, State.EXCLUDED, screened_out_at)]
    later = T0 + timedelta(hours=2)  # activity recorded after the screen-out does not extend paid time
    end = work_end(
        events,
        last_answer=None,
        state=State.EXCLUDED,
        last_activity=later,
        start=claimed_at,
        exclusion_kind="comprehension",
    )
    assert end == screened_out_at and end - claimed_at == timedelta(minutes=3)
    # The same exclusion by an admin is no act of the worker's: the work ended when the slot was taken.
    end = work_end(
        events, last_answer=None, state=State.EXCLUDED, last_activity=later, start=claimed_at, exclusion_kind="admin"
    )
    assert end == claimed_at


def test_a_readmission_after_an_end_of_test_exclusion_pays_no_hour_of_the_wait(sst2):
    # Issue 39, finding 1: claimed at T0, answered the test until 24 minutes, excluded there by the attention
    # rule; an admin readmits the worker a day later, which ends the test (and writes "completed") at once.
    # By hand: 24 minutes of work, 12.00/h with no posted reward: 4.80, all of it the bonus.
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2), state=State.TEST)
    _answered_at(p, T0 + timedelta(minutes=24))
    lifecycle.exclude(p, reason="attention: failed", kind=Kind.ATTENTION, at=T0 + timedelta(minutes=24))
    overrides.override(p, admit=True, reason="the check was ambiguous", actor=None)  # now: T0 + 1 day
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    assert _hours(study, p) == Decimal("0.4")
    line = pay_lines(study=study, participations=[p])[p.pk]
    assert (line.owed, line.bonus) == (Decimal("4.80"), Decimal("4.80"))


def test_a_readmitted_training_filter_failure_is_not_paid_for_the_wait(sst2):
    # Excluded at the end of training (12 min), readmitted at 3 hours; the worker never comes back and the idle
    # sweep notices at 4 hours. By hand: the 12 minutes of training, nothing of the 2 h 48 min wait, nothing after.
    study = make_study(sst2, shots=(0, 10), base_reward=Decimal("0.00"))
    p = add_annotator(study, 10, answers=[], training_answers=[["positive"]] * 3, state=State.TRAINING)
    _answered_at(p, T0 + timedelta(minutes=10))
    lifecycle.exclude(p, reason="failed training filter", kind=Kind.TRAINING_FILTER, at=T0 + timedelta(minutes=12))
    lifecycle.transition(p, to_state=State.TEST, reason="admin override", at=T0 + timedelta(hours=3))
    assert _hours(study, p) == Decimal("0.2")  # readmitted, not back yet
    abandonment.abandon(p, reason="no activity for 60 minutes", at=T0 + timedelta(hours=4))
    assert _hours(study, p) == Decimal("0.2")


def test_paid_time_is_a_pure_function_of_the_events():
    # The one function every path calls (and a model test can call): two exclusions, one readmission.
    # Claimed at T0; excluded at 10 min (mid-training, by an admin); readmitted at 40; answered until 70;
    # excluded again at 70 by the attention rule. By hand: 10 + (70 - 40) = 40 minutes.
    events = [
        (State.CLAIMED, State.TRAINING, T0 + timedelta(minutes=1)),
        (State.TRAINING, State.EXCLUDED, T0 + timedelta(minutes=10)),
        (State.EXCLUDED, State.TEST, T0 + timedelta(minutes=40)),
        (State.TEST, State.EXCLUDED, T0 + timedelta(minutes=70)),
    ]
    seconds = paid_time(
        events,
        start=T0,
        last_answer=T0 + timedelta(minutes=70),
        state=State.EXCLUDED,
        last_activity=T0 + timedelta(minutes=70),
    )
    assert seconds == 40 * 60
