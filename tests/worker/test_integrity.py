"""The integrity signals over HTTP: strict validation, the reading-time estimate, and the rule at the end
of the test step (flag or exclude), as the table, pay, exports, dashboard and statement then show it."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import IntegrityDecision, Participation, ParticipationEvent, Response, Study
from annotation.reporting.exports import export_to_bytes
from annotation.reporting.monitoring import notices
from annotation.reporting.options import MetricOptions
from annotation.reporting.scores import annotator_rows
from annotation.reporting.statement import build_statement, integrity_facts, render_statement
from annotation.services.money import pay
from annotation.services.session import signals
from annotation.services.verdicts import integrity
from tests import entry_link
from tests.factories import ConditionFactory, StudyFactory, make_classification_task
from tests.worker.conftest import login, make_participation

pytestmark = pytest.mark.django_db
State = Participation.State
CALM = {"visible_ms": 20_000, "hidden_count": 0, "hidden_ms": 0, "copy_count": 0}


def _post(client: Client, url: str, body: dict | None = None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


def _study(task, **kwargs) -> Study:
    study = StudyFactory(task=task, **kwargs)
    ConditionFactory(study=study, shots=0)
    return study


def _join(client: Client, study: Study, worker_id: str) -> Participation:
    assert entry_link.take_part(client, study.slug, {"worker_id": worker_id}).status_code == 302
    assert _post(client, "/api/session/start/").status_code == 200
    return Participation.objects.get(worker__external_id=worker_id, study=study)


def _answer_all(client: Client, page_signals: dict) -> None:
    """Answer every test item with its gold label, sending ``page_signals`` each time."""
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        gold = Response.all_objects.select_related("example").get(pk=item["item"]).example.gold_answers[0]
        body = {"item": item["item"], "label": gold, "confidence": 4, "signals": page_signals}
        reply = _post(client, "/api/session/submit/", body)
        assert reply.status_code == 200, reply.content


# --- The reading-time estimate ---------------------------------------------------------------------


def test_the_reading_estimate_counts_words_and_cjk_characters():
    assert signals.text_length("The cat sat on the mat .") == (6, 0)  # a lone full stop is no word
    assert signals.text_length("我喜欢这部电影。") == (0, 7)  # CJK punctuation is no character to read
    assert signals.text_length("他说 OK 了") == (1, 3)
    assert signals.reading_ms("word " * signals.WORDS_PER_MINUTE) == 60_000
    assert signals.reading_ms("字" * signals.CJK_CHARS_PER_MINUTE) == 60_000
    assert signals.reading_ms("") == 0


# --- The session API takes the signals with the answer ---------------------------------------------


@pytest.fixture
def in_test(client):
    p = make_participation(make_classification_task(slug="sig", n_test=2), state=State.TEST)
    login(client, p)
    item = client.get("/api/session/current/").json()["item"]
    return client, p, item["item"]


def test_a_submit_stores_the_signals_and_the_reading_estimate_in_its_row(in_test):
    client, p, item = in_test
    sent = {"visible_ms": 1234, "hidden_count": 2, "hidden_ms": 5000, "copy_count": 1}
    reply = _post(client, "/api/session/submit/", {"item": item, "label": "positive", "confidence": 3, "signals": sent})
    assert reply.status_code == 200, reply.content
    row = Response.objects.select_related("example").get(pk=item)
    assert {k: getattr(row, k) for k in signals.FIELDS} == sent
    assert row.reading_ms == signals.reading_ms(f"{row.example.question}\n{row.example.context_text}") > 0


def test_a_submit_copies_the_examples_stored_estimate_without_reading_its_text(in_test, monkeypatch):
    from tasks_app import reading_time

    client, p, item = in_test
    example = Response.objects.select_related("example").get(pk=item).example
    # The factory's text, counted by hand: "positive or negative?" and "Sentence number N is here ." (3 + 5 words).
    assert example.reading_ms == 60_000 * 8 // 300

    def refuse(text: str):
        raise AssertionError("a submission tokenised the item's text")

    monkeypatch.setattr(reading_time, "text_length", refuse)
    reply = _post(client, "/api/session/submit/", {"item": item, "label": "positive", "confidence": 3, "signals": CALM})
    assert reply.status_code == 200, reply.content
    assert Response.objects.get(pk=item).reading_ms == 1_600


def test_a_skip_takes_the_signals_too_and_an_answer_without_them_stores_none(in_test):
    client, p, item = in_test
    assert (
        _post(client, "/api/session/submit/", {"item": item, "label": "positive", "confidence": 3}).status_code == 200
    )
    row = Response.objects.get(pk=item)
    assert (row.visible_ms, row.copy_count) == (None, None) and row.reading_ms
    following = client.get("/api/session/current/").json()["item"]["item"]
    assert _post(client, "/api/session/skip/", {"item": following, "signals": CALM}).status_code == 200
    assert Response.objects.get(pk=following).visible_ms == CALM["visible_ms"]


@pytest.mark.parametrize(
    "bad",
    [
        "fast",
        [1, 2],
        {**CALM, "keys": ["a", "b"]},  # an unknown key is refused, never stored
        {k: v for k, v in CALM.items() if k != "copy_count"},
        {**CALM, "copy_count": True},
        {**CALM, "visible_ms": 12.5},
        {**CALM, "hidden_ms": -1},
        {**CALM, "visible_ms": "1000"},
        {**CALM, "hidden_count": signals.MAXIMUM["hidden_count"] + 1},
    ],
)
@pytest.mark.parametrize("route", ["submit", "skip"])
def test_malformed_signals_are_refused_in_the_apis_error_shape_and_nothing_is_stored(in_test, bad, route):
    client, p, item = in_test
    body = {"item": item, "signals": bad, **({"label": "positive", "confidence": 3} if route == "submit" else {})}
    reply = _post(client, f"/api/session/{route}/", body)
    assert reply.status_code == 400
    assert reply.json()["error"] == "invalid_signals" and reply.json()["detail"]
    row = Response.objects.get(pk=item)
    assert (row.status, row.visible_ms) == (Response.Status.PENDING, None)


# --- The rule -------------------------------------------------------------------------------------


def test_the_rule_excludes_a_worker_who_copies_every_item_and_the_reports_follow(client):
    task = make_classification_task(slug="copy", n_test=4)
    study = _study(
        task,
        workers_per_condition=2,
        hourly_rate=12,
        integrity_max_copies=1,
        integrity_action=Study.AttentionAction.EXCLUDE,
    )
    copier = _join(client, study, "cora")
    _answer_all(client, {**CALM, "copy_count": 1})
    honest_client = Client()
    honest = _join(honest_client, study, "dan")
    _answer_all(honest_client, CALM)

    copier.refresh_from_db()
    honest.refresh_from_db()
    assert (copier.state, copier.exclusion_kind) == (State.EXCLUDED, "integrity")
    assert honest.state == State.COMPLETED
    (logged,) = IntegrityDecision.objects.filter(participation=copier)
    assert (logged.items, logged.copied_items, logged.fast_items, logged.max_copies, logged.action) == (
        4,
        4,
        0,
        1,
        "exclude",
    )
    assert logged.decision == IntegrityDecision.Decision.EXCLUDED
    assert logged.reason == "copied text of 4 items (limit 1): excluded"
    assert IntegrityDecision.objects.get(participation=honest).decision == IntegrityDecision.Decision.PASSED

    # Like any exclusion: a completion code (screened out, so paid), and the slot opens for another worker.
    session = client.get("/api/session/current/").json()
    assert session["completion"]["code"] and session["completion"]["outcome"] == "screened_out"
    assert entry_link.take_part(Client(), study.slug, {"worker_id": "erin"}).status_code == 302
    assert Participation.objects.filter(study=study, worker__external_id="erin").exists()

    # The table averages the completed worker only; the copier is paid up to the exclusion.
    rows = {r.worker_id: r for r in annotator_rows(studies=[study], options=MetricOptions())}
    assert (rows["cora"].is_completed, rows["dan"].is_completed) == (False, True)
    claimed = copier.events.get(to_state=State.CLAIMED).at
    excluded = copier.events.get(to_state=State.EXCLUDED)
    assert excluded.reason.startswith("integrity: copied text of 4 items")
    assert pay.paid_seconds([copier])[copier.pk] == (excluded.at - claimed).total_seconds() > 0
    assert not ParticipationEvent.objects.filter(participation=copier, to_state=State.COMPLETED).exists()

    # The exports, the dashboard and the statement.
    exported = export_to_bytes(kind="integrity-csv", studies=[study], options=MetricOptions()).decode()
    by_worker = {r["worker"]: r for r in csv.DictReader(io.StringIO(exported))}
    assert (by_worker["cora"]["copied_items"], by_worker["cora"]["decision"]) == ("4", "excluded")
    assert (by_worker["dan"]["copied_items"], by_worker["dan"]["decision"]) == ("0", "passed")
    payload = json.loads(export_to_bytes(kind="integrity-json", studies=[study], options=MetricOptions()))
    assert payload["rules"] == {study.slug: "a worker who copied text of more than 1 item was excluded"}
    assert {w["worker"] for w in payload["workers"]} == {"cora", "dan"}

    User.objects.create_superuser("boss", "boss@example.org", "pw")
    staff = Client()
    staff.login(username="boss", password="pw")
    page = staff.get(f"/dashboard/study/{study.slug}/").content.decode()
    assert "Integrity signals" in page and "copied text of more than 1 item" in page
    assert staff.get(f"/api/participations/{copier.pk}/").json()["integrity_decisions"][0]["copied_items"] == 4

    facts = integrity_facts(study)
    assert (facts["workers"], facts["with_signals"], facts["flagged"], facts["excluded"]) == (2, 2, 0, 1)
    text = render_statement(build_statement(study=study), "markdown")
    assert "Integrity signals" in text and "0 were flagged for review and 1 excluded" in text
    assert "300 words or 320 CJK characters per minute" in text


def test_the_review_action_flags_fast_answers_and_the_worker_completes(client):
    task = make_classification_task(slug="fast", n_test=4)
    study = _study(task, integrity_max_fast_share=0.5, integrity_action=Study.AttentionAction.REVIEW)
    p = _join(client, study, "finn")
    _answer_all(client, {**CALM, "visible_ms": 10})  # far below any text's reading time
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    (logged,) = IntegrityDecision.objects.filter(participation=p)
    assert (logged.fast_items, logged.answered, logged.decision) == (4, 4, "review")
    assert "4 of 4 answers faster than reading time (100%, limit 50%)" in logged.reason
    assert integrity_facts(study)["flagged"] == 1
    assert [n.kind for n in notices(study) if n.kind.startswith("integrity")] == ["integrity-review"]


def test_long_times_away_count_per_item_against_the_studys_limit(client):
    task = make_classification_task(slug="away", n_test=4)
    study = _study(
        task,
        integrity_max_hidden_share=0.25,
        integrity_hidden_seconds=30,
        integrity_action=Study.AttentionAction.EXCLUDE,
    )
    p = _join(client, study, "gus")
    _answer_all(client, {**CALM, "hidden_count": 1, "hidden_ms": 30_000})  # exactly the limit: not long
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    assert integrity.report(study)[0].figures.hidden_items == 0


def test_without_signals_the_servers_own_time_decides_what_is_fast(client):
    task = make_classification_task(slug="bare", n_test=3)
    study = _study(task, integrity_max_fast_share=0.0, integrity_action=Study.AttentionAction.EXCLUDE)
    p = _join(client, study, "hal")
    while (item := client.get("/api/session/current/").json()["item"]) is not None:  # a script, at once
        assert _post(client, "/api/session/submit/", {"item": item["item"], "label": "positive", "confidence": 3})
    p.refresh_from_db()
    (logged,) = IntegrityDecision.objects.filter(participation=p)
    assert (logged.with_signals, logged.fast_items, p.state) == (0, 3, State.EXCLUDED)


def test_the_example_consent_texts_say_what_the_page_records():
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "docs" / "examples"
    english = (examples / "consent.en.md").read_text()
    german = (examples / "consent.de.md").read_text()
    for phrase in ("visible", "background or\n  lost focus", "text of the item was copied", "never\n  what was copied"):
        assert phrase in english
    assert "do **not** record the keys you press, what is on your clipboard, your mouse" in english
    for phrase in ("sichtbar", "den Fokus\n  verloren", "Text der Aufgabe kopiert", "nie der kopierte"):
        assert phrase in german
    assert "**nicht** auf, welche Tasten Sie drücken, was in Ihrer\nZwischenablage steht, Ihre Mausbewegungen" in german


def test_the_study_api_sets_the_rule_and_refuses_a_share_outside_0_to_1(client):
    study = _study(make_classification_task(slug="api", n_test=2))
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    staff = Client()
    staff.login(username="boss", password="pw")
    url = f"/api/studies/{study.pk}/"
    bad = staff.patch(url, {"integrity_max_fast_share": 1.5}, content_type="application/json")
    assert bad.status_code == 400 and "integrity_max_fast_share" in bad.json()["fields"]
    rule = {"integrity_max_copies": 2, "integrity_max_hidden_share": 0.5, "integrity_action": "exclude"}
    assert staff.patch(url, rule, content_type="application/json").status_code == 200
    study.refresh_from_db()
    assert integrity.rule_text(study) == (
        "a worker who copied text of more than 2 items or left the page for more than 30 s on more than 50% "
        "of items was excluded"
    )
