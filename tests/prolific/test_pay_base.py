"""The bonus tops up the reward actually posted: read from Prolific when on, else the study's stated reward."""

from datetime import timedelta
from decimal import Decimal

import pytest

from annotation.models import Participation, ProlificAction
from annotation.services.money.pay import PAY_RULE_VERSION
from annotation.services.prolific import operations
from annotation.services.state import lifecycle
from tests.factories import ConditionFactory, StudyFactory
from tests.prolific.conftest import join

State = Participation.State


def _study(base_reward):
    study = StudyFactory(currency="GBP", hourly_rate=Decimal("12.00"), base_reward=base_reward)
    return study, ConditionFactory(study=study, shots=0)


def rows_of(report):
    return {row.participant: row for row in report.rows}


@pytest.fixture
def off(settings):
    settings.PROLIFIC_API_TOKEN = ""


def test_with_the_operations_on_the_base_is_the_reward_posted_on_prolific(prolific_on, db):
    study, condition = _study(Decimal("3.00"))
    prolific_on.add_study(study_id="PS1", reward=400)  # 4.00 posted, whatever the study says
    join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=30)
    report = operations.plan(operation="bonus", study=study)
    assert rows_of(report)["p1"].amount == Decimal("2.00")  # 6.00 owed - 4.00 posted
    assert any("base reward 4.00 GBP" in n and "read from Prolific" in n for n in report.notes)
    assert any("differs from Prolific's" in n for n in report.notes)
    assert any(f"pay rule version {PAY_RULE_VERSION}" in n for n in report.notes)


def test_a_prolific_study_without_a_usable_reward_gets_no_bonus(prolific_on, db):
    study, condition = _study(Decimal("3.00"))
    prolific_on.add_study(study_id="PS1", reward=None)
    join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=30)
    report = operations.run(operation="bonus", study=study)
    row = rows_of(report)["p1"]
    assert row.state == "skip" and "could not read the reward posted on Prolific study PS1" in row.note
    assert prolific_on.writes() == [] and not ProlificAction.objects.exists()


def test_with_the_operations_off_an_unset_reward_refuses_every_bonus(standin, off, db):
    study, condition = _study(None)
    join(standin, condition, "p1", state=State.COMPLETED, minutes=30)
    report = operations.plan(operation="bonus", study=study)
    row = rows_of(report)["p1"]
    assert (row.state, row.amount) == ("skip", None)
    assert "base_reward) is not set" in row.note
    assert any(n.startswith("no bonus computed") for n in report.notes)
    assert report.total == Decimal("0.00")


def test_with_the_operations_off_a_stated_reward_of_zero_makes_the_whole_pay_the_bonus(standin, off, db):
    study, condition = _study(Decimal("0.00"))
    join(standin, condition, "p1", state=State.COMPLETED, minutes=30)
    report = operations.plan(operation="bonus", study=study)
    assert (rows_of(report)["p1"].state, rows_of(report)["p1"].amount) == ("to do", Decimal("6.00"))
    assert any(
        "base reward 0.00 GBP per participant: the study's posted reward (base_reward)" in n for n in report.notes
    )


def test_with_the_operations_off_the_stored_reward_is_stated(standin, off, db):
    study, condition = _study(Decimal("3.00"))
    join(standin, condition, "p1", state=State.COMPLETED, minutes=30)
    report = operations.plan(operation="bonus", study=study)
    assert rows_of(report)["p1"].amount == Decimal("3.00")
    assert any("base reward 3.00 GBP per participant: the study's posted reward" in n for n in report.notes)


def test_a_verdict_hours_after_completion_does_not_raise_the_bonus(prolific_on, prolific_study):
    study, condition = prolific_study
    p = join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=30)
    completed = p.events.get(to_state=State.COMPLETED).at
    lifecycle.exclude(
        p, reason="group verdict", kind=Participation.ExclusionKind.TRAINING_FILTER, at=completed + timedelta(hours=6)
    )
    report = operations.run(operation="bonus", study=study, decide_fn=lambda _: _approve())
    assert rows_of(report)["p1"].state == "done"
    assert prolific_on.paid_to("p1") == Decimal("3.00")  # 0.50 h at 12.00 = 6.00, less the 3.00 posted
    action = ProlificAction.objects.get(participation=p, kind="bonus")
    assert (action.amount, action.pay_rule_version) == (Decimal("3.00"), PAY_RULE_VERSION)


def test_a_bonus_paid_under_an_earlier_rule_stays_as_recorded(prolific_on, prolific_study):
    study, condition = prolific_study
    prolific_on.add_study(study_id="PS1", reward=600)  # covers the 6.00 owed: the current rule owes no bonus
    p = join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=30)
    ProlificAction.objects.create(
        participation=p, kind="bonus", action="BONUS", status="done", amount=Decimal("75.00"), pay_rule_version="1"
    )
    report = operations.run(operation="bonus", study=study)
    row = rows_of(report)["p1"]
    assert (row.state, row.amount) == ("done", Decimal("75.00"))  # nobody paid twice, nothing clawed back
    assert "pay rule version 1" in row.note and report.total == Decimal("75.00")
    assert prolific_on.writes() == []
    assert ProlificAction.objects.get(participation=p, kind="bonus").pay_rule_version == "1"


def _approve():
    from annotation.services.prolific.outcomes import APPROVE, Decision

    return Decision(APPROVE, "completed")
