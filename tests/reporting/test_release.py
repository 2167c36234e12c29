"""release_study: the human data release read back alone gives the app's table, and names no one."""

from __future__ import annotations

import csv
import hashlib
import json
import statistics
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.models import Participation, Study, SurveyResponse
from annotation.reporting.tables import build_table
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

SURVEY = [
    {"key": "age", "type": "single", "label": "Age", "options": ["18-29", "30-49", "50+"], "demographic": True},
    {"key": "comment", "type": "text", "label": "Anything to tell us?"},
]


def _s1(answer: list[str], gold: list[str]) -> float:
    """Set-based F1 per item, both empty = 1 (the paper's S1), written here apart from the app's scorer."""
    predicted, expected = {a for a in answer if a}, {g for g in gold if g}
    if not predicted and not expected:
        return 1.0
    common = len(predicted & expected)
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def _read(folder: Path, name: str) -> list[dict[str, str]]:
    with (folder / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _recompute(folder: Path) -> dict[int, tuple[float, float, int]]:
    """Per condition, the mean and population std (0-100) of completed workers' test S1, a skip scoring 0."""
    gold = {row["item_id"]: json.loads(row["gold_answers"]) for row in _read(folder, "items.csv")}
    completed = {
        r["participant"]: int(r["shots"]) for r in _read(folder, "participants.csv") if r["state"] == "completed"
    }
    scores: dict[str, list[float]] = {name: [] for name in completed}
    for row in _read(folder, "answers.csv"):
        if row["participant"] in completed and row["phase"] == "test":
            skipped = row["status"] == "skipped"
            scores[row["participant"]].append(0.0 if skipped else _s1(json.loads(row["answer"]), gold[row["item_id"]]))
    cells: dict[int, list[float]] = {}
    for name, shots in completed.items():
        cells.setdefault(shots, []).append(100 * statistics.fmean(scores[name]))
    return {shots: (statistics.fmean(v), statistics.pstdev(v), len(v)) for shots, v in cells.items()}


@pytest.fixture
def ran(sst2):
    study = make_study(
        sst2,
        shots=(0, 10),
        slug="ran",
        survey=SURVEY,
        consent_required=True,
        consent_text="I agree to take part.",
        data_licence="CC BY 4.0",
    )
    gold = gold_answers(sst2)
    mixed = [gold[0], wrong(gold[1], sst2), None, gold[3]]  # one wrong, one skipped
    plan = [
        (0, gold, Participation.State.COMPLETED, "18-29"),
        (0, mixed, Participation.State.COMPLETED, "18-29"),
        (0, [wrong(g, sst2) for g in gold], Participation.State.EXCLUDED, "30-49"),
        (10, mixed, Participation.State.COMPLETED, "18-29"),
        (10, gold[:2], Participation.State.ABANDONED, "50+"),
    ]
    for i, (shots, answers, state, age) in enumerate(plan):
        p = add_annotator(study, shots, answers=answers, state=state, worker_id=f"5f0c0ffee{i}PROLIFICID")
        Participation.objects.filter(pk=p.pk).update(
            platform_data={"SESSION_ID": f"sess-secret-{i}", "STUDY_ID": "prolific-study-x"},
            completion_code="C0MPL3TE",
        )
        SurveyResponse.objects.create(
            participation=p,
            placement=Study.SurveyPlacement.AFTER_TEST,
            answers={"age": age, "comment": f"my name is Worker{i}"},
            submitted_at=timezone.now(),
        )
    return study


def test_the_table_recomputed_from_the_release_alone_equals_the_apps(ran, tmp_path):
    out = tmp_path / "release"
    call_command("release_study", "ran", "-o", str(out))
    recomputed = _recompute(out)
    table = build_table(studies=[ran], include_models=False, intervals=None)
    app = {row.shots: (cell.mean, cell.std, cell.n) for row in table.rows for cell in row.cells if cell.n}
    assert app.keys() == recomputed.keys() == {0, 10}
    for shots, (mean, std, n) in recomputed.items():
        assert app[shots][2] == n
        assert app[shots][0] == pytest.approx(mean, abs=1e-9) and app[shots][1] == pytest.approx(std, abs=1e-9)
    # The figures by hand: at 0 shots a perfect worker (100) and 2 right of 4 (50); at 10 shots one worker (50).
    assert recomputed[0] == pytest.approx((75.0, 25.0, 2)) and recomputed[10] == pytest.approx((50.0, 0.0, 1))
    released = json.loads((out / "design.json").read_text())["table"]["cells"]
    assert {(c["shots"], c["n"]) for c in released} == {(0, 2), (10, 1)}


def test_the_release_names_no_one_and_its_checksums_hold(ran, tmp_path):
    out = tmp_path / "release"
    call_command("release_study", "ran", "-o", str(out))
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [
            "answers.csv",
            "participants.csv",
            "items.csv",
            "design.json",
            "texts.md",
            "demographics.json",
            "DATA_CARD.md",
            "SHA256SUMS",
        ]
    )
    secrets = [*(f"5f0c0ffee{i}PROLIFICID" for i in range(5)), "sess-secret", "prolific-study-x", "C0MPL3TE", "Worker"]
    for path in out.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not [s for s in secrets if s in text], path.name
    for line in (out / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
    participants = _read(out, "participants.csv")
    assert [p["participant"] for p in participants] == ["P01", "P02", "P03", "P04", "P05"]
    assert [p["state"] for p in participants] == ["completed", "completed", "excluded", "completed", "abandoned"]
    demographics = json.loads((out / "demographics.json").read_text())
    age = next(q for q in demographics["questions"] if q["key"] == "age")
    assert age["counts"] == {"18-29": "3", "30-49": "fewer than 3", "50+": "fewer than 3"}
    card = (out / "DATA_CARD.md").read_text()
    assert "CC BY 4.0" in card and "completed 3" in card and "excluded 1" in card
    assert "I agree to take part." in (out / "texts.md").read_text()


def test_a_release_refuses_a_folder_with_files_and_an_unknown_study_and_writes_nothing(ran, tmp_path):
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("release_study", "nope", "-o", str(tmp_path / "a"))
    assert not (tmp_path / "a").exists()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(CommandError, match="not empty"):
        call_command("release_study", "ran", "-o", str(busy))
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]
    call_command("release_study", "ran", "-o", str(busy), "--force")
    assert (busy / "notes.txt").read_text() == "mine" and (busy / "answers.csv").exists()


def test_without_a_licence_the_card_says_how_to_set_it(ran, tmp_path):
    Study.objects.filter(pk=ran.pk).update(data_licence="")
    call_command("release_study", "ran", "-o", str(tmp_path / "r"))
    assert (
        "not stated (set it with: manage.py configure_study ran --data-licence"
        in (tmp_path / "r" / "DATA_CARD.md").read_text()
    )
