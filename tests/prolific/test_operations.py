"""Review, bonus and group operations against the stand-in: dry run, run, re-run, partial failures."""

from decimal import Decimal

import pytest
from django.utils import timezone

from annotation.models import FilterDecision, ParticipationEvent, ProlificAction, ProlificCall, ProlificGroup
from annotation.models import Participation as P
from annotation.services.prolific import operations
from annotation.services.prolific.outcomes import SCREEN_OUT, Decision
from tests.factories import ConditionFactory, StudyFactory
from tests.prolific.conftest import join

State = P.State


def _fail_filter(p):
    from django.utils import timezone

    FilterDecision.objects.create(
        participation=p, rule="absolute", threshold=0.5, passed=False, reason="low", at=timezone.now()
    )


@pytest.fixture
def cohort(prolific_on, prolific_study):
    """p1, p2 completed (30 min), p3 excluded by the filter (15 min), p4 abandoned, p5 failed attention checks."""
    study, condition = prolific_study
    standin = prolific_on
    ps = {
        "p1": join(standin, condition, "p1", state=State.COMPLETED, slot=0),
        "p2": join(standin, condition, "p2", state=State.COMPLETED, slot=1),
        "p3": join(standin, condition, "p3", state=State.EXCLUDED, minutes=15),
        "p4": join(standin, condition, "p4", state=State.ABANDONED),
        "p5": join(standin, condition, "p5", state=State.EXCLUDED),
    }
    _fail_filter(ps["p3"])
    ParticipationEvent.objects.create(
        participation=ps["p5"],
        from_state="test",
        to_state=State.EXCLUDED,
        reason="attention: 2 checks failed",
        at=timezone.now(),
    )
    return study, standin, ps


def by_participant(report):
    return {row.participant: row for row in report.rows}


def test_the_review_dry_run_stores_nothing_and_calls_nothing(cohort):
    study, standin, _ = cohort
    rows = by_participant(operations.plan(operation="review", study=study))
    assert {k: (r.action, r.state) for k, r in rows.items()} == {
        "p1": ("APPROVE", "to do"),
        "p2": ("APPROVE", "to do"),
        "p3": ("APPROVE", "to do"),
        "p4": ("-", "skip"),
        "p5": ("-", "needs decision"),
    }
    assert rows["p1"].submission == "sub-p1"
    assert standin.requests == [] and not ProlificAction.objects.exists() and not ProlificCall.objects.exists()


def test_review_approves_and_a_rerun_sends_nothing_more(cohort):
    study, standin, _ = cohort
    report = operations.run(operation="review", study=study)
    assert report.counts == {"done": 3, "skip": 1, "needs decision": 1}
    assert {s["participant"]: s["status"] for s in standin.submissions.values()} == {
        "p1": "APPROVED",
        "p2": "APPROVED",
        "p3": "APPROVED",
        "p4": "AWAITING REVIEW",
        "p5": "AWAITING REVIEW",
    }
    # The three approvals go in one call to the bulk endpoint, which names every submission.
    (call,) = ProlificCall.objects.filter(ok=True, status_code=200)
    assert call.path == "submissions/bulk-approve/" and call.action is None
    assert sorted(call.request["submission_ids"]) == ["sub-p1", "sub-p2", "sub-p3"]
    assert set(ProlificAction.objects.filter(status="done").values_list("prolific_id", flat=True)) == {
        "sub-p1",
        "sub-p2",
        "sub-p3",
    }
    sent = len(standin.requests)
    again = operations.run(operation="review", study=study)
    assert again.counts == {"done": 3, "skip": 1, "needs decision": 1}
    assert len(standin.requests) == sent


def test_a_failing_participant_is_reported_and_the_rest_go_on(cohort):
    study, standin, _ = cohort
    standin.fail_participants["p2"] = 500
    rows = by_participant(operations.run(operation="review", study=study))
    assert (rows["p1"].state, rows["p2"].state, rows["p3"].state) == ("done", "failed", "done")
    assert "(500)" in rows["p2"].note and "Something went wrong for p2" in rows["p2"].note
    action = ProlificAction.objects.get(participation__worker__external_id="p2")
    assert action.status == "failed" and "500" in action.error
    del standin.fail_participants["p2"]
    retry = by_participant(operations.run(operation="review", study=study))
    assert retry["p2"].state == "done" and standin.submissions["sub-p2"]["status"] == "APPROVED"


