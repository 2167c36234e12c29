"""The pay rule (annotation/services/money/pay.py) pinned where mutation testing found it loose
(scripts/mutation.sh pay): every expectation is worked out by hand from the rule in docs/reports.md, never
read back from the code."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from annotation.models import Participation, ParticipationEvent, Response, Study, SurveyResponse
from annotation.services.money import pay
from tests.factories import ConditionFactory, ParticipationFactory, ResponseFactory, StudyFactory

State = Participation.State
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


# -- work_end: the end of paid time ------------------------------------------------------------------------


def test_the_last_answer_ends_work_when_it_is_the_latest_act():
    events = [(State.TEST, State.COMPLETED, at(10))]
    assert pay.work_end(events, last_answer=at(12), state=State.COMPLETED, last_activity=at(5), start=at(0)) == at(12)


def test_only_the_first_completion_ends_the_work():
    # Completed at 10, readmitted by staff at 50 and completed again at once at 60: the work ended at 10.
    events = [
        (State.TEST, State.COMPLETED, at(10)),
        (State.COMPLETED, State.EXCLUDED, at(20)),
        (State.EXCLUDED, State.TEST, at(50)),
        (State.TEST, State.COMPLETED, at(60)),
    ]
    assert pay.work_end(events, last_answer=None, state=State.COMPLETED, last_activity=at(1), start=at(0)) == at(10)


def test_an_exclusion_during_the_work_ends_it_and_one_after_completion_does_not():
    during = [(State.TEST, State.EXCLUDED, at(15))]
    assert pay.work_end(during, last_answer=at(9), state=State.EXCLUDED, last_activity=at(1), start=at(0)) == at(15)
    after = [(State.TEST, State.COMPLETED, at(10)), (State.COMPLETED, State.EXCLUDED, at(40))]
    assert pay.work_end(after, last_answer=at(9), state=State.EXCLUDED, last_activity=at(1), start=at(0)) == at(10)
    # From a state that is not work (an exclusion of an abandoned worker): not the end of the work.
    idle = [(State.TEST, State.ABANDONED, at(30)), (State.ABANDONED, State.EXCLUDED, at(90))]
    assert pay.work_end(idle, last_answer=at(20), state=State.EXCLUDED, last_activity=at(1), start=at(0)) == at(20)


def test_a_declined_consent_ends_the_work_when_declined():
    events = [(State.CLAIMED, State.DECLINED, at(3))]
    assert pay.work_end(events, last_answer=None, state=State.DECLINED, last_activity=at(1), start=at(0)) == at(3)


def test_an_abandonment_ends_with_the_step_begun_before_it():
    # Began the test at 8, no answer, the idle sweep noticed at 60: the work ended at 8.
    events = [(State.CLAIMED, State.TEST, at(8)), (State.TEST, State.ABANDONED, at(60))]
    assert pay.work_end(events, last_answer=None, state=State.ABANDONED, last_activity=at(2), start=at(0)) == at(8)
    # Abandoned straight after the claim: nothing was done, so the work ended when it began.
    first = [(State.CLAIMED, State.ABANDONED, at(60))]
    assert pay.work_end(first, last_answer=None, state=State.ABANDONED, last_activity=at(2), start=at(0)) == at(0)


def test_an_abandonment_without_a_start_ends_at_the_last_activity():
    events = [(State.CLAIMED, State.ABANDONED, at(60))]
    assert pay.work_end(events, last_answer=None, state=State.ABANDONED, last_activity=at(2)) == at(2)


def test_a_worker_still_at_work_is_paid_to_the_last_activity():
    events = [(State.CLAIMED, State.TEST, at(5))]
    assert pay.work_end(events, last_answer=at(7), state=State.TEST, last_activity=at(9), start=at(0)) == at(9)
    # At work with an answer after the last activity stamp: the answer is later, and counts.
    assert pay.work_end(events, last_answer=at(11), state=State.TEST, last_activity=at(9), start=at(0)) == at(11)


def test_a_completed_worker_is_not_paid_to_a_later_activity():
    events = [(State.TEST, State.COMPLETED, at(10))]
    assert pay.work_end(events, last_answer=None, state=State.COMPLETED, last_activity=at(99), start=at(0)) == at(10)


# -- excluded_stretches and paid_time -------------------------------------------------------------------


def test_the_stretches_between_exclusions_and_readmissions():
    events = [
        (State.TEST, State.EXCLUDED, at(10)),
        (State.EXCLUDED, State.TEST, at(30)),
        (State.TEST, State.EXCLUDED, at(40)),
    ]
    assert pay.excluded_stretches(events) == [(at(10), at(30)), (at(40), None)]
    assert pay.excluded_stretches([(State.CLAIMED, State.TEST, at(1))]) == []
    # A move out of "excluded" with no exclusion seen (the exclusion event lost) is no stretch.
    assert pay.excluded_stretches([(State.EXCLUDED, State.TEST, at(5))]) == []


def test_paid_time_leaves_out_the_excluded_stretch():
    # Claimed at 0, excluded at 10 by the training filter, readmitted at 70, completed at 90:
    # paid 10 + 20 = 30 minutes.
    events = [
        (State.CLAIMED, State.TRAINING, at(1)),
        (State.TRAINING, State.EXCLUDED, at(10)),
        (State.EXCLUDED, State.TEST, at(70)),
        (State.TEST, State.COMPLETED, at(90)),
    ]
    seconds = pay.paid_time(events, start=at(0), last_answer=at(89), state=State.COMPLETED, last_activity=at(2))
    assert seconds == 30 * 60


def test_paid_time_clips_the_stretch_to_the_work():
    # Excluded at 10 and readmitted at 70, but the last act was at 10 (a readmission that ended the test at
    # once): the stretch after the end of the work takes nothing off. Paid 10 minutes.
    events = [
        (State.TEST, State.EXCLUDED, at(10)),
        (State.EXCLUDED, State.TEST, at(70)),
        (State.TEST, State.COMPLETED, at(70)),
    ]
    seconds = pay.paid_time(events, start=at(0), last_answer=at(10), state=State.COMPLETED, last_activity=at(1))
    assert seconds == 70 * 60 - 60 * 60
    # An exclusion event dated before the claim (an event log moved back): only the part after the start counts.
    early = [(State.CLAIMED, State.EXCLUDED, at(-30)), (State.EXCLUDED, State.TEST, at(5))]
    seconds = pay.paid_time(early, start=at(0), last_answer=None, state=State.TEST, last_activity=at(20))
    assert seconds == 15 * 60


def test_paid_time_never_negative():
    # The last activity before the claim (clock skew): zero, not a negative amount.
    seconds = pay.paid_time([], start=at(10), last_answer=None, state=State.TEST, last_activity=at(4))
    assert seconds == 0.0


def test_paid_time_of_a_worker_who_left_at_once_is_nothing():
    # Claimed at 0, nothing done, the idle sweep noticed at 60 (the participation's last activity at 2 is the
    # sweep's own touch): paid nothing, not the 2 minutes to that touch.
    events = [(State.CLAIMED, State.ABANDONED, at(60))]
    seconds = pay.paid_time(events, start=at(0), last_answer=None, state=State.ABANDONED, last_activity=at(2))
    assert seconds == 0.0


def test_paid_time_of_an_open_exclusion_stops_at_the_exclusion():
    events = [(State.TEST, State.EXCLUDED, at(25))]
    seconds = pay.paid_time(events, start=at(0), last_answer=at(20), state=State.EXCLUDED, last_activity=at(1))
    assert seconds == 25 * 60


# -- owed, pay_line, PayLine --------------------------------------------------------------------------------


def test_owed_is_rate_times_hours_rounded_half_up():
    assert pay.owed(rate=Decimal("100"), seconds=3600) == Decimal("100.00")
    assert pay.owed(rate=Decimal("12"), seconds=1800) == Decimal("6.00")
    assert pay.owed(rate=Decimal("9"), seconds=2) == Decimal("0.01")  # 0.005: half-up, not to the even 0.00
    assert pay.owed(rate=Decimal("10.50"), seconds=0.5) == Decimal("0.00")  # 0.00146
    assert str(pay.owed(rate=Decimal("7"), seconds=60)) == "0.12"  # two places: 0.11666


def test_pay_line_without_a_known_reward():
    line = pay.pay_line(rate=Decimal("12"), base=None, participation_id=7, seconds=1800)
    assert line == pay.PayLine(7, 1800, Decimal("6.00"), None, None, None, False)
    assert line.amount == Decimal("6.00")


def test_pay_line_paid_by_the_hour():
    line = pay.pay_line(rate=Decimal("12"), base=Decimal("0"), participation_id=3, seconds=1800)
    assert line == pay.PayLine(3, 1800, Decimal("6.00"), Decimal("0.00"), Decimal("6.00"), Decimal("12"), False)
    short = pay.pay_line(rate=Decimal("12"), base=Decimal("0"), participation_id=3, seconds=59)
    assert short.effective_hourly is None and short.bonus == Decimal("0.20")  # 12 × 59/3600 = 0.1967
    exactly = pay.pay_line(rate=Decimal("12"), base=Decimal("0"), participation_id=3, seconds=60)
    assert exactly.effective_hourly == Decimal("12")


def test_pay_line_tops_a_reward_below_the_rate_up():
    # Reward 1.50 for 30 minutes: 3.00 an hour, below 12; owed 6.00, so the bonus is 4.50.
    line = pay.pay_line(rate=Decimal("12"), base=Decimal("1.50"), participation_id=1, seconds=1800)
    assert line == pay.PayLine(1, 1800, Decimal("6.00"), Decimal("1.50"), Decimal("4.50"), Decimal("3.00"), True)
    assert line.amount == Decimal("6.00") and line.received_hourly == Decimal("12.00")


def test_pay_line_a_reward_at_the_rate_earns_no_bonus():
    # Reward 6.00 for 30 minutes is exactly 12.00 an hour: not below the rate.
    line = pay.pay_line(rate=Decimal("12"), base=Decimal("6.00"), participation_id=1, seconds=1800)
    assert (line.effective_hourly, line.below_rate, line.bonus) == (Decimal("12.00"), False, Decimal("0.00"))
    # A reward above the rate: none either, and what was received is the reward.
    rich = pay.pay_line(rate=Decimal("12"), base=Decimal("9.00"), participation_id=1, seconds=1800)
    assert (rich.effective_hourly, rich.below_rate, rich.bonus, rich.amount) == (
        Decimal("18.00"),
        False,
        Decimal("0.00"),
        Decimal("9.00"),
    )


def test_pay_line_under_a_minute_has_no_hourly_figure():
    line = pay.pay_line(rate=Decimal("12"), base=Decimal("0.10"), participation_id=1, seconds=59)
    assert (line.effective_hourly, line.below_rate, line.bonus) == (None, False, Decimal("0.00"))
    assert line.received_hourly is None
    at_a_minute = pay.pay_line(rate=Decimal("12"), base=Decimal("0.10"), participation_id=1, seconds=60)
    # 0.10 for a minute is 6.00 an hour: below 12, owed 0.20, bonus 0.10.
    assert (at_a_minute.effective_hourly, at_a_minute.below_rate, at_a_minute.bonus) == (
        Decimal("6.00"),
        True,
        Decimal("0.10"),
    )
    assert at_a_minute.received_hourly == Decimal("12.00")


def test_pay_line_minutes_and_received_hourly_round_to_the_cent():
    line = pay.PayLine(1, 100, Decimal("1.00"), None, None, None, False)
    assert line.minutes == 1.67  # 100/60 = 1.666…
    assert line.received_hourly == Decimal("36.00")  # 1.00 × 3600/100
    odd = pay.PayLine(1, 7000, Decimal("1.00"), Decimal("0.40"), Decimal("0.20"), None, True)
    assert odd.amount == Decimal("0.60")
    assert odd.received_hourly == Decimal("0.31")  # 0.60 × 3600/7000 = 0.30857…
    no_bonus = pay.PayLine(1, 7000, Decimal("1.00"), Decimal("0.40"), None, None, True)
    assert no_bonus.amount == Decimal("1.00")


# -- the posted reward -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_stored_reward_and_its_absence():
    study = StudyFactory(base_reward=Decimal("1.5"))
    base = pay.stored_base(study)
    assert base == pay.BaseReward(Decimal("1.50"), "the study's posted reward (base_reward)")
    assert str(base.amount) == "1.50"
    assert pay.require_base(study) == base
    none = StudyFactory(slug="no-reward", base_reward=None)
    assert pay.stored_base(none) is None
    with pytest.raises(pay.BaseRewardUnknown) as refused:
        pay.require_base(none)
    assert str(refused.value) == (
        "Study 'no-reward' has no posted reward (base_reward is empty): set it to the reward posted on "
        "the platform (0 only if none was posted) before bonuses are computed."
    )


# -- paid_seconds and pay_lines: the database side ----------------------------------------------------------


def _participation(study, **fields) -> Participation:
    condition = study.conditions.first() or ConditionFactory(study=study)
    p = ParticipationFactory(condition=condition, slot_index=condition.participations.count(), **fields)
    Participation.objects.filter(pk=p.pk).update(created_at=at(-100), last_activity_at=at(1))
    p.refresh_from_db()
    return p


def _event(p, from_state, to_state, minutes) -> None:
    ParticipationEvent.objects.create(participation=p, from_state=from_state, to_state=to_state, at=at(minutes))


@pytest.mark.django_db
def test_paid_seconds_read_events_in_time_order_and_only_the_workers_own_answers():
    study = StudyFactory(base_reward=Decimal("0"), hourly_rate=Decimal("12"))
    p = _participation(study, state=State.COMPLETED)
    other = _participation(study, state=State.TEST)
    # Recorded out of time order (events arriving late): the completion at 20 first, the readmission at 10
    # before the exclusion at 5 it undid. Read in storage order, the exclusion would look open (paid 5 min).
    _event(p, State.TEST, State.COMPLETED, 20)
    _event(p, "", State.CLAIMED, 0)
    _event(p, State.EXCLUDED, State.TEST, 10)
    _event(p, State.TEST, State.EXCLUDED, 5)
    ResponseFactory(participation=p, submitted_at=at(19))
    ResponseFactory(participation=other, submitted_at=at(200))  # another worker's answer: not p's work
    _event(other, "", State.CLAIMED, 50)
    # p: 0 → 20 less the stretch 5 → 10 = 15 minutes. other: claimed at 50, at work, last answer at 200.
    assert pay.paid_seconds([p]) == {p.pk: 15 * 60}
    lines = pay.pay_lines(study=study, participations=[p, other])
    assert lines[p.pk].seconds == 15 * 60 and lines[p.pk].owed == Decimal("3.00")
    assert [line.participation_id for line in lines.values()] == [p.pk, other.pk]
    assert lines[other.pk].seconds == 150 * 60 and lines[other.pk].owed == Decimal("30.00")


@pytest.mark.django_db
def test_paid_seconds_take_the_first_claim_and_fall_back_on_the_creation():
    study = StudyFactory(base_reward=Decimal("1.00"), hourly_rate=Decimal("12"))
    p = _participation(study, state=State.TEST)
    _event(p, "", State.CLAIMED, 30)
    _event(p, State.ABANDONED, State.CLAIMED, 40)  # a later re-claim does not move the start
    unclaimed = _participation(study, state=State.TEST)  # no claim event: from its creation, at -100
    Participation.objects.filter(pk=p.pk).update(last_activity_at=at(60))
    p.refresh_from_db()
    ResponseFactory(participation=p, submitted_at=at(45))  # at work: paid to the last activity (60), not to 45
    assert pay.paid_seconds([p, unclaimed]) == {p.pk: 30 * 60, unclaimed.pk: 101 * 60}
    # A reward given outright replaces the stored one.
    lines = pay.pay_lines(study=study, participations=[p], base=pay.BaseReward(Decimal("0"), "given"))
    assert lines[p.pk].bonus == Decimal("6.00") and lines[p.pk].base == Decimal("0.00")
    stored = pay.pay_lines(study=study, participations=[p])[p.pk]
    assert (stored.base, stored.bonus) == (Decimal("1.00"), Decimal("5.00"))


@pytest.mark.django_db
def test_paid_seconds_count_locked_answers_only():
    study = StudyFactory(base_reward=Decimal("0"), hourly_rate=Decimal("12"))
    p = _participation(study, state=State.EXCLUDED)
    _event(p, "", State.CLAIMED, 0)
    _event(p, State.TEST, State.EXCLUDED, 5)
    ResponseFactory(participation=p, submitted_at=at(4))
    ResponseFactory(participation=p, submitted_at=None, status=Response.Status.PENDING)
    assert pay.paid_seconds([p]) == {p.pk: 5 * 60}


@pytest.mark.django_db
def test_the_survey_before_training_is_work_and_the_one_after_completion_is_not():
    study = StudyFactory(base_reward=Decimal("0"), hourly_rate=Decimal("12"))
    Placement = Study.SurveyPlacement
    # Left after the survey before training: paid to the survey, not to the claim alone.
    surveyed = _participation(study, state=State.ABANDONED)
    _event(surveyed, "", State.CLAIMED, 0)
    SurveyResponse.objects.create(participation=surveyed, placement=Placement.BEFORE_TRAINING, submitted_at=at(5))
    _event(surveyed, State.CLAIMED, State.ABANDONED, 60)
    # The survey early, the answers later: the latest of them all ends the work, whichever was read last.
    trained = _participation(study, state=State.ABANDONED)
    _event(trained, "", State.CLAIMED, 0)
    SurveyResponse.objects.create(participation=trained, placement=Placement.BEFORE_TRAINING, submitted_at=at(2))
    _event(trained, State.CLAIMED, State.TRAINING, 3)
    ResponseFactory(participation=trained, submitted_at=at(20))
    _event(trained, State.TRAINING, State.ABANDONED, 60)
    # The survey after the test comes after the completion: not paid.
    done = _participation(study, state=State.COMPLETED)
    _event(done, "", State.CLAIMED, 0)
    _event(done, State.TEST, State.COMPLETED, 20)
    SurveyResponse.objects.create(participation=done, placement=Placement.AFTER_TEST, submitted_at=at(30))
    assert pay.paid_seconds([surveyed, trained, done]) == {surveyed.pk: 5 * 60, trained.pk: 20 * 60, done.pk: 20 * 60}
