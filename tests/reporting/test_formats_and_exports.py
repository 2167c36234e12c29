"""Table formats (well-formed, parse back), raw annotations JSONL, payments CSV, plots, headers."""

import csv
import io
import json
import re
import zipfile

import pytest

from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.exports import export_to_bytes, export_with_provenance, iter_annotation_lines, payments_csv
from annotation.reporting.formats import TABLE_FORMATS, table_csv, table_json, table_latex, table_markdown
from annotation.reporting.options import MetricOptions
from annotation.reporting.plots import all_tasks_plot, task_plot
from annotation.reporting.provenance import example_set_sha256, reproducibility_header
from annotation.reporting.tables import build_table
from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong


@pytest.fixture
def studies(sst2):
    """SST-2: 0-shot 75.0 ± 20.4 (three annotators), 10-shot 100.0 ± 0.0; NER: 0-shot one annotator 100."""
    cls = make_study(sst2, shots=(0, 10), slug="sst2-study")
    gold = gold_answers(sst2)
    for n in (4, 3, 2):
        add_annotator(cls, 0, answers=[g if i < n else wrong(g, sst2) for i, g in enumerate(gold)])
    add_annotator(cls, 10, answers=gold)
    add_annotator(cls, 10, answers=[wrong(g, sst2) for g in gold], state="excluded", worker_id="w_{ex}")
    ner = make_span_task(slug="ner_&_co", n_test=2)
    ner.name = "NER_&_Co{x}"
    ner.save()
    span = make_study(ner, shots=(0,), slug="ner-study")
    add_annotator(span, 0, answers=[[(0, 12), (17, 32)], []], worker_id="w-span")
    return [cls, span]


def _header(studies, kind="test"):
    return reproducibility_header(studies=studies, options=MetricOptions(), export=kind)


def test_csv_parses_back_to_the_cells(studies):
    text = table_csv(build_table(studies=studies), _header(studies))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert "row" not in rows[0]  # one column per fact: the shot level is "shots"
    cells = {(r["shots"], r["task"]): r for r in rows if r["source"] == "humans"}
    assert {r["model"] for r in rows if r["source"] == "humans"} == {""}
    assert cells[("0", "SST-2")]["cell"] == "75.0 ± 20.4"
    assert float(cells[("0", "SST-2")]["mean"]) == pytest.approx(75.0)
    assert cells[("10", "SST-2")]["cell"] == "100.0 ± 0.0"
    assert cells[("10", "NER_&_Co{x}")]["mean"] == "" and cells[("10", "NER_&_Co{x}")]["n"] == "0"
    assert len(rows) == 4 * 2


def test_json_has_meta_and_missing_cells_as_null(studies):
    data = json.loads(table_json(build_table(studies=studies), _header(studies)))
    assert data["meta"]["app_version"] and data["meta"]["metric_options"] == {"skip_policy": "zero", "ddof": 0}
    zero = data["table"]["rows"][0]["cells"]
    assert zero["sst2-fixture"]["text"] == "75.0 ± 20.4"
    assert data["table"]["rows"][2]["cells"]["sst2-fixture"]["mean"] is None
    assert "population standard deviation" in data["table"]["note"]


def _strip_escaped_braces(text):
    return text.replace(r"\{", "").replace(r"\}", "")


def test_latex_is_well_formed(studies):
    table = build_table(studies=studies)
    tex = table_latex(table, _header(studies))
    body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    depth = 0
    for ch in _strip_escaped_braces(body):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    columns = 1 + len(table.tasks)
    spec = re.search(r"\\begin\{tabular\}\{([^}]*)\}", tex).group(1)
    assert spec.replace("|", "") == "l" + "c" * len(table.tasks)
    rows = [line for line in body.splitlines() if line.endswith(r"\\") and "multicolumn" not in line]
    # The header, 4 shot rows, and under each row with an interval its intervals' line (two here).
    assert len(rows) == 1 + 4 + 2
    assert [r.split(" & ")[0] for r in rows if r.startswith(" & ")] == ["", ""]
    for line in rows:
        assert len(re.findall(r"(?<!\\)&", line)) == columns - 1, line
    assert r"NER\_\&\_Co\{x\}" in tex
    assert r"75.0 $\pm$ 20.4" in tex and " -- " in tex
    assert r"\begin{table}" in tex and r"\end{table}" in tex
    assert "population standard deviation" in tex
    assert tex.startswith("% export:")
    assert "Not averaged in: sst2-fixture 10-shot: 1 excluded" in tex


