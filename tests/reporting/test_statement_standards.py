"""The statement against the reporting standards (HEDS 3.0, ACL checklist D) and the paper-ready exports:
presentation order, a study that has run with every field filled, the JSON form against its schema,
demographics as suppressed counts, and a LaTeX table from the dashboard that pdflatex compiles."""

import json
import shutil
import subprocess
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.models import Participation, Study, SurveyResponse
from annotation.reporting import analysis_plan
from annotation.reporting.formats import CSV_COLUMNS
from annotation.reporting.heds import ACL_CHECKLIST, HEDS_QUESTIONS
from annotation.reporting.statement import build_statement, render_statement, statement_datasheet
from annotation.services.verdicts import attention
from tests.factories import make_classification_task
from tests.reporting.builders import add_annotator, gold_answers, make_study

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "statement.schema.json").read_text())
SURVEY = [
    {"key": "age", "type": "single", "label": "Age", "options": ["18-29", "30-49", "50+"], "demographic": True},
    {"key": "native", "type": "single", "label": "Native speaker", "options": ["yes", "no"], "demographic": True},
    {"key": "years", "type": "number", "label": "Years of English", "demographic": True},
    {"key": "comment", "type": "text", "label": "Anything to tell us?"},
]


def _sections(study):
    return {s.title: s for s in build_statement(study=study).sections}


def test_a_shuffled_study_says_so_with_the_seed_rule_and_a_fixed_one_says_fixed(sst2):
    shuffled = make_study(sst2, shots=(0,), test_order=Study.TestOrder.SHUFFLED)
    text = _sections(shuffled)["Presentation"].text
    assert "shuffled per worker" in text and "test_seed" in text and "random.Random(seed).shuffle" in text
    fixed = make_study(sst2, shots=(0,), test_order=Study.TestOrder.FIXED)
    text = _sections(fixed)["Presentation"].text
    assert text.startswith("Presentation order: fixed; every worker saw the test items in the test set's order.")
    assert "shuffled" not in text


@pytest.fixture
def run_study(sst2):
    """A study that has run: consent, a survey with demographic questions, an attention check, an ethics
    approval and the platform's rates; five workers in one condition, one in the other."""
    study = make_study(
        sst2,
        shots=(0, 10),
        slug="ran",
        name="Demo: SST-2",
        test_order=Study.TestOrder.SHUFFLED,
        consent_required=True,
        consent_text="\\# Consent\n\nI agree to take part.",
        survey=SURVEY,
        ethics_review=Study.EthicsReview.APPROVED,
        ethics_board="the University Research Ethics Board",
        ethics_reference="REB-2026-017",
        platform_minimum_hourly=Decimal("6.00"),
        platform_recommended_hourly=Decimal("9.00"),
        base_reward=Decimal("2.00"),
        attention_fail_limit=1,
        preregistration="https://osf.io/abcd1",
        ai_instruction="Do not use AI assistants.",
    )
    attention.definitions.generate(study=study, positions=[2])
    analysis_plan.freeze(study)  # the factory's study is open without a launch: freeze as the launch does
    gold = gold_answers(sst2)
    ages = ["18-29", "18-29", "18-29", "30-49", "50+", "18-29"]
    for i, age in enumerate(ages):
        p = add_annotator(study, 0 if i < 5 else 10, answers=gold, platform="inhouse" if i == 5 else "prolific")
        Participation.objects.filter(pk=p.pk).update(consented_at=timezone.now())
        SurveyResponse.objects.create(
            participation=p,
            placement=Study.SurveyPlacement.AFTER_TEST,
            answers={"age": age, "native": "yes", "years": 10 + i},
            submitted_at=timezone.now(),
        )
    return study


