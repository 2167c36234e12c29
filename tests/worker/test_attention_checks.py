"""Attention checks in a worker's test step: served as ordinary items, scored apart, never counted."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotation.models import AttentionDecision, Participation, Response, Study
from annotation.reporting.analyses import majority_and_agreement
from annotation.reporting.exports import export_to_bytes
from annotation.reporting.options import MetricOptions
from annotation.reporting.scores import annotator_rows
from annotation.reporting.tables import build_table
from annotation.services.verdicts import attention
from tests.entry_link import take_part
from tests.factories import ConditionFactory, StudyFactory, make_classification_task
from tests.worker.conftest import NER_TEST, login, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State


def _post(client: Client, url: str, body: dict | None = None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


def _study(task, **kwargs) -> Study:
    study = StudyFactory(task=task, **kwargs)
    ConditionFactory(study=study, shots=0)
    return study


def _join(client: Client, study: Study, worker_id: str) -> Participation:
    assert take_part(client, study.slug, {"worker_id": worker_id}).status_code == 302
    assert _post(client, "/api/session/start/").status_code == 200
    return Participation.objects.get(worker__external_id=worker_id, study=study)


def _answer_all(client: Client, *, checks_right: bool, items_right: bool = True) -> list[dict]:
    """Answer every test item (the right label, or the other one) and return the items as served."""
    served = []
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        served.append(item)
        row = Response.all_objects.select_related("example").get(pk=item["item"])
        gold = row.example.gold_answers[0]
        right = checks_right if row.attention_check_id else items_right
        label = gold if right else ("negative" if gold == "positive" else "positive")
        reply = _post(client, "/api/session/submit/", {"item": item["item"], "label": label, "confidence": 3})
        assert reply.status_code == 200, reply.content
    return served


def test_checks_take_their_positions_in_the_test_step_and_look_like_items(client):
    task = make_classification_task(slug="att", n_test=6)
    study = _study(task)
    attention.definitions.create_check(
        study=study,
        position=2,
        context="Read this.",
        question="To show you are reading, choose 'negative'.",
        expected_label="negative",
    )
    attention.definitions.generate(study=study, positions=[5])
    _join(client, study, "alice")
    served = _answer_all(client, checks_right=True)
    assert len(served) == 8
    assert [s["question"] for s in served][1] == "To show you are reading, choose 'negative'."
    assert "choose" in served[4]["question"]
    # The same keys as any other item, and no gold, score or "attention" marker among them.
    assert {frozenset(s) for s in served} == {frozenset(served[0])}
    assert not any("attention" in json.dumps(s) or "gold" in s for s in served)


def test_a_shuffled_test_order_moves_the_items_but_keeps_the_checks_positions(client):
    task = make_classification_task(slug="shuf", n_test=6)
    study = _study(task, test_order=Study.TestOrder.SHUFFLED)
    check = attention.definitions.create_check(
        study=study, position=3, context="Read.", question="Choose 'positive'.", expected_label="positive"
    )
    p = _join(client, study, "bob")
    client.get("/api/session/current/")  # lays the step out
    rows = list(Response.all_objects.filter(participation=p).order_by("position"))
    assert [r.position for r in rows if r.attention_check_id] == [2]
    assert rows[2].example_id == check.example_id


def test_a_worker_who_fails_every_check_has_the_same_scores_table_and_agreement_as_without(client):
    with_checks = make_classification_task(slug="with", n_test=4)
    without = make_classification_task(slug="without", n_test=4)
    s1 = _study(with_checks, attention_fail_limit=0)
    s2 = _study(without)
    attention.definitions.generate(study=s1, positions=[1, 3])
    _join(client, s1, "carol")
    _answer_all(client, checks_right=False)
    other = Client()
    _join(other, s2, "dave")
    _answer_all(other, checks_right=False)

    options = MetricOptions()
    a, b = (annotator_rows(studies=[s], options=options)[0] for s in (s1, s2))
    assert (a.state, a.test_s1, a.test_items, a.test_total, a.skips) == ("completed", 1.0, 4, 4, 0)
    assert (b.state, b.test_s1, b.test_items, b.test_total, b.skips) == ("completed", 1.0, 4, 4, 0)
    cells = [[(c.mean, c.n) for c in row.cells] for row in build_table(studies=[s1], options=options).human_rows()]
    assert cells == [[(c.mean, c.n) for c in row.cells] for row in build_table(studies=[s2], options=options).rows]
    agreement = ("shots", "annotators", "items", "annotator_mean", "majority_vote_s1")
    assert [[c[k] for k in agreement] for c in majority_and_agreement(study=s1, options=options)] == [
        [c[k] for k in agreement] for c in majority_and_agreement(study=s2, options=options)
    ]
    lines = export_to_bytes(kind="annotations-jsonl", studies=[s1], options=options).decode().splitlines()
    assert len(lines) == 1 + 4  # the meta line and the four test items, no check
    report = attention.reports.report(s1)
    assert [(r.worker, r.checks, r.passed, r.failed, r.decision) for r in report] == [("carol", 2, 0, 2, "passed")]


@pytest.mark.parametrize(
    ("action", "state", "kind", "decision"),
    [
        (Study.AttentionAction.REVIEW, State.COMPLETED, "", AttentionDecision.Decision.REVIEW),
        (Study.AttentionAction.EXCLUDE, State.EXCLUDED, "attention", AttentionDecision.Decision.EXCLUDED),
    ],
)
def test_the_rule_flags_or_excludes_a_worker_at_the_end_of_the_test_step(client, action, state, kind, decision):
    task = make_classification_task(slug="rule", n_test=4)
    study = _study(task, attention_fail_limit=2, attention_action=action)
    attention.definitions.generate(study=study, positions=[1, 2, 4])
    p = _join(client, study, "erin")
    _answer_all(client, checks_right=False)
    p.refresh_from_db()
    assert (p.state, p.exclusion_kind) == (state, kind)
    (logged,) = AttentionDecision.objects.filter(participation=p)
    assert (logged.checks, logged.passed_count, logged.failed_count, logged.fail_limit, logged.decision) == (
        3,
        0,
        3,
        2,
        decision,
    )
    assert attention.rule.failed_attention(p) is (state == State.EXCLUDED)
    if state == State.EXCLUDED:
        event = p.events.order_by("-at", "-id").first()
        assert event.reason.startswith("attention: failed 3 of 3") and p.completion_code
        assert "completion" in client.get("/work/").content.decode().lower()
        assert annotator_rows(studies=[study], options=MetricOptions())[0].is_completed is False


def test_a_worker_within_the_rule_completes_and_is_reported_as_passed(client):
    task = make_classification_task(slug="ok", n_test=4)
    study = _study(task, attention_fail_limit=2, attention_action=Study.AttentionAction.EXCLUDE)
    attention.definitions.generate(study=study, positions=[1, 2])
    p = _join(client, study, "fay")
    _answer_all(client, checks_right=True)
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    assert [(r.passed, r.failed, r.decision) for r in attention.reports.report(study)] == [(2, 0, "passed")]


def test_a_span_check_is_passed_by_selecting_its_word(client):
    task = make_task_with_items(slug="ner", test=NER_TEST)
    study = _study(task)
    (check,) = attention.definitions.generate(study=study, positions=[2])
    p = _join(client, study, "gil")
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        body: dict = {"item": item["item"], "confidence": 4}
        if item["position"] == 1:
            word = check.expected_spans[0]
            start = item["context"].find(word)
            body["spans"] = [{"start": start, "end": start + len(word), "text": word}]
        else:
            body["no_answer"] = True
        assert _post(client, "/api/session/submit/", body).status_code == 200
    assert attention.rule.tallies([p.pk])[p.pk] == attention.rule.Tally(checks=1, passed=1, failed=0, pending=0)


def test_the_start_page_counts_the_checks_among_the_items(client):
    task = make_classification_task(slug="cnt", n_test=4)
    study = _study(task)
    attention.definitions.generate(study=study, positions=[2])
    take_part(client, study.slug, {"worker_id": "hal"})
    assert "5 items" in client.get("/work/").content.decode()


def test_the_submission_of_a_middle_item_costs_the_same_with_checks(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    task = make_classification_task(slug="qc", n_test=6)
    study = _study(task)
    attention.definitions.generate(study=study, positions=[2, 4])
    p = _join(client, study, "ian")
    login(client, p)
    for _ in range(2):
        item = client.get("/api/session/current/").json()["item"]
        _post(client, "/api/session/submit/", {"item": item["item"], "label": "positive", "confidence": 3})
    item = client.get("/api/session/current/").json()["item"]  # the check at position 4 is next-but-one
    with CaptureQueriesContext(connection) as ctx:
        reply = _post(client, "/api/session/submit/", {"item": item["item"], "label": "positive", "confidence": 3})
    assert reply.status_code == 200
    from tests.bench.test_query_counts import submit_queries

    assert len(ctx.captured_queries) == submit_queries(spans=False)


def test_the_participation_api_says_why_a_worker_was_excluded(client, admin_client):
    task = make_classification_task(slug="why", n_test=2)
    study = _study(task, attention_fail_limit=1, attention_action=Study.AttentionAction.EXCLUDE)
    attention.definitions.generate(study=study, positions=[1])
    p = _join(client, study, "jan")
    _answer_all(client, checks_right=False)
    body = admin_client.get(f"/api/participations/{p.pk}/").json()
    assert (body["state"], body["exclusion_kind"]) == ("excluded", "attention")
    assert [(d["decision"], d["failed_count"], d["fail_limit"]) for d in body["attention_decisions"]] == [
        ("excluded", 1, 1)
    ]


def test_an_admin_who_readmits_a_worker_excluded_by_the_rule_completes_them(client):
    from annotation.services.verdicts import overrides

    task = make_classification_task(slug="readm", n_test=2)
    study = _study(task, attention_fail_limit=1, attention_action=Study.AttentionAction.EXCLUDE)
    attention.definitions.generate(study=study, positions=[2])
    p = _join(client, study, "kim")
    _answer_all(client, checks_right=False)
    overrides.override(p, admit=True, reason="the check was ambiguous", actor=None)
    p.refresh_from_db()
    assert (p.state, p.exclusion_kind) == (State.COMPLETED, "")
    assert annotator_rows(studies=[study], options=MetricOptions())[0].is_completed


def test_a_check_keeps_its_own_question_where_the_task_overrides_the_items_question(client):
    # MNLI asks every item "What is the relationship between these sentences?"; a check asks its own.
    task = make_classification_task(slug="pairs", n_test=3)
    task.worker_question = "What is the relationship between these sentences?"
    task.save()
    study = _study(task)
    check = attention.definitions.create_check(
        study=study,
        position=2,
        context="Read this.",
        question="To show you are reading, choose 'negative'.",
        expected_label="negative",
    )
    _join(client, study, "mnli-reader")
    served = _answer_all(client, checks_right=True)
    by_row = {s["item"]: s["question"] for s in served}
    check_row = Response.all_objects.get(attention_check=check).pk
    assert by_row.pop(check_row) == "To show you are reading, choose 'negative'."
    assert set(by_row.values()) == {"What is the relationship between these sentences?"}
