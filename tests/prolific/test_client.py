"""The client against the stand-in server: answers, errors, rate limiting, time-outs."""

from decimal import Decimal

import pytest

from annotation.services.prolific.client import (
    ProlificClient,
    ProlificConnectionError,
    ProlificRateLimited,
    ProlificRequestError,
    ProlificServerError,
    ProlificTimeout,
)
from annotation.services.prolific.standin import TOKEN


def client(standin, **kw):
    calls = []
    c = ProlificClient(token=TOKEN, base_url=standin.url, timeout=1.0, on_call=calls.append, **kw)
    return c, calls


def test_it_approves_with_the_token_header(standin):
    standin.add_submission(submission_id="s1", participant="p1", study_id="S")
    c, calls = client(standin)
    answer = c.approve("s1")
    assert answer["status"] == "APPROVED"
    assert standin.requests == [("POST", "/api/v1/submissions/s1/transition/", {"action": "APPROVE"})]
    assert [(r.status, r.ok) for r in calls] == [(200, True)]


def test_a_wrong_token_says_to_check_the_token(standin):
    standin.add_submission(submission_id="s1", participant="p1", study_id="S")
    c = ProlificClient(token="nope", base_url=standin.url, timeout=1.0)
    with pytest.raises(ProlificRequestError, match="PROLIFIC_API_TOKEN"):
        c.approve("s1")


def test_a_validation_error_carries_prolifics_reason(standin):
    c, calls = client(standin)
    with pytest.raises(ProlificRequestError, match=r"\(400\).*did not take part") as info:
        c.set_up_bonus(study_id="S", bonuses=[("stranger", Decimal("1.50"))])
    assert info.value.definite and info.value.status == 400
    assert calls[0].ok is False and calls[0].status == 400 and "did not take part" in calls[0].response


def test_a_short_rejection_message_is_refused_before_any_call(standin):
    c, calls = client(standin)
    with pytest.raises(ProlificRequestError, match="100 characters"):
        c.reject("s1", message="too short", category="LOW_EFFORT")
    assert calls == [] and standin.requests == []


def test_a_server_error_is_not_definite(standin):
    standin.add_submission(submission_id="s1", participant="p1", study_id="S")
    standin.fail_participants["p1"] = 500
    c, _ = client(standin)
    with pytest.raises(ProlificServerError) as info:
        c.approve("s1")
    assert info.value.definite is False


def test_a_429_is_retried_after_retry_after(standin):
    standin.add_submission(submission_id="s1", participant="p1", study_id="S")
    standin.rate_limit_next, standin.retry_after = 2, "3"
    waits = []
    c, calls = client(standin, sleep=waits.append)
    assert c.approve("s1")["status"] == "APPROVED"
    assert waits == [3.0, 3.0]
    assert [r.status for r in calls] == [429, 429, 200]


def test_rate_limiting_gives_up_after_the_retries(standin):
    standin.rate_limit_next = 10
    c, _ = client(standin, sleep=lambda s: None, max_retries=2)
    with pytest.raises(ProlificRateLimited, match="429"):
        c.approve("s1")
    assert len(standin.requests) == 3


def test_a_retry_after_beyond_the_bound_is_not_waited_for(standin):
    standin.rate_limit_next, standin.retry_after = 1, "3600"
    waits = []
    c, _ = client(standin, sleep=waits.append, max_wait=60)
    with pytest.raises(ProlificRateLimited):
        c.approve("s1")
    assert waits == []


def test_a_slow_answer_is_a_timeout(standin):
    standin.add_submission(submission_id="s1", participant="p1", study_id="S")
    standin.slow_paths, standin.slow_seconds = ["transition"], 1.5
    c, calls = client(standin)
    c.timeout = 0.3
    with pytest.raises(ProlificTimeout, match="did not answer") as info:
        c.approve("s1")
    assert info.value.definite is False
    assert calls[0].status is None and calls[0].ok is False


def test_an_unreachable_server_is_a_connection_error(standin):
    url = standin.url
    standin.stop()
    c = ProlificClient(token=TOKEN, base_url=url, timeout=1.0)
    with pytest.raises(ProlificConnectionError, match="Could not reach Prolific"):
        c.approve("s1")
