"""The rehearsal end to end: the demo's SST-2 study, with consent, survey, an attention check, the training
filter and a posted reward, rehearsed on a scratch database of the configured kind (SQLite here, PostgreSQL
in CI's PostgreSQL stage) by the simulated crowd over HTTP; every invariant holds, the real study's rows are
untouched, and a tampered fact is reported as a failed invariant with a non-zero exit."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from annotation.management.commands import rehearse_study as command
from annotation.models import Participation, Study
from annotation.rehearsal import runner
from annotation.services.studies import studies
from tests.rehearsal.demo_study import demo_study as _demo_study

# transactional_db: no test transaction around the run, so that PostgreSQL can CREATE the scratch database.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def test_the_demo_study_rehearsed_end_to_end_keeps_every_invariant(tmp_path):
    study = _demo_study()
    out = tmp_path / "report.json"
    call_command("rehearse_study", study.slug, "--workers-per-condition", "2", "--format", "json", "-o", str(out))
    report = json.loads(out.read_text())
    failed = [i for i in report["invariants"] if not i["passed"]]
    assert report["passed"] and not failed, failed
    names = {i["name"] for i in report["invariants"]}
    caught = next(i["detail"] for i in report["invariants"] if i["name"].startswith("attention checks and"))
    assert "the check failer failed 1 (limit 1: excluded)" in caught and "the filter failer was excluded" in caught
    assert "nobody paid twice" in names and "no server error" in names and len(names) >= 12
    behaviours = {w["behaviour"] for w in report["crowd"]}
    assert {"skipper", "leaves", "returns", "returns (back)", "fails_attention", "declines"} <= behaviours
    # Beside the last page each worker saw, the state the database ended their participation in: the worker
    # who left and came back completed; a staff preview and a refused entry hold no participation.
    ends = {w["behaviour"]: w["end_state"] for w in report["crowd"]}
    assert ends["returns"] == "completed" and ends["leaves"] == "abandoned"
    assert ends["fails_attention"] == "excluded" and ends["declines"] is None and ends["staff_preview"] is None
    assert {"fails_training", "second_condition", "late"} <= behaviours
    # Served as a study is deployed, with the clock moved past the limits instead of waited for; the time by phase.
    server = report["scratch"]["server"]
    assert server.startswith("gunicorn gthread") and "settings.rehearsal" in server
    assert report["clock_minutes"] > 0
    assert {"copy", "server_start", "crowd", "checks", "planning"} <= set(report["seconds"])
    assert report["latency"]["all"]["requests"] > 50 and report["latency"]["all"]["p99_ms"] > 0
    # The demo study has no pilot of its own yet: the plan says how to get one (annotation.reporting.planning).
    assert "--accuracy" in report["planning"]["error"]
    # The real study was only read: no participation, still open, its own number of workers.
    study.refresh_from_db()
    assert not Participation.all_objects.filter(study=study).exists()
    assert study.status == Study.Status.OPEN and study.workers_per_condition == studies.STANDARD_WORKERS


def test_a_tampered_fact_fails_its_invariant_and_the_command(monkeypatch, capsys):
    study = _demo_study(shots=(0,))  # one condition without training: short; five slots for the behaviours

    def pay_someone_twice(facts):
        worker = next(w["worker_id"] for w in facts["crowd"] if w["state"] == "completed")
        facts["standin"]["bonus_payments"][worker] = 2

    real = runner.rehearse
    monkeypatch.setattr(command, "rehearse", lambda **options: real(**options, tamper=pay_someone_twice))
    with pytest.raises(CommandError, match="Invariants failed: nobody paid twice"):
        call_command("rehearse_study", study.slug, "--workers-per-condition", "5")
    markdown = capsys.readouterr().out
    assert "SOME INVARIANTS FAIL" in markdown
    assert "| **FAIL** | nobody paid twice | 1 problem(s):" in markdown and "2 bonus payments" in markdown
    assert markdown.count("**FAIL**") == 1


def test_an_unknown_study_or_a_bad_number_of_workers_is_refused():
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("rehearse_study", "nope")
    _demo_study(shots=(0,))
    with pytest.raises(CommandError, match="at least 1"):
        call_command("rehearse_study", "demo-sst2", "--workers-per-condition", "0")


def test_a_postgresql_scratch_database_needs_a_postgresql_server():
    if connection.vendor == "postgresql":
        pytest.skip("the real database is PostgreSQL here")
    _demo_study(shots=(0,))
    with pytest.raises(CommandError, match="could not run: a PostgreSQL scratch database .* --scratch sqlite"):
        call_command("rehearse_study", "demo-sst2", "--scratch", "postgresql")


def test_a_rehearsal_step_refuses_the_real_database():
    with pytest.raises(CommandError, match="only on the rehearsal's scratch database"):
        call_command("rehearsal_step", "sweep", "--slug", "demo-sst2")


def test_a_study_in_its_pilot_rehearses_its_whole_design(tmp_path):
    """The copy runs the design, not the real study's pilot (its share, even above a smaller N asked for)."""
    study = _demo_study()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT, pilot_workers_per_condition=2)
    studies.change_status(study=study, to_status=Study.Status.OPEN, pilot=True)
    out = tmp_path / "report.json"
    call_command("rehearse_study", study.slug, "--workers-per-condition", "1", "--format", "json", "-o", str(out))
    report = json.loads(out.read_text())
    failed = [i for i in report["invariants"] if not i["passed"]]
    assert report["passed"] and not failed, failed
    study.refresh_from_db()
    assert study.in_pilot and study.pilot_workers_per_condition == 2  # the real study was only read
