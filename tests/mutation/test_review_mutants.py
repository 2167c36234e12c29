"""The review run (annotation/services/prolific/review.py) pinned where mutation testing found it loose
(scripts/mutation.sh review): the rows and notes a person reads before approving, the bulk approval's edges,
progress, a row another run finished meanwhile, rejections, and what is recorded of each call and failure.
Expectations worked out by hand from the decisions given; Prolific is its stand-in."""

from annotation.models import Participation, ProlificAction, ProlificCall, Worker
from annotation.services.prolific import operations, review
from annotation.services.prolific.outcomes import APPROVE, NEEDS_DECISION, NONE, REJECT, SCREEN_OUT, Decision
from annotation.services.prolific.runs import CallLog, Report, Row, make_client
from tests.prolific.conftest import join

State = Participation.State
TRANSITION = "/api/v1/submissions/{}/transition/"
BULK = "/api/v1/submissions/bulk-approve/"
REASON = "a reason of the test's own"
MESSAGE = "Your submission could not be accepted: " + "the answers were not given to the items shown. " * 2


def _by_pid(decisions):
    """A decide_fn from {participant: Decision}."""
    return lambda p: decisions[p.worker.external_id]


def _cohort(standin, condition, *pids):
    return {pid: join(standin, condition, pid, state=State.COMPLETED, slot=i) for i, pid in enumerate(pids)}


def _report(study, decide_fn):
    """The plan of a review, and its decisions, as operations.run hands them to run_review."""
    planned = review.review_rows(study, decide_fn)
    report = Report(operation="review", study=study.slug, dry_run=False, rows=[row for row, _ in planned])
    return report, {row.participation_id: d for row, d in planned}


def _done_elsewhere(p, action=APPROVE):
    ProlificAction.objects.create(participation=p, kind=ProlificAction.Kind.REVIEW, action=action, status="done")


# -- the plan: each row whole -------------------------------------------------------------------------------


def test_each_rows_action_state_and_note_as_planned(prolific_on, prolific_study):
    study, condition = prolific_study
    ps = _cohort(prolific_on, condition, "p1", "p2", "p3", "p4")
    ps["p4"].platform_data = {"STUDY_ID": "PS1"}  # no SESSION_ID recorded
    ps["p4"].save(update_fields=["platform_data"])
    decisions = {
        "p1": Decision(APPROVE, "approve: " + REASON),
        "p2": Decision(NONE, "none: " + REASON),
        "p3": Decision(NEEDS_DECISION, "decide: " + REASON),
        "p4": Decision(APPROVE, "approve: " + REASON),
    }
    rows = review.review_rows(study, _by_pid(decisions))

    def row(pid, action, state, note, submission):
        p = ps[pid]
        return Row(p.pk, pid, study.slug, action, state, note, submission, "PS1")

    assert rows == [
        (row("p1", "APPROVE", "to do", "approve: " + REASON, "sub-p1"), decisions["p1"]),
        (row("p2", "-", "skip", "none: " + REASON, "sub-p2"), decisions["p2"]),
        (row("p3", "-", "needs decision", "decide: " + REASON, "sub-p3"), decisions["p3"]),
        (
            row("p4", "APPROVE", "skip", "no Prolific submission id (SESSION_ID) was recorded at entry", ""),
            decisions["p4"],
        ),
    ]


def test_a_row_tried_before_says_so_and_a_done_one_keeps_its_reason(prolific_on, prolific_study):
    study, condition = prolific_study
    ps = _cohort(prolific_on, condition, "p1", "p2", "p3")
    ProlificAction.objects.create(
        participation=ps["p1"], kind=ProlificAction.Kind.REVIEW, action=APPROVE, status="failed", error="boom"
    )
    _done_elsewhere(ps["p2"])
    ProlificAction.objects.create(  # another kind's record is not this one's
        participation=ps["p3"], kind=ProlificAction.Kind.BONUS, action="BONUS", status="done"
    )
    rows = {row.participant: row for row, _ in review.review_rows(study, lambda p: Decision(APPROVE, REASON))}
    assert (rows["p1"].state, rows["p1"].note) == ("to do", "again (before: boom)")
    assert (rows["p2"].state, rows["p2"].note) == ("done", REASON)
    assert (rows["p3"].state, rows["p3"].note) == ("to do", REASON)