def test_markdown_is_a_consistent_pipe_table(studies):
    md = table_markdown(build_table(studies=studies), _header(studies))
    lines = [line for line in md.splitlines() if line.startswith("|")]
    counts = {len(re.findall(r"(?<!\\)\|", line)) for line in lines}
    assert counts == {2 + 2}  # 3 columns
    assert re.fullmatch(r"\|(:?-+:?\|)+", lines[1])
    assert "| 0 | 75.0 ± 20.4 [25.0, 100.0] | 100.0 ± 0.0 [100.0, 100.0] |" in lines  # intervals by default
    plain = table_markdown(build_table(studies=studies, intervals=IntervalOptions(in_text=False)), _header(studies))
    assert "| 0 | 75.0 ± 20.4 | 100.0 ± 0.0 |" in plain.splitlines()  # the switch turns them off
    assert "| 20 | – | – |" in lines
    assert md.startswith("<!--") and "app_version" in md
    assert "population standard deviation" in md
    assert "_Not averaged in: sst2-fixture 10-shot: 1 excluded._" in md


def test_annotations_jsonl_round_trips_with_spans_and_offsets(studies):
    lines = list(iter_annotation_lines(studies=studies[1:], options=MetricOptions(), chunk_size=1))
    meta = json.loads(lines[0])["meta"]
    assert meta["export"] == "annotations-jsonl"
    records = [json.loads(line) for line in lines[1:]]
    assert len(records) == 2
    first = records[0]
    assert (first["worker_id"], first["platform"], first["condition_shots"], first["phase"]) == (
        "w-span",
        "prolific",
        0,
        "test",
    )
    assert first["spans"] == [
        {"start": 0, "end": 12, "text": "Ada Lovelace"},
        {"start": 17, "end": 32, "text": "Charles Babbage"},
    ]
    assert first["answer"] == ["Ada Lovelace", "Charles Babbage"] and first["score"] == 1.0
    assert records[1]["status"] == "no_answer" and records[1]["spans"] == [] and records[1]["skipped"] is False
    for key in ("item_id", "label", "confidence", "shown_at", "submitted_at", "revealed_at", "active_ms"):
        assert key in first


def test_payments_csv_lists_platform_worker_minutes_and_amount(studies):
    text = payments_csv(studies=studies[:1], options=MetricOptions())
    assert text.startswith("platform,worker_id,")  # a plain header-first table
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 5
    assert rows[-1]["state"] == "excluded" and rows[-1]["amount"] == "6.00"
    assert rows[0]["platform"] == "prolific" and rows[0]["minutes"] == "30.00" and rows[0]["amount"] == "6.00"


def test_every_export_carries_the_reproducibility_header(studies):
    header = _header(studies)
    config = header["studies"][0]
    assert config["task_data_sha256"] and len(config["task_data_sha256"]) == 64
    ten = next(c for c in config["conditions"] if c["shots"] == 10)
    assert ten["training_set_sha256"] == example_set_sha256(studies[0].conditions.get(shots=10).training_set)
    for kind in ("table-json", "table-markdown", "table-latex", "annotations-jsonl", "analyses-json"):
        text = export_to_bytes(kind=kind, studies=studies, options=MetricOptions()).decode()
        assert "app_version" in text and "task_data_sha256" in text and "metric_options" in text, kind
    for kind in ("table-csv", "payments-csv"):  # plain tables: the header is their sidecar
        content, provenance = export_with_provenance(kind=kind, studies=studies, options=MetricOptions())
        assert b"app_version" not in content
        assert provenance["app_version"] and provenance["studies"][0]["task_data_sha256"], kind


def test_the_task_data_hash_changes_when_an_example_changes(studies):
    test_set = studies[0].task.example_sets.get(role="test")
    before = example_set_sha256(test_set)
    example = test_set.ordered_examples().first()
    example.gold_answers = ["negative", "positive"]
    example.save()
    assert example_set_sha256(test_set) != before
    assert example_set_sha256(test_set) == example_set_sha256(test_set)


def test_plots_are_non_empty_png_and_svg(studies):
    table = build_table(studies=studies)
    png = all_tasks_plot(table, "png")
    assert png.startswith(b"\x89PNG") and len(png) > 1000
    svg = task_plot(table, 0, "svg")
    assert b"<svg" in svg and len(svg) > 1000


