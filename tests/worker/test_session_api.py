"""The worker's JSON session API: auth by session, the rules of the services, clear errors."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import AnswerSpan, Participation, Response
from annotation.services.session import steps
from annotation.web import worker_cookie
from tests.worker.conftest import login, make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State
API = "/api/session/"


def post(client, path, body=None):
    return client.post(API + path, data=json.dumps(body or {}), content_type="application/json")


def stored(p):
    p.refresh_from_db()
    return (
        p.state,
        list(Response.objects.filter(participation=p).order_by("pk").values()),
        list(AnswerSpan.objects.filter(response__participation=p).values()),
    )


@pytest.fixture
def sst_worker(sst_task, worker):
    p = make_participation(sst_task, state=State.CLAIMED)
    return p, worker(p)


@pytest.fixture
def ner_worker(ner_task, worker):
    p = make_participation(ner_task, state=State.TEST)
    return p, worker(p)


def current_item(client):
    return client.get(API + "current/").json()["item"]


# --- Session, CSRF, routes ------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "current/"),
        ("post", "start/"),
        ("post", "submit/"),
        ("post", "skip/"),
        ("get", "progress/"),
        ("post", "events/"),
        ("get", "items/1/"),
        ("get", "items/1/reveal/"),
    ],
)
def test_every_route_needs_a_worker_session(client, method, path):
    response = getattr(client, method)(API + path, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"] == "no_session"


def test_a_cookie_naming_a_missing_participation_is_refused(client):
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(999999)
    assert client.get(API + "current/").status_code == 403


@pytest.mark.parametrize(
    "tamper",
    [
        lambda value: "999:" + value.split(":", 1)[1],  # another participation, the old signature
        lambda value: value[:-1] + ("A" if value[-1] != "A" else "B"),  # a broken signature
        lambda value: "1",  # no signature at all
    ],
)
def test_a_forged_or_altered_worker_cookie_is_no_session_and_names_nobody(sst_worker, tamper):
    _, client = sst_worker
    value = client.cookies[worker_cookie.COOKIE].value
    client.cookies[worker_cookie.COOKIE] = tamper(value)
    for page in (API + "current/", "/work/"):
        response = client.get(page)
        assert response.status_code == 403
    assert client.get(API + "current/").json()["error"] == "no_session"


def test_an_expired_worker_cookie_is_no_session(sst_worker, settings):
    _, client = sst_worker
    assert client.get(API + "current/").status_code == 200
    settings.SESSION_COOKIE_AGE = -1  # every signature is now older than the cookie's age
    assert client.get(API + "current/").json()["error"] == "no_session"


def test_unsafe_requests_need_the_csrf_token_which_current_hands_out(sst_worker):
    p, _ = sst_worker
    client = login(Client(enforce_csrf_checks=True), p)
    refused = post(client, "start/")
    assert refused.status_code == 403 and refused.json()["error"] == "csrf_failed"
    client.get(API + "current/")
    token = client.cookies["csrftoken"].value
    accepted = client.post(API + "start/", data="{}", content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 200 and accepted.json()["state"] == "test"


def test_current_sets_the_csrf_cookie_once_and_replaces_a_broken_one(sst_worker):
    p, _ = sst_worker
    client = login(Client(enforce_csrf_checks=True), p)
    first = client.get(API + "current/")
    token = first.cookies["csrftoken"].value
    again = client.get(API + "current/")
    assert again.status_code == 200 and "csrftoken" not in again.cookies  # the browser keeps the one it has
    accepted = client.post(API + "start/", data="{}", content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 200
    client.cookies["csrftoken"] = "not-a-token"
    renewed = client.get(API + "current/")
    assert len(renewed.cookies["csrftoken"].value) == len(token)


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_there_is_no_route_that_changes_or_deletes_an_answer(ner_worker, method):
    p, client = ner_worker
    item = current_item(client)
    post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3})
    before = stored(p)
    for path in ("submit/", f"items/{item['item']}/", "skip/"):
        assert getattr(client, method)(API + path, data="{}", content_type="application/json").status_code == 405
    assert stored(p) == before


def test_the_session_api_is_in_the_openapi_schema(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    for path in ("current", "start", "submit", "skip", "progress", "events", "items/{item_id}/reveal"):
        assert f"/api/session/{path}/" in schema


def test_responses_are_never_cached(ner_worker):
    _, client = ner_worker
    response = client.get(API + "current/")
    assert response["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"
    assert response["Expires"]  # already stale


def test_the_session_api_answers_json_whatever_the_accept_header(ner_worker):
    _, client = ner_worker
    for accept in ("text/html", "application/xml", "*/*", "nonsense"):
        response = client.get(API + "current/", HTTP_ACCEPT=accept)
        assert response.status_code == 200 and response["Content-Type"] == "application/json"
        assert response.json()["state"] == "test"


def test_a_form_encoded_submission_is_refused_as_unsupported_and_stores_nothing(ner_worker):
    p, client = ner_worker
    item = current_item(client)
    before = stored(p)
    response = client.post(API + "submit/", data={"item": item["item"], "no_answer": "true", "confidence": 3})
    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"
    assert stored(p) == before


# --- The flow ----------------------------------------------------------------------------


def test_start_moves_a_claimed_zero_shot_worker_to_the_test_step_with_the_first_item(sst_worker):
    p, client = sst_worker
    before = client.get(API + "current/").json()
    assert before["state"] == "claimed" and before["item"] is None
    body = post(client, "start/").json()
    assert body["state"] == "test"
    assert body["progress"]["text"] == "Item 1 of 4"
    assert body["item"]["answer_kind"] == "label" and body["item"]["skip_allowed"] is True
    assert [lab["name"] for lab in body["task"]["labels"]] == ["positive", "negative"]
    assert body["task"]["labels"][0]["definition"] == "The positive label." and body["task"]["labels"][0]["key"] == "1"
    assert post(client, "start/").status_code == 200  # a second start changes nothing


def test_the_current_item_records_when_it_was_first_shown(ner_worker):
    p, client = ner_worker
    item = current_item(client)
    shown = Response.objects.get(pk=item["item"]).shown_at
    assert shown is not None
    current_item(client)
    assert Response.objects.get(pk=item["item"]).shown_at == shown


def test_a_sentence_pair_is_sent_as_two_sentences(db, worker):
    from tasks_app.models import Task

    task = make_task_with_items(
        slug="pairs",
        kind=Task.Kind.CLASSIFICATION,
        labels=("entailment", "neutral", "contradiction"),
        test=[(["A man sleeps.", "A person rests."], ["entailment"])],
        question="entailment, neutral or contradiction?",
    )
    client = worker(make_participation(task, state=State.TEST))
    item = current_item(client)
    assert item["context_kind"] == "pair" and item["context"] == ["A man sleeps.", "A person rests."]


def test_a_browser_span_in_utf16_units_is_stored_in_python_offsets(db, worker):
    task = make_task_with_items(slug="emo", test=[("I 😀 met 👨‍👩‍👧 Ada Lovelace .", ["Ada Lovelace"])])
    p = make_participation(task, state=State.TEST)
    client = worker(p)
    item = current_item(client)
    ctx = item["context"]
    js = len(ctx[: ctx.index("Ada")].encode("utf-16-le")) // 2
    body = post(
        client,
        "submit/",
        {
            "item": item["item"],
            "confidence": 4,
            "offset_unit": "utf16",
            "spans": [{"start": js, "end": js + 12, "text": "Ada Lovelace"}],
        },
    ).json()
    span = body["answer"]["spans"][0]
    assert (span["start"], span["end"], span["utf16_start"]) == (ctx.index("Ada"), ctx.index("Ada") + 12, js)
    assert AnswerSpan.objects.get().start == ctx.index("Ada")


def test_a_test_submit_answers_with_the_stored_answer_only(ner_worker):
    _, client = ner_worker
    item = current_item(client)
    body = post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3}).json()
    assert set(body) == {"answer", "step_finished", "state", "next"}
    assert set(body["answer"]) == {"item", "phase", "status", "label", "answer", "spans", "confidence", "submitted_at"}
    assert body["answer"]["status"] == "no_answer"
    assert set(body["next"]) == {"progress", "item"}  # the next item to show: no gold, no score, no reveal


def test_a_test_submit_carries_the_next_item_marked_shown_so_the_page_needs_no_second_request(ner_worker):
    _, client = ner_worker
    item = current_item(client)
    body = post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3}).json()
    following = body["next"]["item"]
    assert following["position"] == item["position"] + 1 and not following["locked"]
    assert body["next"]["progress"]["done"] == 1
    assert body["next"]["progress"]["text"].startswith("Item 2 of ")
    assert Response.objects.get(pk=following["item"]).shown_at is not None
    # What GET current/ would have said, so scripted clients may use either.
    session = client.get("/api/session/current/").json()
    assert session["item"] == following and session["progress"] == body["next"]["progress"]


def test_the_last_test_submit_carries_no_next_item(ner_worker):
    p, client = ner_worker
    body = {}
    while True:
        item = current_item(client)
        if item is None:
            break
        body = post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3}).json()
        if body["step_finished"]:
            break
        assert body["next"]["item"]["item"] != item["item"]
    assert body["step_finished"] and "next" not in body and body["state"] == "completed"


def test_a_training_submit_carries_the_reveal_and_no_next_item(sst_task, worker):
    p = make_participation(sst_task, shots=10, state=State.TRAINING)
    client = worker(p)
    item = current_item(client)
    body = post(client, "submit/", {"item": item["item"], "label": "positive", "confidence": 3}).json()
    assert "reveal" in body and "next" not in body


def test_skip_records_a_skip_and_moves_on(ner_worker):
    p, client = ner_worker
    item = current_item(client)
    assert post(client, "skip/", {"item": item["item"]}).status_code == 200
    assert Response.objects.get(pk=item["item"]).status == "skipped"
    assert current_item(client)["position"] == 1


def test_progress_reports_both_steps(sst_task, worker):
    p = make_participation(sst_task, shots=10, state=State.TRAINING)
    client = worker(p)
    item = current_item(client)
    post(client, "submit/", {"item": item["item"], "label": "positive", "confidence": 3})
    body = client.get(API + "progress/").json()
    assert body["state"] == "training"
    assert body["training"]["text"] == "Training item 2 of 10" and body["test"] is None


# --- Errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload, status, code",
    [
        ({"spans": [{"start": 0, "end": 999, "text": "x"}]}, 400, "offset_out_of_range"),
        ({"spans": [{"start": 4, "end": 4, "text": ""}]}, 400, "empty_span"),
        ({"spans": [{"start": 0, "end": 3, "text": "Ad"}]}, 400, "text_mismatch"),
        ({"label": "PER"}, 400, "label_not_allowed"),
        ({"spans": [{"start": 0, "end": 3, "text": "Ada"}], "confidence": 9}, 400, "confidence_out_of_range"),
        ({"spans": [{"start": 0, "end": 3, "text": "Ada"}], "confidence": None}, 400, "confidence_required"),
        ({"item": "first", "no_answer": True}, 400, "invalid_item"),
    ],
)
def test_invalid_submissions_answer_a_clear_json_error_and_store_nothing(ner_worker, payload, status, code):
    p, client = ner_worker
    item = current_item(client)
    before = stored(p)
    response = post(client, "submit/", {"item": item["item"], "confidence": 3, **payload})
    assert response.status_code == status
    body = response.json()
    assert body["error"] == code and body["detail"]
    assert stored(p) == before


def test_malformed_json_is_a_clear_error(ner_worker):
    p, client = ner_worker
    current_item(client)
    before = stored(p)
    response = client.post(API + "submit/", data="{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "parse_error"
    response = client.post(API + "submit/", data="[1, 2]", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "invalid_payload"
    assert stored(p) == before


def test_a_classification_item_refuses_spans_and_unknown_labels(sst_task, worker):
    p = make_participation(sst_task, state=State.TEST)
    client = worker(p)
    item = current_item(client)
    for payload, code in (
        ({"label": "meh"}, "unknown_label"),
        ({"label": "positive", "spans": [{"start": 0, "end": 8, "text": "Sentence"}]}, "spans_not_allowed"),
    ):
        response = post(client, "submit/", {"item": item["item"], "confidence": 3, **payload})
        assert (response.status_code, response.json()["error"]) == (400, code)
    assert Response.objects.filter(participation=p).exclude(status="pending").count() == 0


def test_another_workers_item_is_forbidden(ner_task, ner_worker):
    p, client = ner_worker
    other = make_participation(ner_task, state=State.TEST)
    theirs = steps.current_item(participation=other)
    for response in (
        post(client, "submit/", {"item": theirs.pk, "no_answer": True, "confidence": 3}),
        post(client, "skip/", {"item": theirs.pk}),
        client.get(API + f"items/{theirs.pk}/"),
        post(client, "events/", {"item": theirs.pk, "type": "blur"}),
    ):
        assert response.status_code == 403 and response.json()["error"] == "not_your_item"
    theirs.refresh_from_db()
    assert theirs.status == "pending" and theirs.blur_count == 0


def test_an_item_ahead_of_the_current_one_is_refused(ner_worker):
    p, client = ner_worker
    current_item(client)
    later = Response.objects.get(participation=p, position=2)
    response = post(client, "submit/", {"item": later.pk, "no_answer": True, "confidence": 3})
    assert (response.status_code, response.json()["error"]) == (409, "not_current_item")
    assert client.get(API + f"items/{later.pk}/").status_code == 409


def test_a_repeated_submission_is_409_with_the_stored_answer(ner_worker):
    p, client = ner_worker
    item = current_item(client)
    ctx = item["context"]
    first = {"item": item["item"], "confidence": 2, "spans": [{"start": 0, "end": 12, "text": ctx[:12]}]}
    assert post(client, "submit/", first).status_code == 200
    before = stored(p)
    again = post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 5})
    assert again.status_code == 409
    body = again.json()
    assert body["error"] == "already_locked"
    assert body["answer"]["answer"] == ["Ada Lovelace"] and body["answer"]["confidence"] == 2
    assert post(client, "skip/", {"item": item["item"]}).status_code == 409
    assert stored(p) == before


def test_a_locked_item_can_be_read_back_with_the_workers_own_answer(ner_worker):
    _, client = ner_worker
    item = current_item(client)
    post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3})
    body = client.get(API + f"items/{item['item']}/").json()
    assert body["item"]["locked"] is True and body["item"]["your_answer"]["status"] == "no_answer"


# --- Reveal ------------------------------------------------------------------------------------


@pytest.fixture
def ner_trainee(ner_task, worker):
    p = make_participation(ner_task, shots=10, state=State.TRAINING)
    return p, worker(p)


def test_the_training_submit_response_carries_the_reveal(ner_trainee):
    p, client = ner_trainee
    item = current_item(client)
    assert item["phase"] == "training" and item["skip_allowed"] is False
    ctx = item["context"]
    body = post(
        client, "submit/", {"item": item["item"], "confidence": 4, "spans": [{"start": 0, "end": 5, "text": ctx[:5]}]}
    ).json()
    reveal = body["reveal"]
    assert reveal["gold"]["answers"] == ["Grace Hopper"]
    assert reveal["gold"]["spans"][0] == {
        "start": 0,
        "end": 12,
        "text": "Grace Hopper",
        "utf16_start": 0,
        "utf16_end": 12,
    }
    assert reveal["verdict"] == "incorrect" and reveal["score"] == 0.0
    assert reveal["matches"] == [{"text": "Grace", "in_gold": False}]
    assert Response.objects.get(pk=item["item"]).revealed_at is not None


def test_reveal_is_409_before_the_lock_and_200_after(ner_trainee):
    p, client = ner_trainee
    item = current_item(client)
    early = client.get(API + f"items/{item['item']}/reveal/")
    assert early.status_code == 409 and early.json()["error"] == "not_locked"
    assert "Grace Hopper" not in early.content.decode().replace(item["context"], "")
    post(client, "submit/", {"item": item["item"], "confidence": 4, "no_answer": True})
    late = client.get(API + f"items/{item['item']}/reveal/")
    assert late.status_code == 200 and late.json()["gold"]["answers"] == ["Grace Hopper"]
    assert late.json()["your_answer"]["status"] == "no_answer"


def test_reveal_is_forbidden_for_test_items_even_when_locked(ner_worker):
    _, client = ner_worker
    item = current_item(client)
    post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3})
    response = client.get(API + f"items/{item['item']}/reveal/")
    assert response.status_code == 403 and response.json()["error"] == "reveal_not_allowed"


def test_skip_is_refused_in_training(ner_trainee):
    p, client = ner_trainee
    item = current_item(client)
    response = post(client, "skip/", {"item": item["item"]})
    assert (response.status_code, response.json()["error"]) == (409, "skip_not_allowed")
    assert Response.objects.get(pk=item["item"]).status == "pending"


# --- Time and focus ------------------------------------------------------------------------------


def test_heartbeats_and_blurs_add_capped_time_and_count_focus_losses(ner_worker):
    p, client = ner_worker
    item = current_item(client)
    long_ago = timezone.now() - timedelta(minutes=5)
    Response.objects.filter(pk=item["item"]).update(shown_at=long_ago, last_seen_at=long_ago)
    assert post(client, "events/", {"item": item["item"], "type": "blur"}).json() == {"recorded": True}
    post(client, "events/", {"item": item["item"], "type": "focus"})
    row = Response.objects.get(pk=item["item"])
    assert row.blur_count == 1 and 60_000 <= row.active_ms < 61_000
    bad = post(client, "events/", {"item": item["item"], "type": "scroll"})
    assert (bad.status_code, bad.json()["error"]) == (400, "invalid_event")


def test_events_on_a_locked_item_change_nothing(ner_worker):
    p, client = ner_worker
    item = current_item(client)
    post(client, "submit/", {"item": item["item"], "no_answer": True, "confidence": 3})
    before = Response.objects.filter(pk=item["item"]).values().get()
    assert post(client, "events/", {"item": item["item"], "type": "blur"}).json() == {"recorded": False}
    assert Response.objects.filter(pk=item["item"]).values().get() == before


# --- Cost of a submission -------------------------------------------------------------------------


def test_a_submit_request_runs_a_small_fixed_number_of_queries(db, worker):
    from tests.factories import make_classification_task

    counts = []
    for n in (5, 80):
        task = make_classification_task(slug=f"q{n}", n_test=n)
        p = make_participation(task, state=State.TEST)
        client = worker(p)
        item = current_item(client)
        with CaptureQueriesContext(connection) as ctx:
            assert (
                post(client, "submit/", {"item": item["item"], "label": "positive", "confidence": 3}).status_code == 200
            )
        counts.append(len([q for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]))
    assert counts[0] == counts[1], counts  # the exact numbers: tests/bench/test_query_counts.py


def test_a_task_without_test_items_answers_a_clear_conflict(db, worker):
    from tasks_app.models import ExampleSetItem

    task = make_task_with_items(slug="empty", test=[("Ada met Bob .", ["Ada"])])
    ExampleSetItem.objects.filter(example_set__task=task).delete()
    p = make_participation(task, state=State.CLAIMED)
    client = worker(p)
    response = post(client, "start/")
    assert (response.status_code, response.json()["error"]) == (409, "step_unavailable")
    p.refresh_from_db()
    assert p.state == State.CLAIMED and not Response.objects.filter(participation=p).exists()


def test_an_interrupted_last_submit_is_settled_by_the_next_read(sst_task, worker):
    p = make_participation(sst_task, state=State.TEST)
    client = worker(p)
    current_item(client)
    Response.objects.filter(participation=p).update(status="answered", submitted_at=timezone.now(), answer=["x"])
    body = client.get(API + "current/").json()
    assert body["state"] == "completed" and body["completion"]["code"] == "C0DE1234"


def test_an_excluded_worker_gets_the_completion_code_through_the_api_too(sst_task, worker):
    from annotation.services.state import lifecycle

    p = make_participation(sst_task, shots=10, state=State.TRAINING)
    lifecycle.exclude(
        p, reason="training S1 below the study's minimum", kind=Participation.ExclusionKind.TRAINING_FILTER
    )
    session = worker(p).get(API + "current/").json()
    assert session["state"] == "excluded" and session["item"] is None
    p.refresh_from_db()
    assert session["completion"]["code"] == p.completion_code != ""


def test_a_worker_of_a_closed_study_cannot_go_on_submitting_once_the_grace_is_over(ner_worker):
    """Issue "Hard to break", defect 7: the join link answered 410 while a worker already in kept
    submitting and completed with a code. A study closed with no deadline left stops them at once."""
    from annotation.models import Study

    p, client = ner_worker
    item = current_item(client)["item"]
    Study.objects.filter(pk=p.study_id).update(status=Study.Status.CLOSED)
    before = stored(p)[1]
    response = post(client, "skip/", {"item": item})
    assert response.status_code == 409 and response.json()["error"] == "study_closed"
    assert stored(p)[1] == before