# -- the bulk approval --------------------------------------------------------------------------------------


def test_one_approval_goes_alone_to_the_transition_endpoint(prolific_on, prolific_study):
    study, condition = prolific_study
    _cohort(prolific_on, condition, "p1")
    report = operations.run(operation="review", study=study, decide_fn=lambda p: Decision(APPROVE, REASON))
    assert prolific_on.writes() == [("POST", TRANSITION.format("sub-p1"), {"action": "APPROVE"})]
    assert [(r.state, r.note) for r in report.rows] == [("done", REASON)]


def test_approved_in_bulk_is_each_rows_note_and_their_claims_are_done(prolific_on, prolific_study):
    study, condition = prolific_study
    _cohort(prolific_on, condition, "p1", "p2")
    report = operations.run(operation="review", study=study, decide_fn=lambda p: Decision(APPROVE, REASON))
    assert [(r.participant, r.state, r.note) for r in report.rows] == [
        ("p1", "done", "approved in bulk"),
        ("p2", "done", "approved in bulk"),
    ]
    assert prolific_on.writes() == [("POST", BULK, {"submission_ids": ["sub-p1", "sub-p2"]})]
    actions = ProlificAction.objects.order_by("prolific_id")
    assert [(a.prolific_id, a.kind, a.action, a.status, a.error) for a in actions] == [
        ("sub-p1", "review", "APPROVE", "done", ""),
        ("sub-p2", "review", "APPROVE", "done", ""),
    ]


def test_a_row_done_by_another_run_meanwhile_is_left_out_of_the_bulk(prolific_on, prolific_study):
    study, condition = prolific_study
    ps = _cohort(prolific_on, condition, "p1", "p2", "p3")
    report, decisions = _report(study, lambda p: Decision(APPROVE, REASON))
    _done_elsewhere(ps["p2"])  # after the plan: the run finds it done when it claims it
    review.run_review(make_client(), CallLog(), report, decisions)
    assert [(r.participant, r.state, r.note) for r in report.rows] == [
        ("p1", "done", "approved in bulk"),
        ("p2", "done", "done by another run"),
        ("p3", "done", "approved in bulk"),
    ]
    assert prolific_on.writes() == [("POST", BULK, {"submission_ids": ["sub-p1", "sub-p3"]})]


def test_a_refused_bulk_is_noted_whole_and_approved_one_by_one(prolific_on, prolific_study):
    study, condition = prolific_study
    _cohort(prolific_on, condition, "p1", "p2")
    prolific_on.fail_participants["p2"] = 400
    report = operations.run(operation="review", study=study, decide_fn=lambda p: Decision(APPROVE, REASON))
    (note,) = [n for n in report.notes if n.startswith("bulk approval failed (")]
    assert note.endswith("Something went wrong for p2.): approved one by one")
    rows = {r.participant: r for r in report.rows}
    assert (rows["p1"].state, rows["p1"].note) == ("done", REASON)
    assert rows["p2"].state == "failed"


# -- progress -----------------------------------------------------------------------------------------------


def test_progress_counts_the_bulk_then_each_row_after_it(prolific_on, prolific_study):
    study, condition = prolific_study
    _cohort(prolific_on, condition, "p1", "p2", "p3", "p4")
    decisions = {pid: Decision(APPROVE, REASON) for pid in ("p1", "p2", "p3")}
    decisions["p4"] = Decision(SCREEN_OUT, REASON, completion_code="SCR33N")
    seen = []
    operations.run(operation="review", study=study, decide_fn=_by_pid(decisions), progress=lambda *a: seen.append(a))
    assert seen == [(3, 4), (4, 4)]


def test_progress_without_a_bulk_counts_each_row(prolific_on, prolific_study):
    study, condition = prolific_study
    _cohort(prolific_on, condition, "p1", "p2")
    decisions = {"p1": Decision(APPROVE, REASON), "p2": Decision(SCREEN_OUT, REASON, completion_code="SCR33N")}
    seen = []
    operations.run(operation="review", study=study, decide_fn=_by_pid(decisions), progress=lambda *a: seen.append(a))
    assert seen == [(1, 2), (2, 2)]


# -- one by one ---------------------------------------------------------------------------------------------