def test_plot_exports_carry_the_header_and_the_zip_holds_every_plot(studies):
    png = export_to_bytes(kind="plot-png", studies=studies, options=MetricOptions())
    assert png.startswith(b"\x89PNG") and b"task_data_sha256" in png
    svg = export_to_bytes(kind="plot-svg", studies=studies, options=MetricOptions()).decode()
    assert "<svg" in svg and "task_data_sha256" in svg
    archive = zipfile.ZipFile(io.BytesIO(export_to_bytes(kind="plots-zip", studies=studies, options=MetricOptions())))
    names = sorted(archive.namelist())
    assert names == sorted(
        ["README.json"] + [f"s1_vs_shots_{s}.{f}" for s in ("sst2-fixture", "ner_&_co", "all") for f in ("png", "svg")]
    )
    assert json.loads(archive.read("README.json"))["app_version"]
    assert all(len(archive.read(n)) > 1000 for n in names if n != "README.json")


def test_latex_body_is_plain_ascii_so_it_compiles_without_a_unicode_setup(studies):
    tex = table_latex(build_table(studies=studies), _header(studies))
    body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    assert body.isascii(), [ch for ch in body if not ch.isascii()]
    assert r"mean $\pm$ population standard deviation" in body


def test_with_skips_excluded_markdown_and_latex_print_the_coverage_of_every_cell(sst2):
    study = make_study(sst2, shots=(0,), slug="skips")
    gold = gold_answers(sst2)
    add_annotator(study, 0, answers=[gold[0], gold[1], None, wrong(gold[3], sst2)])  # coverage 3/4
    add_annotator(study, 0, answers=gold)  # coverage 4/4 -> mean 87.5%
    table = build_table(studies=[study], options=MetricOptions(skip_policy="exclude"))
    header = reproducibility_header(studies=[study], options=MetricOptions(skip_policy="exclude"), export="t")
    md = table_markdown(table, header)
    assert "| 0 | 87.5% |" in md and "| 10 | – |" in md
    pipe_lines = [line for line in md.splitlines() if line.startswith("|")]
    assert {len(re.findall(r"(?<!\\)\|", line)) for line in pipe_lines} == {3}
    tex = table_latex(table, header)
    assert r"0 & 87.5\% \\" in tex and r"\multicolumn{2}{l}{Coverage (\% of test items answered)} \\" in tex
    assert "87.5%" not in table_markdown(build_table(studies=[study]), _header([study]))  # default: no coverage


def test_a_header_value_cannot_close_the_markdown_comment(studies):
    studies[0].name = "evil --> name"
    studies[0].save()
    md = table_markdown(build_table(studies=studies), _header(studies))
    comment = md[: md.index("\n-->\n")]
    assert "-->" not in comment[4:]
    line = next(line for line in comment.splitlines() if line.startswith("studies: "))
    assert json.loads(line.removeprefix("studies: "))[0]["name"] == "evil --> name"


def test_a_plot_without_any_completed_annotator_says_so(sst2):
    study = make_study(sst2, shots=(0, 10), slug="empty-plot")
    svg = all_tasks_plot(build_table(studies=[study]), "svg").decode()
    assert "no completed annotators yet" in svg


@pytest.mark.parametrize("policy", ["zero", "empty", "exclude"])
def test_every_format_plot_and_export_states_the_skip_policy(sst2, policy):
    study = make_study(sst2, shots=(0,), slug="policy")
    gold = gold_answers(sst2)
    add_annotator(study, 0, answers=[gold[0], None, gold[2], gold[3]])
    options = MetricOptions(skip_policy=policy)
    table = build_table(studies=[study], options=options)
    header = reproducibility_header(studies=[study], options=options, export="t")
    assert header["metric_options"]["skip_policy"] == policy
    for name, (render, _mime, _ext) in TABLE_FORMATS.items():
        if name == "csv":  # a plain table: the policy is in its provenance sidecar
            provenance = export_with_provenance(kind="table-csv", studies=[study], options=options)[1]
            assert any(f"skip policy {policy!r}" in note for note in provenance["notes"])
            continue
        assert f"skip policy {policy!r}" in render(table, header).replace("\\'", "'")
    svg = all_tasks_plot(table, fmt="svg", header=header).decode()
    assert f"skip policy {policy!r}".replace("'", "&#39;") in svg or f"skip policy {policy!r}" in svg
    lines = [json.loads(line) for line in iter_annotation_lines(studies=[study], options=options)]
    assert lines[0]["meta"]["metric_options"]["skip_policy"] == policy
    skipped = next(r for r in lines[1:] if r["skipped"])
    assert (skipped["score"], skipped["policy_score"]) == (0.0, {"zero": 0.0, "empty": 0.0, "exclude": None}[policy])
