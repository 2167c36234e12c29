"""Intervals, model gaps, alpha and Spearman where users meet them: table, formats, plots, statement, API, pages."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from annotation.reporting.bootstrap import IntervalOptions, cell_interval
from annotation.reporting.exports import export_to_bytes
from annotation.reporting.options import MetricOptions
from annotation.reporting.plots import _model_series, task_plot
from annotation.reporting.predictions import model_run_create
from annotation.reporting.statement import build_statement, consent_facts, render_statement
from annotation.reporting.tables import build_table
from tests.reporting.builders import add_annotator, gold_answers, items_of, make_study

POS, NEG = ["positive"], ["negative"]


@pytest.fixture
def voted(sst2):
    """Gold pos, neg, pos, neg; item S1 per annotator (1,0,0,0), (1,0,0,1), (1,1,0,1)."""
    study = make_study(sst2, shots=(0,), slug="voted")
    add_annotator(study, 0, answers=[POS, POS, NEG, POS], confidence=5)
    add_annotator(study, 0, answers=[POS, POS, NEG, NEG], confidence=3)
    add_annotator(study, 0, answers=[POS, NEG, NEG, NEG], confidence=1)
    return study


def _ids(task):
    return [e.pk for e in items_of(task)]


def _matrix(task, rows):
    return {a: dict(zip(_ids(task), row, strict=True)) for a, row in enumerate(rows)}


def test_each_cell_carries_the_bootstrap_interval_of_its_item_scores(voted, sst2):
    table = build_table(studies=[voted])
    cell = table.rows[0].cells[0]
    expected = cell_interval(_matrix(sst2, [[1, 0, 0, 0], [1, 0, 0, 1], [1, 1, 0, 1]]))
    assert (cell.ci_low, cell.ci_high) == pytest.approx((expected.low * 100, expected.high * 100))
    assert cell.ci_low <= cell.mean <= cell.ci_high
    assert table.intervals == IntervalOptions()
    assert "seed 20211206" in table.interval_note and "2000 resamples" in table.interval_note


def test_the_skip_policy_flows_into_the_interval(sst2):
    study = make_study(sst2, shots=(0,))
    add_annotator(study, 0, answers=[POS, None, POS, NEG])  # a skip on item 2 (gold negative): 0 or left out
    add_annotator(study, 0, answers=[POS, NEG, NEG, NEG])
    kept = build_table(studies=[study]).rows[0].cells[0]
    left_out = build_table(studies=[study], options=MetricOptions(skip_policy="exclude")).rows[0].cells[0]
    nan = float("nan")
    assert (kept.ci_low, kept.ci_high) == pytest.approx(
        tuple(v * 100 for v in _interval(sst2, [[1, 0, 1, 1], [1, 1, 0, 1]]))
    )
    assert (left_out.ci_low, left_out.ci_high) == pytest.approx(
        tuple(v * 100 for v in _interval(sst2, [[1, nan, 1, 1], [1, 1, 0, 1]]))
    )


def _interval(task, rows):
    scores = {a: {k: v for k, v in by_item.items() if v == v} for a, by_item in _matrix(task, rows).items()}
    interval = cell_interval(scores)
    return interval.low, interval.high


def test_model_gap_is_human_cell_minus_model_with_a_paired_interval(voted, sst2):
    ids = [e.source_id for e in items_of(sst2)]
    gold = gold_answers(sst2)
    model_run_create(task=sst2, name="all-positive", shots=0, content=json.dumps({i: POS for i in ids}))
    model_run_create(
        task=sst2, name="at-10", shots=10, content=json.dumps({i: g for i, g in zip(ids, gold, strict=True)})
    )
    table = build_table(studies=[voted])
    # humans 50.0 (annotators 25 / 50 / 75); all-positive scores 1, 0, 1, 0 -> 50.0; gap 0.
    (gap,) = table.gaps  # the 10-shot run has no 10-shot humans to compare with
    assert (gap["model"], gap["human_shots"], gap["human"], gap["model_s1"], gap["gap"]) == (
        "all-positive (0-shot)",
        0,
        50.0,
        50.0,
        0.0,
    )
    assert gap["ci_low"] <= 0 <= gap["ci_high"] and gap["items"] == 4
    assert table.as_dict()["model_gaps"] == table.gaps


def test_json_and_csv_carry_intervals_and_markdown_latex_by_default_with_a_switch(voted):
    data = json.loads(export_to_bytes(kind="table-json", studies=[voted], options=MetricOptions()))
    cell = data["table"]["rows"][0]["cells"]["sst2-fixture"]
    assert cell["ci_low"] is not None and cell["ci_high"] is not None
    assert data["table"]["intervals"]["seed"] == 20211206 and data["meta"]["intervals"]["resamples"] == 2000
    text = export_to_bytes(kind="table-csv", studies=[voted], options=MetricOptions()).decode()
    rows = list(csv.DictReader(io.StringIO("\n".join(line for line in text.splitlines() if not line.startswith("#")))))
    assert rows[0]["ci_low"] and rows[0]["ci_high"]
    plain = export_to_bytes(
        kind="table-markdown", studies=[voted], options=MetricOptions(), intervals=IntervalOptions(in_text=False)
    ).decode()
    shown = export_to_bytes(kind="table-markdown", studies=[voted], options=MetricOptions()).decode()
    assert "CI" not in plain and "| 50.0 ± 20.4 [" in shown and "seed 20211206" in shown
    latex = export_to_bytes(kind="table-latex", studies=[voted], options=MetricOptions()).decode()
    assert r"{\scriptsize [" in latex and "95\\% CI" in latex


def test_the_command_takes_seed_resamples_and_intervals(voted, capsys):
    call_command("human_performance", "--study", "voted", "--format", "markdown", "--intervals", "--seed", "7")
    out = capsys.readouterr().out
    assert "seed 7" in out and "2000 resamples" in out
    call_command("human_performance", "--study", "voted", "--format", "markdown")
    assert "| 50.0 ± 20.4 [" in capsys.readouterr().out  # on by default
    call_command("human_performance", "--study", "voted", "--format", "latex", "--no-intervals")
    assert r"{\scriptsize [" not in capsys.readouterr().out
    with pytest.raises(CommandError, match="resamples"):
        call_command("human_performance", "--study", "voted", "--resamples", "5")


def test_learning_curve_draws_model_rows_beside_the_humans(voted, sst2):
    ids = [e.source_id for e in items_of(sst2)]
    model_run_create(task=sst2, name="bert", shots=0, content=json.dumps({i: POS for i in ids}))
    model_run_create(task=sst2, name="bert", shots=10, content=json.dumps({i: POS for i in ids}))
    model_run_create(task=sst2, name="zero", content=json.dumps({i: NEG for i in ids}))
    table = build_table(studies=[voted])
    assert [r.model for r in table.model_rows()] == ["bert", "bert", "zero"]  # one curve per model name
    series = _model_series(table, 0)
    assert series == {"bert": [(0, 50.0), (10, 50.0)], "zero": [(None, 50.0)]}
    svg = task_plot(table, 0, "svg").decode()
    assert "zero (no shot level)" in svg and "bootstrap CI" in svg and "bert (10-shot)" not in svg


def test_statement_holds_every_section_from_stored_facts(voted):
    statement = build_statement(study=voted)
    titles = [s.title for s in statement.sections]
    assert titles == [
        "Platform",
        "Workers",
        "Recruitment",
        "Sample",
        "Presentation",
        "Consent",
        "Ethics approval",
        "Data retention",
        "Instructions",
        "Training and filter",
        "Abandonment",
        "Comprehension check",
        "Attention checks",
        "Integrity",
        "AI tools",
        "Survey",
        "Demographics",
        "Time",
        "Pay",
        "Pay adequacy",
        "Metric",
        "Agreement",
        "Best individual, mean and majority",
        "Robustness to the exclusion rules",
        "Pre-registration",
        "Appendix",
    ]
    text = {s.title: s.text for s in statement.sections}
    assert text["Platform"] == "Workers came from Prolific (3 workers)."
    assert "0-shot: 3 completed, 0 excluded, 0 abandoned" in text["Workers"]
    assert text["Consent"] == "Consent: no consent page was shown in the tool."
    assert "Median time of a completed worker: 0.1 min active on the test step, 30.0 min" in text["Time"]
    assert "seed 20211206" in text["Metric"]
    assert statement.rows[0][:4] == ["0", "3", "0", "0"]
    assert statement.rows[0][5:] == ["0.333", "0.389"]  # Fleiss' kappa 1/3, alpha 28/72
    markdown = render_statement(statement, "markdown")
    assert markdown.startswith("## Human evaluation:") and "| Shots | Completed |" in markdown
    latex = render_statement(statement, "latex")
    assert r"\subsection*{Human evaluation:" in latex and r"\paragraph{Participants.}" in latex
    assert r"\begin{tabular}" in latex


def test_consent_facts_read_the_study_consent_text_and_the_answers(voted):
    voted.consent_required, voted.consent_text = True, "I agree to take part."
    text = consent_facts(voted)
    assert text.startswith("Workers gave informed consent before any task (0 agreed, 0 declined;")
    assert text.endswith("on a consent page whose text is in the appendix, in each language it exists in.")
    assert "I agree" not in text  # the text itself goes to the appendix, never pasted raw


def test_statement_command_writes_markdown_and_latex_and_refuses_unknown_studies(voted, capsys, tmp_path):
    call_command("human_evaluation_statement", "--study", "voted")
    assert "## Human evaluation" in capsys.readouterr().out
    target = tmp_path / "he.tex"
    call_command("human_evaluation_statement", "--study", "voted", "--format", "latex", "-o", str(target))
    assert r"\paragraph" in target.read_text()
    with pytest.raises(CommandError, match="unknown study"):
        call_command("human_evaluation_statement", "--study", "nope")


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    return client


def test_statement_api_and_its_errors(admin_client, voted):
    data = admin_client.get("/api/reports/statement/?study=voted&markup=latex").json()
    assert data["study"] == "voted" and data["markup"] == "latex" and r"\paragraph" in data["text"]
    assert data["rows"][0][0] == "0"
    for query in ("study=nope", "study=voted&markup=html", "study=voted&seed=x", "study=voted&resamples=1"):
        response = admin_client.get(f"/api/reports/statement/?{query}")
        assert response.status_code == 400, query
        assert response.json()["error"]


def test_table_api_takes_the_seed_and_refuses_a_bad_one(admin_client, voted):
    data = admin_client.get("/api/reports/table/?studies=voted&seed=3&resamples=500").json()
    assert data["intervals"]["seed"] == 3 and data["intervals"]["resamples"] == 500
    assert admin_client.get("/api/reports/table/?studies=voted&seed=-1").status_code == 400


def test_study_page_shows_alpha_spearman_intervals_and_the_statement_links(admin_client, voted):
    page = admin_client.get("/dashboard/study/voted/").content.decode()
    assert "Krippendorff" in page and "Spearman ρ = -0.4082" in page
    assert 'class="ci"' in page
    assert "/dashboard/study/voted/statement.markdown" in page and "statement.latex" in page
    shown = admin_client.get("/dashboard/study/voted/statement.markdown")
    assert shown["Content-Type"].startswith("text/plain") and "## Human evaluation" in shown.content.decode()
    download = admin_client.get("/dashboard/study/voted/statement.latex?download=1")
    assert 'filename="voted_human-evaluation.tex"' in download["Content-Disposition"]
    assert admin_client.get("/dashboard/study/voted/statement.html").status_code == 404


def test_statement_training_section_counts_filter_exclusions(sst2):
    from django.utils import timezone

    from annotation.models import FilterDecision
    from annotation.reporting.statement import training_facts
    from annotation.reporting.tables import build_table as table_of

    study = make_study(sst2, shots=(0, 10), filter_rule="absolute", filter_threshold=0.5)
    add_annotator(study, 10, answers=gold_answers(sst2))
    failed = add_annotator(study, 10, answers=[], state="excluded")
    FilterDecision.objects.create(
        participation=failed,
        training_s1=0.2,
        rule="absolute",
        threshold=0.5,
        passed=False,
        reason="low",
        at=timezone.now(),
    )
    text = training_facts(study, table_of(studies=[study], include_models=False))
    assert "In training (10 examples by condition)" in text
    assert "below 0.50 were excluded" in text
    assert "Excluded: 1 worker in all (1 failed the training filter)" in text


def test_statement_describes_the_group_rule_and_counts_only_standing_filter_failures(sst2):
    from django.utils import timezone

    from annotation.models import FilterDecision, Participation
    from annotation.reporting.statement import training_facts
    from annotation.reporting.tables import build_table as table_of

    study = make_study(
        sst2,
        shots=(0, 10),
        filter_rule="relative",
        filter_threshold=0.2,
        filter_reference="median",
        workers_per_condition=3,
    )
    add_annotator(study, 10, answers=gold_answers(sst2))
    failed = add_annotator(study, 10, answers=[], state="excluded")
    readmitted = add_annotator(study, 10, answers=gold_answers(sst2))
    preview = add_annotator(study, 10, answers=[], state="excluded")
    Participation.all_objects.filter(pk=preview.pk).update(is_preview=True, slot_index=None)
    by_admin = add_annotator(study, 10, answers=[], state="excluded")

    def decide(p, *, passed, override=False, minutes=0):
        FilterDecision.objects.create(
            participation=p,
            training_s1=0.1,
            rule="relative",
            threshold=0.2,
            passed=passed,
            is_override=override,
            reason="x",
            at=timezone.now() + timezone.timedelta(minutes=minutes),
        )

    decide(failed, passed=False)
    decide(readmitted, passed=False)
    decide(readmitted, passed=True, override=True, minutes=5)  # an admin overrode the verdict
    decide(preview, passed=False)  # a staff preview is no worker of the study
    decide(by_admin, passed=False, override=True)  # an admin's exclusion, not the filter's
    text = training_facts(study, table_of(studies=[study], include_models=False))
    assert "(1 failed the training filter)" in text
    assert "other workers so far" not in text
    assert (
        "more than 0.20 below the median training S1 of the other workers of their condition who finished "
        "training (whether or not they were excluded later)"
    ) in text
    assert "once the condition's 3 workers had trained" in text and "never with fewer than two" in text


def test_the_interval_methods_are_recorded_and_shown_under_the_figures(admin_client, voted):
    data = admin_client.get("/api/reports/table/?studies=voted&resamples=500").json()
    assert "annotators and test items resampled" in data["intervals"]["gap_method"]
    page = admin_client.get("/dashboard/study/voted/").content.decode()
    assert "two-way clustered percentile bootstrap" in page