def test_a_rejection_sends_its_message_and_category(prolific_on, prolific_study):
    study, condition = prolific_study
    _cohort(prolific_on, condition, "p1")
    d = Decision(REJECT, REASON, rejection_category="NO_DATA", message=MESSAGE)
    report = operations.run(operation="review", study=study, decide_fn=lambda p: d)
    body = {"action": "REJECT", "message": MESSAGE, "rejection_category": "NO_DATA"}
    assert prolific_on.writes() == [("POST", TRANSITION.format("sub-p1"), body)]
    assert prolific_on.submissions["sub-p1"]["status"] == "REJECTED"
    assert [(r.action, r.state) for r in report.rows] == [("REJECT", "done")]
    action = ProlificAction.objects.get()
    assert (action.action, action.status, action.prolific_id) == ("REJECT", "done", "sub-p1")


def test_a_screen_out_done_by_another_run_meanwhile_is_not_sent(prolific_on, prolific_study):
    study, condition = prolific_study
    ps = _cohort(prolific_on, condition, "p1")
    report, decisions = _report(study, lambda p: Decision(SCREEN_OUT, REASON, completion_code="SCR33N"))
    _done_elsewhere(ps["p1"], action=SCREEN_OUT)
    review.run_review(make_client(), CallLog(), report, decisions)
    assert [(r.state, r.note) for r in report.rows] == [("done", "done by another run")]
    assert prolific_on.writes() == []


def test_each_call_is_logged_under_its_action_and_the_log_is_left_clear(prolific_on, prolific_study):
    study, condition = prolific_study
    ps = _cohort(prolific_on, condition, "p1")
    report, decisions = _report(study, lambda p: Decision(APPROVE, REASON))
    client, log = make_client(), CallLog()
    client.on_call = log
    review.run_review(client, log, report, decisions)
    assert log.action is None
    (call,) = ProlificCall.objects.all()
    assert (call.path, call.action.participation_id, call.action.kind) == (
        "submissions/sub-p1/transition/",
        ps["p1"].pk,
        "review",
    )


def test_a_refused_row_records_the_same_error_as_its_note_and_the_next_goes_on(prolific_on, prolific_study):
    study, condition = prolific_study
    _cohort(prolific_on, condition, "p1", "p2")
    prolific_on.fail_participants["p1"] = 400
    d = Decision(SCREEN_OUT, REASON, completion_code="SCR33N")
    report = operations.run(operation="review", study=study, decide_fn=lambda p: d)
    rows = {r.participant: r for r in report.rows}
    failed = ProlificAction.objects.get(participation__worker__external_id="p1")
    assert (rows["p1"].state, failed.status) == ("failed", "failed")
    assert rows["p1"].note == failed.error and failed.error.endswith("Something went wrong for p1.")
    assert rows["p2"].state == "done" and prolific_on.submissions["sub-p2"]["status"] == "SCREENED OUT"


def test_a_thousand_and_one_approvals_go_as_one_bulk_of_a_thousand_and_one_alone(prolific_on, prolific_study):
    # Prolific's limit is 1,000 a bulk call: the 1,001st is the next chunk, alone, so sent one by one.
    study, condition = prolific_study
    pids = [f"p{i:04d}" for i in range(1001)]
    workers = Worker.objects.bulk_create(Worker(platform=Worker.Platform.PROLIFIC, external_id=pid) for pid in pids)
    Participation.objects.bulk_create(
        Participation(
            condition=condition,
            study=study,
            task=study.task,
            worker=w,
            slot_index=i,
            state=State.COMPLETED,
            platform_data={"STUDY_ID": "PS1", "SESSION_ID": f"sub-{w.external_id}"},
        )
        for i, w in enumerate(workers)
    )
    for pid in pids:
        prolific_on.add_submission(submission_id=f"sub-{pid}", participant=pid, study_id="PS1")
    report = operations.run(operation="review", study=study, decide_fn=lambda p: Decision(APPROVE, REASON))
    assert [(method, path, len(body.get("submission_ids", []))) for method, path, body in prolific_on.writes()] == [
        ("POST", BULK, 1000),
        ("POST", TRANSITION.format("sub-p1000"), 0),
    ]
    assert report.counts == {"done": 1001}