def test_screen_out_completes_with_the_code_when_the_outcome_says_so(cohort):
    study, standin, ps = cohort

    def decide(p):
        return (
            Decision(SCREEN_OUT, "screened out", completion_code="SCR33N")
            if p.pk == ps["p3"].pk
            else Decision("NONE", "-")
        )

    operations.run(operation="review", study=study, decide_fn=decide)
    assert (
        "POST",
        "/api/v1/submissions/sub-p3/transition/",
        {"action": "COMPLETE", "completion_code": "SCR33N"},
    ) in standin.requests
    assert standin.submissions["sub-p3"]["status"] == "SCREENED OUT"


def test_the_bonus_dry_run_shows_the_pay_tables_top_up(cohort):
    study, standin, _ = cohort
    rows = by_participant(operations.plan(operation="bonus", study=study))
    # 30 min at 12.00/h = 6.00 owed, 3.00 posted: 3.00 bonus; 15 min = 3.00 owed: nothing.
    assert (rows["p1"].state, rows["p1"].amount, rows["p1"].currency) == ("to do", Decimal("3.00"), "GBP")
    assert rows["p3"].state == "skip" and "no bonus owed" in rows["p3"].note
    assert rows["p4"].state == "skip" and rows["p5"].state == "skip"
    assert standin.requests == [("GET", "/api/v1/studies/PS1/", {})]  # only the posted reward is read: nothing sent


def test_bonuses_are_paid_once_even_when_run_twice(cohort):
    study, standin, _ = cohort
    report = operations.run(operation="bonus", study=study)
    assert report.counts["done"] == 2
    assert standin.paid_to("p1") == Decimal("3.00") and standin.paid_to("p2") == Decimal("3.00")
    assert standin.writes()[0] == (
        "POST",
        "/api/v1/submissions/bonus-payments/",
        {"study_id": "PS1", "csv_bonuses": "p1,3.00\n"},
    )
    operations.run(operation="bonus", study=study)
    assert standin.paid_to("p1") == Decimal("3.00") and standin.paid_to("p2") == Decimal("3.00")
    action = ProlificAction.objects.get(participation__worker__external_id="p1", kind="bonus")
    assert (action.status, action.amount, action.currency) == ("done", Decimal("3.00"), "GBP")
    assert action.prolific_id in standin.bulks


def test_a_timed_out_payment_is_uncertain_and_never_paid_again_by_a_run(cohort, settings):
    study, standin, _ = cohort
    standin.slow_paths, standin.slow_seconds = ["/pay/"], 1.5
    rows = by_participant(operations.run(operation="bonus", study=study))
    assert rows["p1"].state == "uncertain" and "Check bulk bonus" in rows["p1"].note
    standin.slow_paths = []
    standin.settle()  # the stand-in finishes the slow answers: each bulk was paid once
    again = by_participant(operations.run(operation="bonus", study=study))
    assert again["p1"].state == "uncertain"
    assert standin.paid_to("p1") == Decimal("3.00")
    assert ProlificAction.objects.get(participation__worker__external_id="p1", kind="bonus").status == "uncertain"


def test_a_refused_set_up_stores_no_bonus_and_is_retried(cohort):
    study, standin, _ = cohort
    standin.fail_participants["p1"] = 400
    rows = by_participant(operations.run(operation="bonus", study=study))
    assert rows["p1"].state == "failed" and rows["p2"].state == "done"
    assert ProlificAction.objects.get(participation__worker__external_id="p1", kind="bonus").prolific_id == ""
    del standin.fail_participants["p1"]
    operations.run(operation="bonus", study=study)
    assert standin.paid_to("p1") == Decimal("3.00")


