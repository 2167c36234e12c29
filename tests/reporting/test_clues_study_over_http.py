"""A whole CLUES study driven through the HTTP API: the admin creates the standard design, twelve
workers join and answer over the session API, and the published table is what the paper's options
give (population std, every skip policy alike when nobody skips) and what the platform printed before
the skip policy existed ("empty")."""

import json

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Participation, Response
from tasks_app.demo import import_demo_data
from tasks_app.scoring import mean, s1, std
from tests.entry_link import take_part

pytestmark = pytest.mark.django_db
LABELS = ("positive", "negative")


def _work(worker_id: str, slug: str, *, strategy) -> Participation:
    """One worker over HTTP: join, start, answer every item (``strategy(phase, position)`` gives a label
    or None for a skip), until the page has nothing more to show."""
    client = Client()
    assert take_part(client, slug, {"worker_id": worker_id}).status_code == 302
    assert client.post("/api/session/start/", content_type="application/json").status_code == 200
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        assert not item["locked"]  # a locked training item's reveal came with its submit: current moves on
        label = strategy(item["phase"], item["position"])
        path, body = (
            ("skip/", {"item": item["item"]})
            if label is None
            else (
                "submit/",
                {"item": item["item"], "label": label, "confidence": 3},
            )
        )
        assert client.post("/api/session/" + path, body, content_type="application/json").status_code == 200
    return Participation.objects.get(worker__external_id=worker_id)


def _expected(skip_policy: str) -> dict[int, tuple[float, float]]:
    """Per shot level, mean ± population std (ddof 0) of the completed workers, from the stored answers
    and the gold, with skips scored by the policy: independent of the reporting code."""
    by_shots: dict[int, list[float]] = {}
    for p in Participation.objects.filter(state="completed").select_related("condition"):
        scores = []
        for r in p.responses.filter(phase="test").select_related("example"):
            if r.status == Response.Status.SKIPPED:
                if skip_policy == "exclude":
                    continue
                scores.append(0.0 if skip_policy == "zero" else s1([], r.example.gold_answers))
            else:
                scores.append(s1(r.answer, r.example.gold_answers))
        by_shots.setdefault(p.condition.shots, []).append(mean(scores))
    return {shots: (100 * mean(v), 100 * std(v)) for shots, v in by_shots.items()}


def _table(admin_client, slug: str, query: str = "") -> dict[int, str]:
    data = admin_client.get(f"/api/reports/table/?studies={slug}{query}").json()
    return {row["shots"]: row["cells"]["sst2"]["text"] for row in data["rows"] if not row.get("model")}


def test_a_clues_study_over_http_reproduces_the_table(admin_client, capsys):
    import_demo_data()
    created = admin_client.post(
        "/api/studies/standard-design/",
        {"task": "sst2", "split_number": 1, "open": True, "base_reward": "1.50"},
        content_type="application/json",
    )
    assert created.status_code == 201
    slug = created.json()["slug"]
    # Twelve workers fill the 4 x 3 slots; worker k answers test item i with LABELS[(i + k) % 2] (so the
    # scores differ), and nobody skips.
    for k in range(12):
        _work(f"w{k}", slug, strategy=lambda phase, i, k=k: LABELS[(i + k) % 2])
    assert Participation.objects.filter(state="completed").count() == 12
    expected = _expected("empty")
    text = {shots: f"{m:.1f} ± {s:.1f}" for shots, (m, s) in expected.items()}
    # Without skips the three policies agree, and so does the table before the policy existed.
    for query in ("", "&skip_policy=zero", "&skip_policy=empty", "&skip_policy=exclude", "&exclude_skips=0"):
        cells = _table(admin_client, slug, query)
        assert {shots: cell.split(" (")[0] for shots, cell in cells.items()} == text, query
    call_command("human_performance", "--study", slug, "--format", "json")
    printed = json.loads(capsys.readouterr().out)
    assert printed["meta"]["metric_options"] == {"skip_policy": "zero", "ddof": 0}


def test_skips_over_http_are_scored_by_the_policy_asked_for(admin_client):
    import_demo_data()
    slug = admin_client.post(
        "/api/studies/standard-design/",
        {"task": "sst2", "split_number": 1, "open": True, "workers_per_condition": 1, "base_reward": "1.50"},
        content_type="application/json",
    ).json()["slug"]
    # Each worker answers the first test item and skips the rest.
    for k in range(4):
        _work(f"s{k}", slug, strategy=lambda phase, i: "positive" if phase == "training" or i == 0 else None)
    for policy in ("zero", "empty", "exclude"):
        expected = _expected(policy)
        cells = _table(admin_client, slug, f"&skip_policy={policy}")
        assert {shots: cell.split(" (")[0] for shots, cell in cells.items()} == {
            shots: f"{m:.1f} ± {s:.1f}" for shots, (m, s) in expected.items()
        }, policy
