"""The bonus run (annotation/services/prolific/bonus.py) pinned where mutation testing found it loose
(scripts/mutation.sh bonus): the notes and rows a person reads before paying, the guard on what Prolific set
up, and what is recorded of each failure. Amounts worked out by hand: 12.00/h, 3.00 posted on Prolific."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from annotation.models import AuditEntry, Participation, ProlificAction, ProlificCall
from annotation.services.money.pay import BaseReward
from annotation.services.prolific import bonus, operations
from annotation.services.prolific.runs import CallLog, make_client
from tests.factories import ConditionFactory, StudyFactory
from tests.prolific.conftest import join

State = Participation.State
VERSION_NOTE = "pay rule version 4 (annotation.services.money.pay; docs/reports.md)"
UNSET = (
    "the study's posted reward (base_reward) is not set: set it (0 only if no reward was posted), "
    "or turn the Prolific operations on to read it from Prolific"
)


def rows_of(report):
    return {row.participant: row for row in report.rows}


def _study(base_reward=Decimal("3.00"), currency="GBP"):
    study = StudyFactory(currency=currency, hourly_rate=Decimal("12.00"), base_reward=base_reward)
    return study, ConditionFactory(study=study, shots=0)


@pytest.fixture
def off(settings):
    settings.PROLIFIC_API_TOKEN = ""


# -- the plan: its notes and rows ---------------------------------------------------------------------------


def test_a_bonus_to_pay_is_planned_with_its_action_and_minutes(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=30)
    row = rows_of(operations.plan(operation="bonus", study=study))["p1"]
    assert (row.action, row.state, row.amount, row.note) == ("BONUS", "to do", Decimal("3.00"), "30.0 paid minutes")


def test_an_unset_reward_is_named_in_full_in_the_notes_and_the_rows(standin, off, db):
    study, condition = _study(base_reward=None)
    join(standin, condition, "p1", state=State.COMPLETED, minutes=30)
    report = operations.plan(operation="bonus", study=study)
    assert report.notes[:2] == [f"no bonus computed: {UNSET}", VERSION_NOTE]  # then: the integration is off
    assert rows_of(report)["p1"].note == f"no bonus computed: {UNSET}"


def test_an_unset_reward_with_nobody_yet_says_so(off, db):
    study, _ = _study(base_reward=None)
    assert bonus.bases(study, [], None) == ({}, ["no bonus computed: the posted reward is not set"])


def test_a_participant_without_a_study_id_is_skipped_and_no_study_is_read_for_them(prolific_on, db):
    study, condition = _study()
    join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=30, slot=0)
    bare = join(prolific_on, condition, "p2", state=State.COMPLETED, minutes=30, slot=1)
    bare.platform_data = {"SESSION_ID": "sub-p2"}
    bare.save(update_fields=["platform_data"])
    report = operations.plan(operation="bonus", study=study)
    row = rows_of(report)["p2"]
    assert (row.state, row.note) == ("skip", "no Prolific study id (STUDY_ID) was recorded at entry")
    assert prolific_on.requests == [("GET", "/api/v1/studies/PS1/", {})]  # no study "" asked for


def test_an_unreadable_study_does_not_stop_the_next_from_being_read(prolific_on, db):
    study, condition = _study()
    prolific_on.add_study(study_id="PS1", reward=None)  # no usable reward: cannot be read
    prolific_on.add_study(study_id="PS2", reward=300)
    a = join(prolific_on, condition, "p1", state=State.COMPLETED, prolific_study="PS1", slot=0)
    b = join(prolific_on, condition, "p2", state=State.COMPLETED, prolific_study="PS2", slot=1)
    found, notes = bonus.bases(study, [a, b], make_client())
    assert sorted(found) == ["PS1", "PS2"]
    assert isinstance(found["PS1"], str) and found["PS1"].startswith("could not read the reward posted on Prolific")
    assert found["PS2"] == BaseReward(Decimal("3.00"), "the reward posted on Prolific study PS2 (read from Prolific)")
    assert notes == [
        found["PS1"],
        "base reward 3.00 GBP per participant: the reward posted on Prolific study PS2 (read from Prolific)",
    ]


def test_no_difference_is_noted_when_the_study_states_no_reward(prolific_on, db):
    study, condition = _study(base_reward=None)
    prolific_on.add_study(study_id="PS1", reward=400)
    p = join(prolific_on, condition, "p1", state=State.COMPLETED)
    _, notes = bonus.bases(study, [p], make_client())
    assert notes == [
        "base reward 4.00 GBP per participant: the reward posted on Prolific study PS1 (read from Prolific)"
    ]


def test_a_bonus_of_exactly_one_unit_is_paid_and_none_is_not(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=20)  # 4.00 owed, 3.00 posted
    join(prolific_on, condition, "p2", state=State.COMPLETED, minutes=15, slot=1)  # 3.00 owed: all posted
    rows = rows_of(operations.plan(operation="bonus", study=study))
    assert (rows["p1"].state, rows["p1"].amount) == ("to do", Decimal("1.00"))
    assert (rows["p2"].state, rows["p2"].note) == ("skip", "no bonus owed: the posted reward covers the hourly rate")


@pytest.mark.parametrize("currency", ["EUR", ""])
def test_a_currency_prolific_does_not_pay_in_is_skipped_and_named(prolific_on, db, currency):
    study, condition = _study(currency=currency)
    join(prolific_on, condition, "p1", state=State.COMPLETED, minutes=30)
    row = rows_of(operations.plan(operation="bonus", study=study))["p1"]
    assert (row.state, row.currency) == ("skip", currency)
    assert row.note == f"the study's currency {currency!r} is not one Prolific pays in (GBP, USD)"


def test_a_recorded_bonus_names_the_rule_it_was_paid_under(prolific_on, prolific_study):
    study, condition = prolific_study
    unnamed = join(prolific_on, condition, "p1", state=State.COMPLETED, slot=0)
    second = join(prolific_on, condition, "p2", state=State.COMPLETED, slot=1)
    for p, version in ((unnamed, ""), (second, "2")):  # before versions were recorded: the first rule
        ProlificAction.objects.create(
            participation=p,
            kind="bonus",
            action="BONUS",
            status="done",
            amount=Decimal("5.00"),
            pay_rule_version=version,
        )
    rows = rows_of(operations.plan(operation="bonus", study=study))
    assert rows["p1"].note == "recorded under pay rule version 1"
    assert rows["p2"].note == "recorded under pay rule version 2"


def test_the_plan_shows_each_earlier_attempt_as_it_was_left(prolific_on, prolific_study):
    study, condition = prolific_study
    sent = join(prolific_on, condition, "p1", state=State.COMPLETED, slot=0)
    claimed = join(prolific_on, condition, "p2", state=State.COMPLETED, slot=1)
    refused = join(prolific_on, condition, "p3", state=State.COMPLETED, slot=2)
    create = ProlificAction.objects.create
    # Set up and sent, its answer lost; claimed by a run still setting it up; its set-up refused.
    create(participation=sent, kind="bonus", action="BONUS", status="uncertain", amount=Decimal("3.00"),
           prolific_id="bulk9", error="timed out")  # fmt: skip
    create(participation=claimed, kind="bonus", action="BONUS", status="uncertain")
    create(participation=refused, kind="bonus", action="BONUS", status="failed", error="boom")
    rows = rows_of(operations.plan(operation="bonus", study=study))
    assert (rows["p1"].state, rows["p1"].note) == (
        "uncertain",
        "sent, answer unknown: check bulk bonus bulk9 on Prolific. timed out",
    )
    assert (rows["p2"].state, rows["p2"].note) == ("uncertain", "sent, answer unknown: check bulk bonus  on Prolific. ")
    assert (rows["p3"].state, rows["p3"].note) == ("to do", "again (before: boom)")


# -- paying: the claim, the guard on the set-up, what each failure records ----------------------------------


def test_a_row_claimed_by_another_run_meanwhile_is_left_to_it(prolific_on, prolific_study):
    study, condition = prolific_study
    p = join(prolific_on, condition, "p1", state=State.COMPLETED)
    (row,) = operations.plan(operation="bonus", study=study).rows
    ProlificAction.objects.create(participation=p, kind="bonus", action="BONUS", status="uncertain")
    bonus.bonus_one(make_client(), CallLog(), row)
    assert (row.state, row.note) == ("uncertain", "being paid by another run, or uncertain")
    assert prolific_on.writes() == []


def test_a_paid_bonus_is_recorded_as_a_bonus_and_later_calls_are_not_charged_to_it(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED)
    (row,) = operations.plan(operation="bonus", study=study).rows
    client, log = make_client(), CallLog()
    client.on_call = log
    bonus.bonus_one(client, log, row)
    action = ProlificAction.objects.get(kind="bonus")
    assert (action.action, action.status, row.state) == ("BONUS", "done", "done")
    client.get_study("PS1")  # a call after the bonus, on the same log
    assert ProlificCall.objects.get(path__endswith="studies/PS1/").action is None


def test_a_refused_set_up_records_why(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED)
    prolific_on.fail_participants["p1"] = 400
    row = rows_of(operations.run(operation="bonus", study=study))["p1"]
    action = ProlificAction.objects.get(kind="bonus")
    assert (action.status, row.state) == ("failed", "failed")
    assert "(400)" in action.error and action.error == row.note


def _answer_instead(standin, change):
    """The stand-in sets the bonus up as asked, then answers ``change(answer)``."""
    original = standin.set_up_bonus

    def set_up(body):
        status, answer = original(body)
        return status, change(dict(answer))

    standin.set_up_bonus = set_up


def test_a_bonus_set_up_for_another_amount_is_not_paid(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED)  # 3.00 owed: 300 cents
    _answer_instead(prolific_on, lambda a: {**a, "amount": 250})
    row = rows_of(operations.run(operation="bonus", study=study))["p1"]
    (bulk_id,) = prolific_on.bulks
    answer = {"id": bulk_id, "study": "PS1", "amount": 250, "fees": 0, "total_amount": 300}
    error = f"Prolific set up an unexpected bonus ({answer!r}); expected 300 cents. Not paid."
    assert (row.state, row.note) == ("failed", error)
    action = ProlificAction.objects.get(kind="bonus")
    assert (action.status, action.error) == ("failed", error)
    assert prolific_on.paid_to("p1") == Decimal("0")


def test_a_set_up_answered_without_an_id_is_not_paid(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED)
    _answer_instead(prolific_on, lambda a: {"amount": a["amount"]})
    row = rows_of(operations.run(operation="bonus", study=study))["p1"]
    error = "Prolific set up an unexpected bonus ({'amount': 300}); expected 300 cents. Not paid."
    assert (row.state, row.note) == ("failed", error)
    assert ProlificAction.objects.get(kind="bonus").status == "failed"
    assert not any(path.endswith("/pay/") for _, path, _ in prolific_on.writes())


def test_a_set_up_answered_without_an_amount_is_paid(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED)
    _answer_instead(prolific_on, lambda a: {k: v for k, v in a.items() if k != "amount"})
    row = rows_of(operations.run(operation="bonus", study=study))["p1"]
    assert row.state == "done" and prolific_on.paid_to("p1") == Decimal("3.00")


def test_a_refused_payment_records_why_and_the_next_run_shows_the_amount(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED)
    original = prolific_on.pay
    prolific_on.pay = lambda bulk_id: (400, {"error": {"detail": "Insufficient balance"}})
    row = rows_of(operations.run(operation="bonus", study=study))["p1"]
    action = ProlificAction.objects.get(kind="bonus")
    assert (action.status, row.state) == ("set_up", "failed")
    assert "Insufficient balance" in action.error and action.error == row.note
    prolific_on.pay = original
    again = rows_of(operations.run(operation="bonus", study=study))["p1"]
    assert (again.state, again.amount) == ("done", Decimal("3.00"))


def test_a_lost_payment_answer_records_what_was_lost(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED)
    prolific_on.drop_reply["/pay/"] = "close"
    row = rows_of(operations.run(operation="bonus", study=study))["p1"]
    action = ProlificAction.objects.get(kind="bonus")
    assert (action.status, row.state) == ("uncertain", "uncertain")
    assert "RemoteDisconnected" in action.error
    assert row.note == f"{action.error} Check bulk bonus {action.prolific_id} on Prolific before paying again."


# -- resolving an uncertain bonus by hand -------------------------------------------------------------------


def _uncertain(standin, condition, pid, slot):
    p = join(standin, condition, pid, state=State.COMPLETED, slot=slot)
    return ProlificAction.objects.create(
        participation=p, kind="bonus", action="BONUS", status="uncertain", amount=Decimal("3.00"), prolific_id="b1"
    )


def test_only_an_uncertain_bonus_can_be_resolved(standin, prolific_study):
    _, condition = prolific_study
    action = _uncertain(standin, condition, "p1", 0)
    action.status = "done"
    action.save()
    with pytest.raises(ValueError) as refused:
        bonus.resolve_uncertain(action=action, paid=False, note="checked")
    assert str(refused.value) == "Only an uncertain action can be resolved."


def test_a_resolution_is_recorded_in_the_action_and_the_audit_trail(standin, prolific_study):
    _, condition = prolific_study
    staff = get_user_model().objects.create_user("checker")
    paid = _uncertain(standin, condition, "p1", 0)
    bonus.resolve_uncertain(action=paid, paid=True, note="seen on Prolific", actor=staff)
    paid.refresh_from_db()
    assert (paid.status, paid.error) == ("done", "resolved by hand: seen on Prolific")
    entry = AuditEntry.objects.get(action="prolific.resolve")
    assert (entry.actor, entry.participation, entry.target) == (
        staff,
        paid.participation,
        f"participation {paid.participation_id}",
    )
    assert (entry.before, entry.after) == ({"status": "uncertain"}, {"status": "done"})
    assert entry.detail == {"prolific_action": paid.pk, "kind": "bonus", "amount": "3.00", "note": "seen on Prolific"}

    unpaid = _uncertain(standin, condition, "p2", 1)
    long_note = "n" * 1000
    bonus.resolve_uncertain(action=unpaid, paid=False, note=long_note)
    unpaid.refresh_from_db()
    assert unpaid.status == "set_up"
    assert unpaid.error == ("resolved by hand: " + long_note)[:1000] and len(unpaid.error) == 1000