def test_a_study_that_ran_fills_every_field_of_the_standards(run_study):
    statement = build_statement(study=run_study)
    data = statement_datasheet(statement)
    jsonschema.validate(data, SCHEMA)
    # Not collected only where this study collected nothing.
    missing = {f["key"] for f in data["fields"] if f["status"] != "filled"}
    assert missing <= {"comprehension_check"}, missing  # the study asked for none
    assert all(f["heds"] or f["acl_checklist"] for f in data["fields"])  # every section is mapped (heds.py)
    for qid in HEDS_QUESTIONS:
        assert data["heds"][qid]["fields"], qid
    assert set(data["acl_checklist"]) == set(ACL_CHECKLIST)
    text = {s.title: s.text for s in statement.sections}
    assert text["Platform"] == "Workers came from Prolific (5 workers) and an in-house pool (1 worker)."
    assert "approved by the University Research Ethics Board (reference REB-2026-017)" in text["Ethics approval"]
    # The check was added after these workers had answered (no check answer is stored): the statement says so
    # rather than "each worker saw all 4 test items and 1 attention check" (issue 40, item 9).
    assert "Each of the 6 workers who reached the test step was given 4 test items, after 10" in text["Sample"]
    assert "the platform's minimum is 6.00 USD/h" in text["Pay adequacy"]
    assert "recommended rate is 9.00 USD/h" in text["Pay adequacy"]
    # Demographics: counts only, cells under 3 suppressed, free text never summarised.
    demo = text["Demographics"]
    assert "Age: 18-29 4, 30-49 fewer than 3, 50+ fewer than 3 (6 answered)" in demo
    assert "Native speaker: yes 6, no 0" in demo and "Years of English: median 12.5 (6 answered)." in demo
    assert "counts below 3" in demo and "Anything to tell us" not in demo
    markdown = render_statement(statement, "markdown")
    assert markdown.startswith("## Human evaluation: SST-2\n")
    assert "(s)" not in markdown and "\\# Consent" not in markdown and "I agree" not in markdown
    assert "inhouse" not in markdown and "/join/" not in markdown  # proper names, no internal slugs
    assert "1 attention check was mixed" not in markdown and "1 item with an answer stated in the item was" in markdown


def test_fields_the_study_did_not_collect_are_marked_not_collected(sst2):
    study = make_study(sst2, shots=(0,))
    data = statement_datasheet(build_statement(study=study))
    jsonschema.validate(data, SCHEMA)
    status = {f["key"]: f["status"] for f in data["fields"]}
    for key in ("ethics_approval", "demographics", "pay_adequacy", "consent", "attention_checks", "survey"):
        assert status[key] == "not collected", key
    assert status["presentation"] == status["sample"] == status["metric"] == "filled"
    texts = {f["key"]: f["text"] for f in data["fields"]}
    assert texts["ethics_approval"] == "Ethics approval: not collected."
    assert "no workers" not in texts["platform"] and texts["platform"] == "No worker has joined yet."


def test_an_exempt_study_is_stated_as_exempt_and_approval_needs_a_board(sst2):
    study = make_study(sst2, shots=(0,), ethics_review=Study.EthicsReview.EXEMPT, ethics_board="the IRB")
    assert _sections(study)["Ethics approval"].text == (
        "Ethics approval: the study was exempt from ethics review, as stated by the IRB."
    )
    study.ethics_review, study.ethics_board = Study.EthicsReview.APPROVED, " "
    with pytest.raises(ValidationError, match="Name the board"):
        study.clean()
    study.ethics_board, study.platform_minimum_hourly = "the IRB", Decimal("-1")
    with pytest.raises(ValidationError, match="not negative"):
        study.clean()


def test_demographic_must_be_true_or_false_in_a_survey_definition(sst2):
    study = make_study(sst2, shots=(0,), survey=[{**SURVEY[0], "demographic": "yes"}])
    with pytest.raises(ValidationError, match="demographic is true or false"):
        study.clean()


def test_the_statement_json_comes_from_the_command_api_and_dashboard(run_study, admin_client, capsys):
    from django.core.management import call_command

    call_command("human_evaluation_statement", "--study", "ran", "--format", "json")
    jsonschema.validate(json.loads(capsys.readouterr().out), SCHEMA)
    make_study(run_study.task, shots=(0,), slug="other")
    call_command("human_evaluation_statement", "--study", "ran", "--study", "other", "--format", "json")
    both = json.loads(capsys.readouterr().out)  # one document: a list of the forms
    assert [d["study"] for d in both] == ["ran", "other"]
    for data in both:
        jsonschema.validate(data, SCHEMA)
    data = admin_client.get("/api/reports/statement/?study=ran").json()
    jsonschema.validate(data["datasheet"], SCHEMA)
    download = admin_client.get("/dashboard/study/ran/statement.json?download=1")
    assert 'filename="ran_human-evaluation.json"' in download["Content-Disposition"]
    jsonschema.validate(json.loads(download.content), SCHEMA)


