"""The analysis plan: frozen and hashed when a study opens for its full launch (through the one status-change
path), kept immutable by the database, and compared with the analysis each statement and export runs; the
pre-registration reference beside it."""

import hashlib
import json
from io import StringIO
from pathlib import Path

import jsonschema
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, transaction

from annotation.models import AnalysisPlan, Participation, Study
from annotation.reporting import analysis_plan
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.options import MetricOptions
from annotation.reporting.provenance import reproducibility_header
from annotation.reporting.release import build_release
from annotation.reporting.statement import build_statement, render_statement, statement_datasheet
from annotation.services.studies import studies
from annotation.services.verdicts import attention
from tests.reporting.builders import add_annotator, gold_answers, make_study

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "statement.schema.json").read_text())


@pytest.fixture
def draft(sst2):
    return make_study(
        sst2,
        shots=(0, 10),
        slug="planned",
        status=Study.Status.DRAFT,
        filter_rule=Study.FilterRule.ABSOLUTE,
        filter_threshold=0.5,
        workers_per_condition=2,
    )


def _launched(study: Study) -> Study:
    return studies.change_status(study=study, to_status=Study.Status.OPEN)


def _ran(study: Study) -> Study:
    gold = gold_answers(study.task)
    for shots in (0, 10):
        add_annotator(study, shots, answers=gold)
    return Study.objects.get(pk=study.pk)


def test_a_draft_has_no_plan_and_the_statement_says_none_was_frozen(draft):
    statement = build_statement(study=draft)
    section = {s.title: s for s in statement.sections}["Pre-registration"]
    assert not section.collected
    assert "No analysis plan was frozen: the study has not opened for its full launch" in section.text
    assert "Pre-registration: none recorded" in section.text
    data = statement_datasheet(statement)
    jsonschema.validate(data, SCHEMA)
    assert data["analysis_plan"]["matches"] is None and data["analysis_plan"]["sha256"] is None
    item = {a.number: a for a in statement.checklist}["1.10"]
    assert item.answer.startswith("No: no public pre-registration recorded; no analysis plan frozen")


def test_opening_freezes_the_plan_once_canonical_and_hashed(draft):
    assert not AnalysisPlan.objects.exists()
    _launched(draft)
    plan = AnalysisPlan.objects.get(study=draft)
    # The hash and the canonical form, computed here with hashlib and json, not with the code's helpers.
    assert plan.sha256 == hashlib.sha256(plan.canonical.encode("utf-8")).hexdigest()
    parsed = json.loads(plan.canonical)
    assert plan.canonical == json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert parsed["exclusion_rules"]["training_filter"] == {
        "rule": "absolute",
        "threshold": 0.5,
        "reference": "mean",
        "group_timeout_minutes": 120,
        "rule_version": 2,
    }
    assert parsed["planned_sample"]["workers_per_condition"] == 2
    assert [c["shots"] for c in parsed["planned_sample"]["conditions"]] == [0, 10]
    assert parsed["metric"]["options"] == {"skip_policy": "zero", "ddof": 0}
    # Pausing and opening again is no new launch: the plan stays as frozen.
    studies.change_status(study=draft, to_status=Study.Status.PAUSED)
    _launched(draft)
    assert list(AnalysisPlan.objects.values_list("pk", "sha256")) == [(plan.pk, plan.sha256)]


def test_the_database_refuses_to_change_a_frozen_plan(draft):
    _launched(draft)
    plan = AnalysisPlan.objects.get(study=draft)
    with pytest.raises(DatabaseError, match="frozen"), transaction.atomic():
        AnalysisPlan.objects.filter(pk=plan.pk).update(sha256="0" * 64)
    with pytest.raises(DatabaseError, match="frozen"), transaction.atomic():
        plan.canonical = "{}"
        plan.save()
    assert (
        AnalysisPlan.objects.get(pk=plan.pk).sha256
        == hashlib.sha256(AnalysisPlan.objects.get(pk=plan.pk).canonical.encode()).hexdigest()
    )


def test_the_analysis_run_as_planned_is_a_provenance_match(draft, tmp_path):
    _launched(draft)
    study = _ran(draft)
    statement = build_statement(study=study)
    plan = AnalysisPlan.objects.get(study=study)
    text = {s.title: s.text for s in statement.sections}["Pre-registration"]
    assert f"SHA-256 {plan.sha256}" in text and "matches it (provenance match)" in text
    data = statement_datasheet(statement)
    jsonschema.validate(data, SCHEMA)
    assert data["analysis_plan"]["matches"] is True and data["analysis_plan"]["run_sha256"] == plan.sha256
    assert "### Pre-registration and analysis plan" in render_statement(statement, "markdown")
    header = reproducibility_header(studies=[study], options=MetricOptions(), export="table")
    assert header["studies"][0]["analysis_plan"]["matches"] is True


