"""The training analyses as a table in every format; the per-annotator CSV; pay fairness; safe command output."""

import csv
import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from annotation.reporting.analyses import study_analyses
from annotation.reporting.exports import annotators_csv, export_to_bytes, payments_csv
from annotation.reporting.options import MetricOptions
from annotation.reporting.provenance import reproducibility_header
from annotation.reporting.training_table import (
    build_training_table,
    training_csv,
    training_json,
    training_latex,
    training_markdown,
)
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong


@pytest.fixture
def nested(sst2):
    """10- and 20-shot groups; the 20-shot set starts with the 10-shot set (hand-worked values in the test)."""
    study = make_study(sst2, shots=(0, 10, 20), slug="nested")
    right = [e.gold_answers for e in study.conditions.get(shots=20).training_set.ordered_examples()]
    test = gold_answers(sst2)
    add_annotator(study, 10, answers=test, training_answers=right[:10])  # shared 1.0
    add_annotator(study, 10, answers=test, training_answers=right[:5] + [[]] * 5)  # shared 0.5
    add_annotator(study, 20, answers=test, training_answers=right[:10] + [[]] * 10)  # shared 1.0, extra 0.0
    add_annotator(study, 20, answers=test, training_answers=right[:8] + [[]] * 2 + right[10:])  # 0.8, 1.0
    add_annotator(study, 20, answers=test, training_answers=[[]] * 20, state="excluded")  # never averaged
    return study


def _header(studies, kind="t"):
    return reproducibility_header(studies=studies, options=MetricOptions(), export=kind)


def test_training_table_cells_match_the_hand_worked_values(nested):
    table = build_training_table(studies=[nested])
    cells = {
        (r.small, r.large, r.shared, r.group): (r.cells[0].text(), r.cells[0].n, r.examples[0]) for r in table.rows
    }
    assert cells == {
        (10, 20, True, 10): ("75.0 ± 25.0", 2, 10),
        (10, 20, True, 20): ("90.0 ± 10.0", 2, 10),
        (10, 20, False, 20): ("50.0 ± 50.0", 2, 10),
    }
    assert [r.label for r in table.rows] == ["10-shot annotators", "20-shot annotators", "20-shot annotators"]
    sample = build_training_table(studies=[nested], options=MetricOptions(ddof=1))
    assert sample.rows[0].cells[0].text() == "75.0 ± 35.4"  # sqrt(0.125) with ddof=1


def test_training_table_renders_well_formed_markdown_latex_csv_and_json(nested):
    table = build_training_table(studies=[nested])
    header = _header([nested])
    md = training_markdown(table, header)
    pipes = [line for line in md.splitlines() if line.startswith("|")]
    assert {len(re.findall(r"(?<!\\)\|", line)) for line in pipes} == {4}
    assert "| shared by the 10- and 20-shot sets | 10-shot annotators | 75.0 ± 25.0 |" in pipes
    assert "| only in the 20-shot set (not in the 10-shot set) | 20-shot annotators | 50.0 ± 50.0 |" in pipes
    assert "population standard deviation" in md and md.startswith("<!--")
    tex = training_latex(table, header)
    body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    assert body.isascii()
    depth = 0
    for ch in body.replace(r"\{", "").replace(r"\}", ""):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    rows = [line for line in body.splitlines() if line.endswith(r"\\") and "multicolumn" not in line]
    assert len(rows) == 1 + 3 and all(len(re.findall(r"(?<!\\)&", line)) == 2 for line in rows)
    assert r"75.0 $\pm$ 25.0" in tex
    parsed = list(csv.DictReader(io.StringIO(training_csv(table, header))))
    assert [(r["annotators"], r["mean"], r["std"], r["examples"]) for r in parsed] == [
        ("10", "75.0000", "25.0000", "10"),
        ("20", "90.0000", "10.0000", "10"),
        ("20", "50.0000", "50.0000", "10"),
    ]
    data = json.loads(training_json(table, header))
    assert data["meta"]["metric_options"] == {"skip_policy": "zero", "ddof": 0}
    assert data["training_table"]["rows"][0]["cells"]["sst2-fixture"]["text"] == "75.0 ± 25.0"


