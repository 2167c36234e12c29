"""Every way a step ends goes through ``step_end.end_step``, and the attention rule applies on each.

The entry points: the last submit, the last skip, ``GET current`` after an interrupted last submit,
and an admin's readmission of a worker who had finished the test. A verdict that lands while the
last answer is being locked wins without a server error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

import annotation
from annotation.models import AttentionDecision, Participation, Response, Study
from annotation.services.session import worker_sql
from annotation.services.verdicts import attention, overrides, step_end
from tests import entry_link
from tests.factories import ConditionFactory, StudyFactory, make_classification_task
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State
Decision = AttentionDecision.Decision


@pytest.fixture
def ends(monkeypatch) -> list[int]:
    """The participations ``end_step`` was called for, in order (the real function runs)."""
    calls: list[int] = []
    real = step_end.end_step

    def spy(participation: Participation, **kwargs: object) -> step_end.StepEnd:
        calls.append(participation.pk)
        return real(participation, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(step_end, "end_step", spy)
    return calls


def _post(client: Client, url: str, body: dict | None = None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


def _strict_study(slug: str) -> Study:
    """Two test items and a check at item 1; one failed check excludes."""
    study = StudyFactory(
        task=make_classification_task(slug=slug, n_test=2),
        attention_fail_limit=1,
        attention_action=Study.AttentionAction.EXCLUDE,
    )
    ConditionFactory(study=study, shots=0)
    attention.definitions.generate(study=study, positions=[1])
    return study


def _join(client: Client, study: Study, worker_id: str) -> Participation:
    assert entry_link.take_part(client, study.slug, {"worker_id": worker_id}).status_code == 302
    assert _post(client, "/api/session/start/").status_code == 200
    return Participation.objects.get(worker__external_id=worker_id, study=study)


def _answer(client: Client, item: dict, *, right: bool):
    gold = Response.all_objects.select_related("example").get(pk=item["item"]).example.gold_answers[0]
    label = gold if right else ("negative" if gold == "positive" else "positive")
    return _post(client, "/api/session/submit/", {"item": item["item"], "label": label, "confidence": 3})


def _current(client: Client) -> dict | None:
    return client.get("/api/session/current/").json()["item"]


def _fail_the_check(client: Client) -> None:
    check = _current(client)
    assert check is not None
    assert _answer(client, check, right=False).status_code == 200


def _excluded_by_the_rule(p: Participation) -> bool:
    p.refresh_from_db()
    decisions = list(p.attention_decisions.values_list("decision", flat=True))
    return (p.state, p.exclusion_kind, decisions) == (State.EXCLUDED, "attention", [Decision.EXCLUDED])


def test_the_last_submit_ends_the_step_through_the_attention_rule(client, ends):
    p = _join(client, _strict_study("by-submit"), "ann")
    _fail_the_check(client)
    while (item := _current(client)) is not None:
        reply = _answer(client, item, right=True)
    assert reply.json()["state"] == "excluded"
    assert ends == [p.pk] and _excluded_by_the_rule(p)


def test_the_last_skip_ends_the_step_through_the_attention_rule(client, ends):
    p = _join(client, _strict_study("by-skip"), "bob")
    _fail_the_check(client)
    while (item := _current(client)) is not None:
        reply = _post(client, "/api/session/skip/", {"item": item["item"]})
    assert reply.json()["state"] == "excluded"
    assert ends == [p.pk] and _excluded_by_the_rule(p)


def test_reading_the_session_after_an_interrupted_last_submit_ends_the_step_through_the_rule(client, ends):
    p = _join(client, _strict_study("by-read"), "cat")
    _fail_the_check(client)
    # The last answers were locked but the request died before the step ended.
    Response.objects.filter(participation=p, status=Response.Status.PENDING).update(
        status=Response.Status.ANSWERED, submitted_at=timezone.now(), answer=["positive"], score=1.0
    )
    assert ends == []
    body = client.get("/api/session/current/").json()
    assert (body["state"], body["item"]) == ("excluded", None) and body["completion"]["code"]
    assert ends == [p.pk] and _excluded_by_the_rule(p)


def test_an_admin_readmission_after_the_test_ends_it_again_through_the_rule(client, admin_client, admin_user, ends):
    p = _join(client, _strict_study("by-readmission"), "dan")
    _fail_the_check(client)
    while (item := _current(client)) is not None:
        _answer(client, item, right=True)
    assert _excluded_by_the_rule(p) and ends == [p.pk]
    reply = _post(admin_client, f"/api/participations/{p.pk}/override/", {"admit": True, "reason": "ambiguous check"})
    assert reply.status_code == 200, reply.content
    assert ends == [p.pk, p.pk]
    p.refresh_from_db()
    assert (p.state, p.exclusion_kind) == (State.COMPLETED, "")
    # The rule was applied and recorded; the admin's readmission has the last word over its exclusion.
    last = p.attention_decisions.last()
    assert last is not None and (last.decision, last.failed_count, last.decided_by) == (Decision.REVIEW, 1, admin_user)


def test_readmitting_a_worker_excluded_after_completing_records_the_rule_again(client, ends):
    study = _strict_study("after-verdict")
    p = _join(client, study, "eve")
    while (item := _current(client)) is not None:
        _answer(client, item, right=True)
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    overrides.override(p, admit=False, reason="copied answers", actor=None)  # a verdict after the test
    overrides.override(p, admit=True, reason="checked: not copied", actor=None)
    assert ends == [p.pk, p.pk]
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    assert list(p.attention_decisions.values_list("decision", flat=True)) == [Decision.PASSED, Decision.PASSED]


def test_only_end_step_completes_a_test_step():
    """The bare state change has one caller, so no path can skip the attention rule."""
    root = Path(annotation.__file__).parent
    callers = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        if "finish_test(" in path.read_text() and path.name != "lifecycle.py"
    ]
    assert callers == ["services/verdicts/step_end.py"]


# --- A verdict that lands while the last answer is locked -------------------------------------------


@pytest.fixture
def verdict_during_lock(monkeypatch):
    """Exclude the worker (as an admin or the group filter would, from another request) right after
    the last answer of their step is locked and before the step ends."""
    real = worker_sql.lock_response

    def lock_then_verdict(pk, changes, **kwargs):
        result = real(pk, changes, **kwargs)
        row = Response.all_objects.get(pk=pk)
        step = Response.all_objects.filter(participation_id=row.participation_id, phase=row.phase)
        other = Participation.objects.get(pk=row.participation_id)  # another request's copy
        if not step.filter(status=Response.Status.PENDING).exists():  # the step's last answer
            overrides.override(other, admit=False, reason="excluded meanwhile", actor=None)
        return result

    monkeypatch.setattr(worker_sql, "lock_response", lock_then_verdict)


def test_a_verdict_during_the_last_test_submit_wins_and_the_answer_stays_locked(client, verdict_during_lock):
    study = StudyFactory(task=make_classification_task(slug="race", n_test=1))
    ConditionFactory(study=study, shots=0)
    p = _join(client, study, "fay")
    item = _current(client)
    assert item is not None
    reply = _answer(client, item, right=True)
    assert reply.status_code == 200, reply.content
    assert (reply.json()["state"], reply.json()["step_finished"]) == ("excluded", True)
    p.refresh_from_db()
    assert (p.state, p.exclusion_kind) == (State.EXCLUDED, "admin") and p.completion_code
    assert Response.objects.get(pk=item["item"]).status == Response.Status.ANSWERED
    assert not p.attention_decisions.exists()  # the step's end was not kept
    assert client.get("/api/session/current/").json()["state"] == "excluded"


def test_a_verdict_during_the_last_training_submit_wins_too(sst_task, client, verdict_during_lock):
    from tests.worker.conftest import login

    p = make_participation(sst_task, shots=10, state=State.TRAINING)
    login(client, p)
    while (item := _current(client)) is not None and p.state == State.TRAINING:
        reply = _answer(client, item, right=True)
        assert reply.status_code == 200, reply.content
        p.refresh_from_db()
    assert reply.json()["state"] == "excluded"
    assert not p.filter_decisions.filter(is_override=False).exists()  # only the admin's verdict stands
    assert not Response.objects.filter(participation=p, phase=Response.Phase.TRAINING, status="pending").exists()