@pytest.fixture
def admin_client(client, db):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    return client


def _latex_document(table: str) -> str:
    return "\n".join(
        [r"\documentclass{article}", r"\usepackage{booktabs}", r"\begin{document}", table, r"\end{document}", ""]
    )


def test_the_dashboard_latex_export_has_intervals_booktabs_and_a_clean_caption(run_study, admin_client, tmp_path):
    add_annotator(run_study, 10, answers=[], state=Participation.State.TEST)  # still working: live state
    tex = admin_client.get("/dashboard/export/table-latex/?studies=ran").content.decode()
    body = [line for line in tex.splitlines() if not line.startswith("%")]
    assert all(rule in tex for rule in (r"\toprule", r"\midrule", r"\bottomrule")) and r"\hline" not in tex
    spec = next(line for line in body if line.startswith(r"\begin{tabular}"))
    assert "|" not in spec
    assert r"{\scriptsize [" in tex  # each cell's 95% interval, by default
    caption = next(line for line in body if line.startswith(r"\caption"))
    assert "population standard deviation" in caption and "skip policy" in caption and "95\\% CI" in caption
    assert "in progress" not in caption and "sst2" not in caption and "Not averaged" not in caption
    assert "% Note: Not averaged in: sst2-fixture 10-shot: 1 in progress." in tex
    plain = admin_client.get("/dashboard/export/table-latex/?studies=ran&intervals=0").content.decode()
    assert r"{\scriptsize [" not in plain
    assert admin_client.get("/dashboard/export/table-latex/?studies=ran&intervals=maybe").status_code == 400

    statement = admin_client.get("/dashboard/study/ran/statement.latex").content.decode()
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip("pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    for name, text in (("table", tex), ("statement", statement)):
        (tmp_path / f"{name}.tex").write_text(_latex_document(text), encoding="utf-8")
        run = subprocess.run(
            [pdflatex, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout[-3000:]
        assert (tmp_path / f"{name}.pdf").exists()


def test_every_table_csv_column_is_documented():
    docs = (ROOT / "docs" / "reports.md").read_text()
    section = docs.split("### The table CSV", 1)[1].split("\n## ", 1)[0]
    for column in CSV_COLUMNS:
        assert f"`{column}`" in section, column


@pytest.mark.browser
def test_the_appendix_holds_the_texts_workers_saw_and_screenshots_of_their_pages(run_study, tmp_path, capsys):
    from django.core.management import call_command

    from annotation.models import Worker

    run_study.translations = {"de": {"consent_text": "Ich stimme zu.", "survey": {"age": {"label": "Alter"}}}}
    run_study.save()
    before = (Participation.all_objects.count(), Worker.objects.count(), Study.objects.get(pk=run_study.pk).status)
    call_command("study_appendix", "ran", "-o", str(tmp_path / "appendix"))
    out = capsys.readouterr().out
    texts = (tmp_path / "appendix" / "texts.md").read_text()
    assert "## English (en)" in texts and "## Deutsch (de)" in texts
    assert "\\# Consent\n\nI agree to take part." in texts and "Ich stimme zu." in texts  # exactly as stored
    assert "- Age [single] (demographic): 18-29; 30-49; 50+" in texts and "- Alter [single]" in texts
    # The throwaway worker leaves nothing behind.
    after = (Participation.all_objects.count(), Worker.objects.count(), Study.objects.get(pk=run_study.pk).status)
    assert after == before
    if "screenshots skipped" in out:
        pytest.skip(out)
    for language in ("en", "de"):
        for page in ("consent", "start", "training", "reveal", "test"):
            assert (tmp_path / "appendix" / f"{language}-{page}.png").stat().st_size > 1000, (language, page)


def test_the_appendix_refuses_an_unknown_study_and_a_file_as_folder(db, tmp_path):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="unknown study"):
        call_command("study_appendix", "nope")
    (tmp_path / "file").write_text("x")
    make_study(make_classification_task(slug="t"), slug="s", shots=(0,))
    with pytest.raises(CommandError, match="not a folder"):
        call_command("study_appendix", "s", "-o", str(tmp_path / "file"))


def test_an_export_job_keeps_the_interval_switch(run_study, admin_client, django_capture_on_commit_callbacks):
    def latex_of(payload):
        with django_capture_on_commit_callbacks(execute=True):
            response = admin_client.post("/api/reports/exports/", payload, content_type="application/json")
        status = admin_client.get(response.json()["status_url"]).json()
        return b"".join(admin_client.get(status["download_url"]).streaming_content).decode()

    assert r"{\scriptsize [" in latex_of({"kind": "table-latex", "studies": ["ran"]})
    assert r"{\scriptsize [" not in latex_of({"kind": "table-latex", "studies": ["ran"], "intervals": False})


def test_the_alpha_interval_resamples_items_and_agrees_with_the_package_on_the_sample():
    import krippendorff
    import numpy as np

    from annotation.reporting.agreement import alpha_of_coincidences, coded, item_coincidences
    from annotation.reporting.alpha import alpha_interval

    ratings = {
        "a": {1: "x", 2: "y", 3: "x", 4: "y", 5: "x", 6: "x"},
        "b": {1: "x", 2: "y", 3: "y", 4: "y", 5: "x"},
        "c": {1: "x", 2: "x", 3: "y", 4: "y", 6: "x"},
    }
    whole = alpha_of_coincidences(sum(item_coincidences(coded(ratings)).values())[None])[0]
    # The package, given the coder × unit matrix (x = 0, y = 1, missing NaN), is the independent reckoning.
    matrix = [[{"x": 0, "y": 1}.get(units.get(u), np.nan) for u in range(1, 7)] for units in ratings.values()]
    assert whole == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    spans = {c: {(item, 0): v for item, v in units.items()} for c, units in ratings.items()}  # (item, token)
    assert alpha_of_coincidences(sum(item_coincidences(coded(spans)).values())[None])[0] == pytest.approx(whole)
    interval = alpha_interval(coded(ratings))
    assert interval is not None and interval.low <= whole <= interval.high and np.isfinite(interval.high)
    assert alpha_interval(coded({"a": {1: "x"}, "b": {1: "x"}})) is None  # one item, one value: nothing to resample


def test_the_statement_gives_alpha_with_its_interval(sst2):
    study = make_study(sst2, shots=(0,))
    gold = gold_answers(sst2)
    for flip in (None, 1, 2):
        answers = [g if i != flip else ([x for x in ("positive", "negative") if [x] != g]) for i, g in enumerate(gold)]
        add_annotator(study, 0, answers=answers)
    text = _sections(study)["Agreement"].text
    assert "alpha over all conditions together" in text and "[95% CI " in text and "test items" in text


def test_the_ethics_part_states_the_retention_of_identifiers_and_when_it_ends(sst2, settings):
    settings.IDENTIFIER_RETENTION_DAYS = 30
    study = make_study(sst2, shots=(0,))
    section = _sections(study)["Data retention"]
    assert "identifiers are kept for 30 days after the study is closed" in section.text
    assert "IDENTIFIER_RETENTION_DAYS" in section.text and "due for replacement" not in section.text
    study.status = Study.Status.CLOSED
    study.save(update_fields=["status"])
    due = (study.created_at + timedelta(days=30)).date()  # nothing happened to it: created_at
    assert f"due for replacement on {due:%Y-%m-%d}" in _sections(study)["Data retention"].text
    markdown = render_statement(build_statement(study=study), "markdown")
    ethics = markdown.split("### Consent and ethics", 1)[1].split("\n### ", 1)[0]
    assert "kept for 30 days" in ethics