def test_a_study_without_few_shot_conditions_gives_an_empty_training_table_not_an_error(sst2):
    study = make_study(sst2, shots=(0,), slug="zero-only")
    table = build_training_table(studies=[study])
    assert table.rows == []
    assert "no few-shot conditions" in training_markdown(table, _header([study]))


def test_per_annotator_csv_has_scores_items_skips_time_and_pay_for_every_state(sst2):
    study = make_study(sst2, shots=(0,), slug="per-annotator")
    gold = gold_answers(sst2)
    add_annotator(
        study, 0, answers=[gold[0], gold[1], None, wrong(gold[3], sst2)], worker_id="w1", minutes=30, active_ms=1500
    )
    add_annotator(study, 0, answers=[wrong(g, sst2) for g in gold], state="excluded", worker_id="w2", minutes=10)
    text = annotators_csv(studies=[study], options=MetricOptions())
    assert text.startswith("study,task,shots,")  # a plain header-first table: provenance is a sidecar
    rows = {r["worker_id"]: r for r in csv.DictReader(io.StringIO(text))}
    w1 = rows["w1"]
    assert (w1["state"], w1["averaged_in"], w1["test_s1"], w1["test_items"], w1["skips"], w1["coverage"]) == (
        "completed",
        "1",
        "50.00",
        "4",
        "1",
        "0.7500",
    )
    assert (w1["active_minutes"], w1["paid_minutes"], w1["pay"], w1["currency"]) == ("0.10", "30.00", "6.00", "USD")
    assert (rows["w2"]["averaged_in"], rows["w2"]["test_s1"], rows["w2"]["pay"]) == ("0", "0.00", "2.00")
    skipped = annotators_csv(studies=[study], options=MetricOptions(skip_policy="exclude"))
    assert ",66.67," in skipped and "skipped items are left out" not in skipped  # the note is in the sidecar


def test_pay_fairness_carries_the_condition_median_and_the_flag(sst2):
    from decimal import Decimal

    study = make_study(sst2, shots=(0,), slug="fair", base_reward=Decimal("2.00"))
    add_annotator(study, 0, answers=gold_answers(sst2), minutes=30, worker_id="slow")  # 4.00/h, bonus 4.00
    add_annotator(study, 0, answers=gold_answers(sst2), minutes=20, worker_id="mid")  # 6.00/h, bonus 2.00
    add_annotator(study, 0, answers=gold_answers(sst2), minutes=5, worker_id="fast")  # 24.00/h
    rows = list(csv.DictReader(io.StringIO(payments_csv(studies=[study], options=MetricOptions()))))
    by_worker = {r["worker_id"]: r for r in rows}
    assert (
        by_worker["slow"]["effective_hourly"],
        by_worker["slow"]["below_rate"],
        by_worker["slow"]["bonus"],
        by_worker["slow"]["amount"],
    ) == ("4.00", "1", "4.00", "6.00")
    assert {(r["condition_median_effective_hourly"], r["condition_below_rate"]) for r in rows} == {("6.00", "1")}
    (pay,) = study_analyses(study=study, options=MetricOptions())["pay_fairness"]
    assert (pay["median_effective_hourly"], pay["below_rate"], pay["total_bonus"]) == ("6.00", True, "6.00")


@pytest.mark.parametrize("fmt", ["markdown", "latex", "csv", "json"])
def test_command_prints_the_training_table_and_writes_the_per_annotator_csv(nested, fmt, tmp_path, capsys):
    call_command("human_performance", "--study", "nested", "--training", "--format", fmt)
    assert "75.0" in capsys.readouterr().out
    call_command("human_performance", "--study", "nested", "--per-annotator", "--output", str(tmp_path / "a.csv"))
    assert "averaged_in" in (tmp_path / "a.csv").read_text()
    assert export_to_bytes(kind=f"training-{fmt}", studies=[nested], options=MetricOptions())


def test_a_failing_command_leaves_an_existing_output_file_untouched(nested, tmp_path, monkeypatch):
    target = tmp_path / "table.tex"
    target.write_text("the version in the paper")

    def broken(**kwargs):
        kwargs["out"].write(b"half a table")
        raise CommandError("the database went away")

    monkeypatch.setattr("annotation.management.commands.human_performance.write_export", broken)
    with pytest.raises(CommandError, match="went away"):
        call_command("human_performance", "--study", "nested", "--format", "latex", "--output", str(target))
    assert target.read_text() == "the version in the paper"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.tex"]
