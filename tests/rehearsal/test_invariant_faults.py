"""Every rehearsal invariant proven to fail: each test injects the fault its invariant exists to catch into
a rehearsed study's rows (or the facts the rehearsal saw) and asserts that invariant, and only it, fails."""

import copy
import re
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from annotation.models import AttentionDecision, Participation, Response
from annotation.rehearsal import invariants
from annotation.rehearsal.client import Recorder, Reply
from annotation.rehearsal.report import Report
from tests.rehearsal import prepared

State = Participation.State
SPARE = 99  # a slot number past the design's: the database keeps one holder per slot

# One worker runs them all (pytest-xdist): the rehearsal behind them runs once per worker that needs it.
pytestmark = [pytest.mark.django_db, pytest.mark.timeout(300), pytest.mark.xdist_group("rehearsed-state")]


@pytest.fixture(scope="session")
def rehearsed(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        return prepared.rehearse_once(tmp_path_factory.mktemp("rehearsed"))


@pytest.fixture
def state(rehearsed):
    return prepared.load(rehearsed), copy.deepcopy(rehearsed.facts)


def failing(study, facts):
    return {i.name: i.detail for i in invariants.check_all(study=study, facts=facts) if not i.passed}


def worker(facts, behaviour):
    return next(w for w in facts["crowd"] if w["behaviour"] == behaviour)


def participation(facts, behaviour):
    return Participation.objects.get(worker__external_id=worker(facts, behaviour)["worker_id"], is_preview=False)


def a_completed(study):
    return Participation.objects.filter(study=study, state=State.COMPLETED).order_by("pk").first()


def test_the_rehearsed_state_keeps_every_invariant(state):
    study, facts = state
    assert not failing(study, facts)


def test_a_condition_one_worker_short_fails_the_filled_invariant(state):
    study, facts = state
    Participation.objects.filter(pk=a_completed(study).pk).update(state=State.ABANDONED)
    assert "every condition filled by the design's number of fresh workers" in failing(study, facts)


def test_a_worker_let_into_a_second_condition_fails_the_one_condition_invariant(state):
    """The database itself refuses a second participation in a task (a unique constraint), so the fault is
    the entry link letting the worker in rather than answering 403."""
    study, facts = state
    worker(facts, "second_condition").update(refused=None, state="started")
    assert "nobody in two conditions of a task" in failing(study, facts)


def test_a_slot_the_sweep_left_held_fails_the_leaver_invariant(state):
    study, facts = state
    Participation.objects.filter(pk=participation(facts, "leaves").pk).update(state=State.CLAIMED, slot_index=SPARE)
    assert "no slot held by a worker who left" in failing(study, facts)


def test_a_protocol_error_fails_the_crowd_invariant(state):
    study, facts = state
    worker(facts, "skipper")["errors"].append("POST /api/session/submit/ answered 500")
    assert "every simulated worker followed the protocol" in failing(study, facts)


def test_an_attention_failure_approved_automatically_fails_the_outcome_invariant(state):
    study, facts = state
    facts["standin"]["submissions"][worker(facts, "fails_attention")["worker_id"]] = "APPROVED"
    assert "outcome ↔ completion code/redirect ↔ Prolific action" in failing(study, facts)


def test_a_pay_rule_that_pays_a_minute_more_fails_the_paid_time_invariant(state, monkeypatch):
    study, facts = state
    victim = a_completed(study).pk
    real = invariants.paid_seconds
    monkeypatch.setattr(
        invariants, "paid_seconds", lambda ps: {k: v + (60 if k == victim else 0) for k, v in real(ps).items()}
    )
    assert "paid time = slot taken → last answer (pay functions vs events and answers)" in failing(study, facts)


PAY = "pay = base + bonus = owed at the study's rate; bonus paid as computed"


def test_an_overpaid_bonus_on_prolific_fails_the_pay_invariant(state):
    study, facts = state
    facts["standin"]["bonus_paid"][a_completed(study).worker.external_id] = "0.50"
    assert PAY in failing(study, facts)


def test_a_bonus_that_does_not_top_up_to_the_owed_amount_fails_the_pay_invariant(state, monkeypatch):
    """The amount right, the bonus a cent over: the old ``amount == base + bonus`` check (amount being that
    very sum) could not see it; the bonus is now compared with the owed amount less the reward."""
    study, facts = state
    victim = a_completed(study).pk
    real = invariants.pay_lines

    def broken(**kwargs):
        lines = real(**kwargs)
        lines[victim] = replace(lines[victim], bonus=lines[victim].bonus + Decimal("0.01"))
        return lines

    monkeypatch.setattr(invariants, "pay_lines", broken)
    assert PAY in failing(study, facts)


def test_a_second_bonus_payment_fails_the_paid_twice_invariant(state):
    study, facts = state
    facts["standin"]["bonus_payments"][a_completed(study).worker.external_id] = 2
    assert "nobody paid twice" in failing(study, facts)


def test_a_second_bonus_run_that_would_pay_again_fails_the_paid_twice_invariant(state):
    study, facts = state
    again = facts["prolific"].setdefault("bonus_again", {})
    again.setdefault("rows", []).append({"participant": a_completed(study).worker.external_id, "state": "done"})
    assert "nobody paid twice" in failing(study, facts)


def test_a_participant_missing_from_the_group_fails_the_group_invariant(state):
    study, facts = state
    facts["standin"]["group_members"].remove(a_completed(study).worker.external_id)
    assert "the Prolific participant group holds everyone who took part" in failing(study, facts)


RULES = "attention checks and the training filter catch who they should"


def test_the_attention_rule_with_greater_than_for_at_least_fails_the_rules_invariant(state):
    """What the rule with ``failed > limit`` (for ``>=``) decides on the check failer (1 failed, limit 1):
    passed, and completed. The invariant recomputes the failures from the answers and the rule's decision
    from the limit, so it sees it (it used to check only that a decision existed)."""
    study, facts = state
    failer = participation(facts, "fails_attention")
    assert study.attention_fail_limit == 1 and failer.state == State.EXCLUDED
    AttentionDecision.objects.filter(participation=failer).update(
        decision=AttentionDecision.Decision.PASSED, reason="failed 1 of 1 attention checks (limit 1)"
    )
    Participation.objects.filter(pk=failer.pk).update(state=State.COMPLETED, exclusion_kind="", slot_index=SPARE)
    assert RULES in failing(study, facts)


def test_an_attention_rule_that_tallies_a_wrong_answer_as_passed_fails_the_rules_invariant(state):
    study, facts = state
    failer = participation(facts, "fails_attention")
    Response.all_objects.filter(participation=failer, attention_check__isnull=False).update(score=1.0)
    AttentionDecision.objects.filter(participation=failer).update(
        decision=AttentionDecision.Decision.PASSED, failed_count=0, passed_count=1
    )
    Participation.objects.filter(pk=failer.pk).update(state=State.COMPLETED, exclusion_kind="", slot_index=SPARE)
    assert RULES in failing(study, facts)


def test_a_filter_that_lets_the_failer_through_fails_the_rules_invariant(state):
    study, facts = state
    Participation.objects.filter(pk=participation(facts, "fails_training").pk).update(
        state=State.COMPLETED, exclusion_kind="", slot_index=SPARE
    )
    assert RULES in failing(study, facts)


COUNTED = "attention rows, previews, excluded workers absent from tables, agreement, exports"


def test_an_excluded_worker_counted_as_completed_fails_the_counted_only_invariant(state):
    """The state column says completed, the events say excluded: the table counts the worker. (The old
    check compared the export's state with that same column, and passed.)"""
    study, facts = state
    Participation.objects.filter(pk=participation(facts, "fails_attention").pk).update(
        state=State.COMPLETED, slot_index=SPARE
    )
    assert COUNTED in failing(study, facts)


def test_a_stored_score_off_the_gold_fails_the_table_invariant(state):
    study, facts = state
    answer = (
        Response.objects.filter(participation=a_completed(study), phase="test", status="answered", score=0.0)
        .order_by("pk")
        .first()
        or Response.objects.filter(participation=a_completed(study), phase="test", status="answered")
        .order_by("pk")
        .first()
    )
    Response.all_objects.filter(pk=answer.pk).update(score=0.5)
    assert "table = recomputation from the raw-annotations export, each skip policy" in failing(study, facts)


def test_a_statement_count_off_by_one_fails_the_statement_invariant(state, monkeypatch):
    study, facts = state
    real = invariants.build_statement

    def off_by_one(**kwargs):
        statement = real(**kwargs)
        statement.sections = [
            replace(s, text=re.sub(r"(\d+) completed", lambda m: f"{int(m[1]) + 1} completed", s.text))
            if s.title == "Workers"
            else s
            for s in statement.sections
        ]
        return statement

    monkeypatch.setattr(invariants, "build_statement", off_by_one)
    assert "every count in the human-evaluation statement = the database's" in failing(study, facts)


def test_a_server_error_fails_the_no_server_error_invariant(state):
    study, _ = state
    recorder = Recorder()
    recorder.add("submit", 12.0, Reply(200, {}, b""))
    assert Report.build(**report_args(study, recorder)).passed
    recorder.add("submit", 15.0, Reply(500, {}, b""))
    report = Report.build(**report_args(study, recorder))
    assert not report.passed and [i.name for i in report.invariants if not i.passed] == ["no server error"]


def report_args(study, recorder):
    return {
        "study": study.slug,
        "seed": 0,
        "scratch": {},
        "design": {},
        "invariants": [],
        "recorder": recorder,
        "wall_seconds": 1.0,
        "crowd_seconds": 1.0,
        "crowd": [],
        "prolific": {},
    }


def test_every_invariant_has_a_fault_injection_test():
    names = {name for name, _ in invariants.CHECKS} | {"no server error"}
    source = Path(__file__).read_text(encoding="utf-8")
    tested = {name for name in names if name in source or name in CONSTANTS.values()}
    assert names == tested, names - tested


CONSTANTS = {"PAY": PAY, "RULES": RULES, "COUNTED": COUNTED}
