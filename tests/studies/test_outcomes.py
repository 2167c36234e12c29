"""One code and way back per outcome: defaults, validation, platforms, and which outcome a worker has."""

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Participation, Study
from annotation.services.admission import closing, entry
from annotation.services.state import lifecycle, outcomes
from annotation.services.state.outcomes import Outcome
from tests.entry_link import take_part
from tests.studies.conftest import inhouse

pytestmark = pytest.mark.django_db
State = Participation.State
Kind = Participation.ExclusionKind


def test_every_outcome_gets_a_generated_code_kept_for_the_study_s_life(make_study):
    study = make_study(outcome_codes={"completed": {"code": "MINE"}})
    codes = study.outcome_codes
    assert set(codes) == {o.value for o in Outcome} and codes["completed"] == {"code": "MINE", "url": ""}
    generated = {codes[o]["code"] for o in codes if o != "completed"}
    assert len(generated) == 5 and all(len(c) == 8 for c in generated)
    study.name = "renamed"
    study.save()
    study.refresh_from_db()
    assert study.outcome_codes == codes


@pytest.mark.parametrize(
    ("codes", "message"),
    [
        ([], "JSON object"),
        ({"finished": {"code": "A"}}, "Unknown outcome 'finished'"),
        ({"completed": "ABC"}, "give an object"),
        ({"completed": {"code": "has space"}}, "1 to 64 letters"),
        ({"completed": {"code": "A" * 65}}, "1 to 64 letters"),
        ({"declined": {"code": "A", "url": "http://example.org/x"}}, "https://"),
        ({"declined": {"code": "A", "link": "x"}}, "unknown field"),
    ],
)
def test_malformed_codes_are_refused_and_nothing_is_stored(make_study, codes, message):
    with pytest.raises(ValidationError) as exc:
        make_study(outcome_codes=codes)
    assert message in str(exc.value.message_dict["outcome_codes"])
    assert not Study.objects.exists()


def test_prolific_goes_to_the_standard_page_or_the_outcome_s_url_with_the_code(make_study):
    study = make_study(
        outcome_codes={"completed": {"code": "DONE"}, "declined": {"code": "NOC", "url": "https://x.org/back"}}
    )
    done = outcomes.target_for(study=study, outcome=Outcome.COMPLETED, platform="prolific", platform_data={})
    assert (done.kind, done.url) == ("redirect", "https://app.prolific.com/submissions/complete?cc=DONE")
    no = outcomes.target_for(study=study, outcome=Outcome.DECLINED, platform="prolific", platform_data={})
    assert (no.kind, no.url, no.code) == ("redirect", "https://x.org/back?cc=NOC", "NOC")


def test_mturk_posts_the_hit_with_the_outcome_field(make_study):
    study = make_study(outcome_codes={"screened_out": {"code": "SCR"}})
    data = {"assignmentId": "ASG", "turkSubmitTo": "https://www.mturk.com/"}
    target = outcomes.target_for(study=study, outcome=Outcome.SCREENED_OUT, platform="mturk", platform_data=data)
    assert (target.kind, target.url) == ("form_post", "https://www.mturk.com/mturk/externalSubmit")
    assert target.fields == {"assignmentId": "ASG", "completion_code": "SCR", "outcome": "screened_out"}
    # Without the submit address (or in-house) the worker is shown the code.
    plain = outcomes.target_for(study=study, outcome=Outcome.SCREENED_OUT, platform="mturk", platform_data={})
    assert (plain.kind, plain.code) == ("code", "SCR")
    assert outcomes.target_for(study=study, outcome=Outcome.FULL, platform="inhouse", platform_data={}).kind == "code"


def _joined(study, worker_id):
    return entry.join_study(study=study, params=inhouse(worker_id)).participation


def test_the_outcome_of_each_way_a_participation_ends(make_study):
    study = make_study(shots=[0], workers=5)
    done, screened, attention, closed, declined = (_joined(study, f"w{i}") for i in range(5))
    assert outcomes.outcome_for(done) is None  # still at work
    for p in (done, screened, attention, closed):
        lifecycle.begin(p)
    lifecycle.finish_test(done)
    lifecycle.exclude(screened, reason="failed training filter", kind=Kind.TRAINING_FILTER)
    lifecycle.exclude(attention, reason="attention checks: 2 of 3 failed", kind=Kind.ATTENTION)
    lifecycle.exclude(closed, reason=closing.CLOSED_REASON, kind=Kind.CLOSED)
    lifecycle.transition(declined, to_state=State.DECLINED, reason="declined the consent text")
    got = {p.worker.external_id: outcomes.outcome_for(p) for p in (done, screened, attention, closed, declined)}
    assert got == {
        "w0": Outcome.COMPLETED,
        "w1": Outcome.SCREENED_OUT,
        "w2": Outcome.ATTENTION_FAILED,
        "w3": Outcome.COMPLETED,  # closed out: paid like a finisher
        "w4": Outcome.DECLINED,
    }
    codes = study.outcome_codes
    assert done.completion_code == codes["completed"]["code"]
    assert screened.completion_code == codes["screened_out"]["code"]
    assert attention.completion_code == codes["attention_failed"]["code"]


def test_an_admin_exclusion_tells_its_outcome_by_the_reason(make_study):
    """An admin's exclusion (or one recorded before exclusion_kind existed) has no kind that tells the
    outcome: the event's reason does."""
    study = make_study(shots=[0], workers=3)
    screened, attention, closed = (_joined(study, f"a{i}") for i in range(3))
    for p in (screened, attention, closed):
        lifecycle.begin(p)
    lifecycle.exclude(screened, reason="not a careful worker", kind=Kind.ADMIN)
    lifecycle.exclude(attention, reason="attention checks: 2 of 3 failed", kind=Kind.ADMIN)
    lifecycle.exclude(closed, reason=closing.CLOSED_REASON, kind=Kind.ADMIN)
    got = {p.worker.external_id: outcomes.outcome_for(p) for p in (screened, attention, closed)}
    assert got == {"a0": Outcome.SCREENED_OUT, "a1": Outcome.ATTENTION_FAILED, "a2": Outcome.COMPLETED}


def test_a_full_study_shows_its_full_code_and_a_prolific_worker_the_way_back(client, make_study):
    study = make_study(shots=[0], workers=1, outcome_codes={"full": {"code": "FULL1"}})
    _joined(study, "first")
    assert "FULL1" not in client.get(f"/join/{study.slug}/", {"PROLIFIC_PID": "late"}).content.decode()
    html = take_part(client, study.slug, {"PROLIFIC_PID": "late"}).content.decode()  # full: decided at the claim
    assert "FULL1" in html and "https://app.prolific.com/submissions/complete?cc=FULL1" in html
    assert not Participation.objects.filter(worker__external_id="late").exists()


def test_someone_who_took_part_before_gets_the_already_took_part_code(client, make_study):
    first = make_study(shots=[0], workers=2)
    second = make_study(shots=[0], workers=2, outcome_codes={"already_took_part": {"code": "AGAIN"}})
    _joined(first, "twice")
    response = client.get(f"/join/{second.slug}/", {"worker_id": "twice"})
    assert response.status_code == 403 and "AGAIN" in response.content.decode()
