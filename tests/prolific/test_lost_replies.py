"""A connection dropped while Prolific's answer is awaited or read: recorded, the run goes on, nothing paid twice.

The stand-in does what was asked, then loses the answer (``drop_reply``): it closes the connection before any
byte (``RemoteDisconnected``), resets it (``ConnectionResetError``) or closes it half-way through the body
(``IncompleteRead``).
"""

from decimal import Decimal

import pytest

from annotation.models import Participation, ProlificAction, ProlificCall
from annotation.services.prolific import operations
from annotation.services.prolific.client import ProlificClient, ProlificReplyLost
from annotation.services.prolific.standin import TOKEN
from tests.prolific.conftest import join

State = Participation.State
KINDS = {"close": "RemoteDisconnected", "reset": "ConnectionResetError", "truncate": "IncompleteRead"}


@pytest.fixture
def two_completed(prolific_on, prolific_study):
    study, condition = prolific_study
    join(prolific_on, condition, "p1", state=State.COMPLETED, slot=0)
    join(prolific_on, condition, "p2", state=State.COMPLETED, slot=1)
    return study, prolific_on


@pytest.mark.parametrize("how", sorted(KINDS))
def test_the_client_raises_reply_lost_for_each_kind_and_the_request_took_effect(standin, how):
    standin.add_submission(submission_id="s1", participant="p1", study_id="PS1")
    standin.drop_reply["transition"] = how
    seen = []
    client = ProlificClient(token=TOKEN, base_url=standin.url, timeout=2, on_call=seen.append)
    with pytest.raises(ProlificReplyLost) as lost:
        client.approve("s1")
    assert not lost.value.definite and KINDS[how] in str(lost.value)
    assert standin.submissions["s1"]["status"] == "APPROVED"  # done on Prolific; only the answer was lost
    assert len(seen) == 1 and not seen[0].ok and KINDS[how] in seen[0].error
    assert client.approve("s1") == {**standin.submissions["s1"]}  # the connection after it is a fresh one


@pytest.mark.parametrize("how", sorted(KINDS))
def test_a_bonus_whose_pay_answer_is_lost_is_uncertain_never_paid_twice_and_the_run_goes_on(two_completed, how):
    study, standin = two_completed
    standin.drop_reply["/pay/"] = how  # the first payment's answer only
    rows = {r.participant: r for r in operations.run(operation="bonus", study=study).rows}
    assert (rows["p1"].state, rows["p2"].state) == ("uncertain", "done")
    assert "Check bulk bonus" in rows["p1"].note
    assert standin.paid_to("p1") == Decimal("3.00") == standin.paid_to("p2")
    lost = ProlificCall.objects.get(path__endswith="/pay/", ok=False)
    assert KINDS[how] in lost.error and lost.action.participation.worker.external_id == "p1"
    again = {r.participant: r for r in operations.run(operation="bonus", study=study).rows}
    assert again["p1"].state == "uncertain" and standin.paid_to("p1") == Decimal("3.00")
    assert ProlificAction.objects.get(participation__worker__external_id="p1", kind="bonus").status == "uncertain"


def test_a_lost_bulk_approval_answer_falls_back_to_one_by_one_and_all_are_approved(two_completed):
    study, standin = two_completed
    standin.drop_reply["bulk-approve"] = "truncate"
    report = operations.run(operation="review", study=study)
    assert report.counts == {"done": 2}
    assert any("bulk approval failed" in note for note in report.notes)
    assert {s["status"] for s in standin.submissions.values()} == {"APPROVED"}
    assert [p for _, p, _ in standin.writes()].count("/api/v1/submissions/bulk-approve/") == 1


def test_bulk_approval_refused_for_one_unknown_submission_approves_the_others_one_by_one(two_completed):
    study, standin = two_completed
    del standin.submissions["sub-p2"]
    rows = {r.participant: r for r in operations.run(operation="review", study=study).rows}
    assert (rows["p1"].state, rows["p2"].state) == ("done", "failed")
    assert standin.submissions["sub-p1"]["status"] == "APPROVED" and "(404)" in rows["p2"].note