def test_a_rule_edited_after_the_launch_is_a_deviation_named_with_both_values(draft):
    _launched(draft)
    study = _ran(draft)
    studies.study_update(study=study, filter_threshold=0.7)
    attention.definitions.generate(study=study, positions=[1])
    statement = build_statement(study=Study.objects.get(pk=study.pk))
    text = {s.title: s.text for s in statement.sections}["Pre-registration"]
    assert "differs from it in 2 parts (provenance mismatch" in text
    assert "exclusion_rules.training_filter.threshold (plan 0.5, run 0.7)" in text
    assert "exclusion_rules.attention.checks (plan [], run [{" in text
    data = statement_datasheet(statement)
    jsonschema.validate(data, SCHEMA)
    assert data["analysis_plan"]["matches"] is False
    assert [d["part"] for d in data["analysis_plan"]["differences"]] == [
        "exclusion_rules.attention.checks",
        "exclusion_rules.training_filter.threshold",
    ]
    item = {a.number: a for a in statement.checklist}["1.10"]
    assert "differs from the reported analysis in 2 parts" in item.answer
    assert "exclusion_rules.training_filter.threshold" in item.answer
    # The plan itself is as frozen.
    frozen = json.loads(AnalysisPlan.objects.get(study=study).canonical)
    assert frozen["exclusion_rules"]["training_filter"]["threshold"] == 0.5


def test_other_metric_options_or_intervals_than_planned_are_deviations(draft):
    _launched(draft)
    study = _ran(draft)
    check = analysis_plan.plan_check(study, MetricOptions(skip_policy="exclude"), IntervalOptions(resamples=500))
    assert check.matches is False
    assert {d.part: (d.planned, d.run) for d in check.differences} == {
        "metric.options.skip_policy": ("zero", "exclude"),
        "metric.intervals.resamples": (2000, 500),  # 2000: the default the launch froze
    }
    # An export's header does not say its intervals: they are not compared there.
    header = reproducibility_header(studies=[study], options=MetricOptions(ddof=1), export="table")
    assert [d["part"] for d in header["studies"][0]["analysis_plan"]["differences"]] == ["metric.options.ddof"]


def test_the_pre_registration_is_set_by_the_command_and_shown_in_the_statement_and_checklist(draft):
    call_command("configure_study", draft.slug, "--preregistration", " https://osf.io/abcd1 ", stderr=StringIO())
    _launched(Study.objects.get(pk=draft.pk))
    statement = build_statement(study=Study.objects.get(pk=draft.pk))
    text = {s.title: s.text for s in statement.sections}["Pre-registration"]
    assert text.startswith("Pre-registration: https://osf.io/abcd1.")
    item = {a.number: a for a in statement.checklist}["1.10"]
    assert item.answer.startswith("Yes: https://osf.io/abcd1; the analysis plan frozen at the full launch")
    assert statement_datasheet(statement)["analysis_plan"]["preregistration"] == "https://osf.io/abcd1"
    assert Participation.objects.filter(study=draft).count() == 0


def test_the_release_s_data_card_names_the_plan_and_the_admin_shows_it_read_only(draft, client):
    _launched(draft)
    study = _ran(draft)
    plan = AnalysisPlan.objects.get(study=study)
    card = build_release(study)["DATA_CARD.md"].decode()
    assert f"The analysis plan frozen at the full launch has SHA-256 {plan.sha256}; the table" in card
    assert "in design.json matches it" in card
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    page = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert f"SHA-256 {plan.sha256}" in page and 'name="preregistration"' in page
    assert 'name="ai_instruction"' in page and 'name="frozen_plan"' not in page  # shown, never a field


def test_a_pilot_freezes_nothing_and_opening_the_rest_freezes_the_plan(draft):
    """The plan is frozen at the full launch: a pilot is how the design is tried, and may still change it."""
    Study.objects.filter(pk=draft.pk).update(pilot_workers_per_condition=1)
    draft.refresh_from_db()
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    assert not AnalysisPlan.objects.filter(study=draft).exists()
    studies.change_status(study=draft, to_status=Study.Status.PAUSED)  # a paused pilot is still one
    studies.change_status(study=draft, to_status=Study.Status.OPEN)
    assert not AnalysisPlan.objects.filter(study=draft).exists()
    studies.change_status(study=draft, to_status=Study.Status.OPEN, rest=True)
    assert AnalysisPlan.objects.filter(study=draft).count() == 1