def test_a_refused_payment_pays_the_same_bulk_on_the_next_run(cohort):
    study, standin, _ = cohort
    original = standin.pay
    standin.pay = lambda bulk_id: (400, {"error": {"detail": "Insufficient balance"}})
    rows = by_participant(operations.run(operation="bonus", study=study))
    assert rows["p1"].state == "failed" and "Insufficient balance" in rows["p1"].note
    bulks = set(standin.bulks)
    standin.pay = original
    operations.run(operation="bonus", study=study)
    assert set(standin.bulks) == bulks  # no new set-up
    assert standin.paid_to("p1") == Decimal("3.00")


def test_rate_limiting_is_waited_out(cohort, monkeypatch):
    study, standin, _ = cohort
    standin.rate_limit_next, standin.retry_after = 2, "0"
    report = operations.run(operation="review", study=study)
    assert report.counts["done"] == 3
    assert ProlificCall.objects.filter(status_code=429).count() == 2


def test_the_group_takes_everyone_of_the_task_and_is_stored(cohort):
    study, standin, _ = cohort
    other = StudyFactory(task=study.task, currency="GBP")
    join(standin, ConditionFactory(study=other, shots=0), "q1", state=State.COMPLETED, prolific_study="PS2")
    plan = operations.plan(operation="group", study=study)
    assert {r.participant for r in plan.rows} == {"p1", "p2", "p3", "p4", "p5", "q1"}
    assert standin.requests == [] and not ProlificGroup.objects.exists()
    report = operations.run(operation="group", study=study)
    assert report.counts == {"done": 6}
    group = ProlificGroup.objects.get(task=study.task)
    assert standin.groups[group.group_id]["members"] == {"p1", "p2", "p3", "p4", "p5", "q1"}
    sent = len(standin.requests)
    operations.run(operation="group", study=other)
    assert len(standin.requests) == sent


def test_one_bad_id_in_the_group_fails_alone(cohort):
    study, standin, _ = cohort
    standin.fail_participants["p4"] = 400
    rows = by_participant(operations.run(operation="group", study=study))
    assert rows["p4"].state == "failed"
    assert all(rows[p].state == "done" for p in ("p1", "p2", "p3", "p5"))


def test_without_a_token_the_feature_is_off(settings, prolific_study):
    settings.PROLIFIC_API_TOKEN = ""
    study, _ = prolific_study
    assert operations.OFF_MESSAGE in operations.plan(operation="review", study=study).notes
    with pytest.raises(operations.ProlificDisabled):
        operations.run(operation="review", study=study)


def test_an_unreachable_prolific_stops_the_run_and_stores_no_success(cohort):
    study, standin, _ = cohort
    standin.stop()
    report = operations.run(operation="review", study=study)
    assert report.counts == {"failed": 1, "not tried": 2, "skip": 1, "needs decision": 1}
    assert not ProlificAction.objects.filter(status="done").exists()


def test_an_uncertain_bonus_resolved_as_unpaid_is_paid_once_by_the_next_run(cohort, admin_client):
    study, standin, _ = cohort
    standin.slow_paths, standin.slow_seconds = ["/pay/"], 1.5
    operations.run(operation="bonus", study=study)
    standin.settle()  # the payment the client gave up on has gone through on the platform's side
    standin.slow_paths = []
    for bulk in standin.bulks.values():
        bulk["paid"] = 0  # as if the slow payments had not gone through
    action = ProlificAction.objects.get(participation__worker__external_id="p1", kind="bonus")
    from django.urls import reverse

    admin_client.post(
        reverse("admin:annotation_prolificaction_changelist"),
        {"action": "mark_not_paid", "_selected_action": [action.pk]},
    )
    action.refresh_from_db()
    assert action.status == "set_up" and "resolved by hand" in action.error
    rows = by_participant(operations.run(operation="bonus", study=study))
    assert rows["p1"].state == "done" and rows["p2"].state == "uncertain"
    assert standin.paid_to("p1") == Decimal("3.00") and standin.paid_to("p2") == Decimal("0")
