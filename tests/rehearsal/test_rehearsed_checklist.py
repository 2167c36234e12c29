"""The human-baselines checklist and the statement on rehearsed studies (the real rehearsal engine, a CLUES-style
and a FewCLUE design), not factory rows: every item answered, each data item by its function over the
rehearsed rows, the authors' items filled by the authors or said not filled, the figures that matter
recomputed here from the rows, and the statement's JSON valid against its schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import jsonschema
import pytest
from django.core.management import call_command

from annotation.models import AnalysisPlan, Participation, Response, Study
from annotation.protocol.checklist import CHECKLIST, NUMBERS
from annotation.reporting.checklist import AUTHORS, DATA, FROM_DATA, NOT_FILLED, Facts
from annotation.reporting.statement import build_statement, statement_datasheet
from annotation.reporting.tables import build_table
from tests.conftest import FEWCLUE_FIXTURE
from tests.rehearsal import prepared
from tests.rehearsal.demo_study import demo_study

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "statement.schema.json").read_text())
State = Participation.State

# One worker runs them (pytest-xdist): each design is rehearsed once per worker that needs it.
pytestmark = [pytest.mark.django_db, pytest.mark.timeout(600), pytest.mark.xdist_group("rehearsed-checklist")]


def _clues() -> Study:
    """The demo's SST-2 study (CLUES: a training split, the whole test set), pre-registered, with the standard
    instruction on AI tools and one item the authors answered."""
    study = demo_study(shots=(10,))
    call_command(
        "configure_study", study.slug, "--preregistration", "https://osf.io/demo1", "--ai-instruction-standard",
        stderr=StringIO(),
    )  # fmt: skip
    Study.objects.filter(pk=study.pk).update(checklist_answers={"2.4": "No: no author took part."})
    return Study.objects.get(pk=study.pk)


def _fewclue() -> Study:
    """A FewCLUE paper design as create_fewclue_studies makes it: training items drawn from the development
    set, a seeded test sample; nothing filled by the authors."""
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())
    call_command(
        "create_fewclue_studies", "--tasks", "eprstmt", "--training-items", "3", "--test-sample", "2", "--seed", "9",
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    return Study.objects.get(slug="fewclue-eprstmt-paper")


DESIGNS: dict[str, tuple[Callable[[], Study], int | None]] = {"clues": (_clues, 4), "fewclue": (_fewclue, None)}


@pytest.fixture(scope="session")
def rehearsed_designs(django_db_setup, django_db_blocker, tmp_path_factory):
    runs = {}
    with django_db_blocker.unblock():
        for name, (make, workers) in DESIGNS.items():
            runs[name] = prepared.rehearse_design(tmp_path_factory.mktemp(name), make, workers_per_condition=workers)
    return runs


@pytest.fixture(params=sorted(DESIGNS))
def rehearsed(request, rehearsed_designs):
    return request.param, prepared.load(rehearsed_designs[request.param])


def test_every_item_is_answered_from_the_rehearsed_rows_or_by_the_authors(rehearsed):
    name, study = rehearsed
    assert Participation.objects.filter(study=study, state=State.COMPLETED).exists()  # a study that ran
    statement = build_statement(study=study)
    answers = statement.checklist
    assert [a.number for a in answers] == list(NUMBERS)
    facts = Facts(study, build_table(studies=[study], include_models=False), statement.plan)
    own = study.checklist_answers or {}
    for answer, (number, title, _) in zip(answers, CHECKLIST, strict=True):
        assert answer.title == title and answer.answer.strip(), number
        if number in FROM_DATA:
            # From the data: exactly what its function reads from these rows (each function moves with its
            # fact: tests/reporting/test_checklist.py), with where it comes from.
            computed, basis = FROM_DATA[number](facts)
            assert (answer.source, answer.answer.split(". The authors add: ")[0]) == (DATA, computed), number
            assert answer.basis.startswith(basis) and basis, number
        elif number in own:
            assert (answer.source, answer.answer) == (AUTHORS, own[number]), number
            assert answer.basis == "filled by the authors on the study"
        else:
            assert answer.source == NOT_FILLED, number
            assert answer.answer == (
                f'not filled (configure_study {study.slug} --checklist-file FILE with {{"{number}": "..."}})'
            )
    assert {a.source for a in answers} == ({DATA, AUTHORS, NOT_FILLED} if own else {DATA, NOT_FILLED})


def test_the_figures_are_the_rehearsed_rows_counted_here(rehearsed):
    name, study = rehearsed
    got = {a.number: a.answer for a in build_statement(study=study).checklist}
    slots = Participation.objects.filter(study=study).exclude(state=State.DECLINED)
    assert got["1.1"].startswith(f"{slots.count()} took a slot")
    answered = (
        Response.objects.filter(participation__in=slots, phase=Response.Phase.TEST)
        .exclude(status=Response.Status.PENDING)
        .values("example_id")
        .distinct()
        .count()
    )
    assert got["1.2"] == f"{answered} distinct test items answered"
    completed = slots.filter(state=State.COMPLETED).count()
    assert got["5.1.5"].startswith(f"Yes: {completed} of {slots.count()} completed")
    copies = Response.objects.filter(participation__in=slots, copy_count__gt=0).count()
    assert f"({copies} items with a copy)" in got["3.5.1"]
    # The rehearsal opened the study through change_status: its plan was frozen there, and this analysis,
    # with the default options, is the one planned.
    plan = AnalysisPlan.objects.get(study=study)
    assert f"(SHA-256 {plan.sha256}) matches the reported analysis" in got["1.10"]
    if name == "clues":
        assert got["1.10"].startswith("Yes: https://osf.io/demo1;")
        assert (
            'workers were told "Please answer on your own.' in got["3.5.1"] and "(in en, de, zh-hans)" in got["3.5.1"]
        )
        assert got["1.2.1"] == "The whole test set (no sampling)"
    else:
        assert got["1.10"].startswith("No: no public pre-registration recorded;")
        assert got["3.5.1"].startswith("Partial: no instruction on AI tools was shown;")
        sample = study.conditions.get().test_sample
        assert got["1.2.1"].startswith(f"Simple random sample of {len(sample)} items per condition")


def test_the_statement_of_a_rehearsed_study_validates_against_its_schema(rehearsed):
    name, study = rehearsed
    data = statement_datasheet(build_statement(study=study))
    jsonschema.validate(data, SCHEMA)
    assert data["analysis_plan"]["matches"] is True
    assert len(data["checklist"]) == len(NUMBERS)


def _human_items_and_scores(study: Study) -> tuple[dict[int, list[float]], dict[int, dict[int, list[str]]], set[int]]:
    """From the rehearsed rows, recounted here: per condition each completed worker's test S1 (a skip scores 0;
    an answer scores 1 when it is the gold label), their votes by item (a skip among them), and every item
    the humans saw."""
    scores: dict[int, list[float]] = {}
    votes: dict[int, dict[int, list[str]]] = {}
    seen: set[int] = set()
    for p in Participation.objects.filter(study=study, state=State.COMPLETED).select_related("condition"):
        rows = Response.objects.filter(participation=p, phase=Response.Phase.TEST, attention_check__isnull=True)
        s1 = []
        for r in rows.select_related("example"):
            seen.add(r.example_id)
            answered = r.status != "skipped"
            s1.append(1.0 if answered and sorted(r.answer) == sorted(r.example.gold_answers) else 0.0)
            # A skip is a vote that earns no credit (the default skip policy, docs/reports.md).
            ballot = json.dumps(r.answer) if answered else "(skipped)"
            votes.setdefault(p.condition.shots, {}).setdefault(r.example_id, []).append(ballot)
        scores.setdefault(p.condition.shots, []).append(100 * sum(s1) / len(s1))
    return scores, votes, seen


def test_model_rows_aggregates_robustness_gap_and_release_on_the_rehearsed_rows(rehearsed, tmp_path):
    """Issue 41's figures on a rehearsed CLUES and FewCLUE study: the model row on exactly the humans' items,
    best / mean / majority, the robustness to each exclusion rule, the detectable gap, and release_study whose
    table recomputed from the release alone equals the app's."""
    from annotation.models import ModelRun
    from annotation.reporting.aggregates import cell_aggregates, robustness
    from annotation.reporting.bootstrap import IntervalOptions
    from annotation.reporting.planning import plan_for_study
    from tests.reporting.builders import wrong
    from tests.reporting.test_release import _recompute

    name, study = rehearsed
    scores, votes, seen = _human_items_and_scores(study)
    assert scores, "the rehearsal completed nobody"
    # A model right on every item the humans saw and wrong on every other test item: scored on the humans'.
    test_items = study.task.examples.filter(in_sets__role="test").distinct()
    predictions = {
        e.source_id: e.gold_answers if e.pk in seen else wrong(e.gold_answers, study.task) for e in test_items
    }
    assert len(predictions) >= len(seen)
    ModelRun.objects.create(task=study.task, name="right-where-seen", predictions=predictions)
    table = build_table(studies=[study], intervals=IntervalOptions(resamples=100))
    assert [cell.mean for row in table.model_rows() for cell in row.cells if cell.n] == [100.0]
    assert {gap["items"] for gap in table.gaps} == {len(seen)}
    # Best individual, mean and strict majority per cell, against the recount.
    for cell in cell_aggregates(studies=[study]):
        mine = scores[cell.shots]
        assert (cell.workers, cell.best) == (len(mine), pytest.approx(max(mine), abs=0.05))  # shown to 0.1
        assert cell.mean == pytest.approx(sum(mine) / len(mine), abs=0.05)
        gold = {e.pk: json.dumps(e.gold_answers) for e in test_items if e.pk in seen}
        right = [
            any(ballots.count(v) * 2 > len(ballots) and v == gold[item] for v in set(ballots))
            for item, ballots in votes.get(cell.shots, {}).items()
        ]
        if cell.majority_strict is not None and len(right) == len(seen):
            assert cell.majority_strict == pytest.approx(100 * sum(right) / len(right), abs=0.05)
    # Each rule lifted: as many excluded as the rows say it excluded.
    excluded = Participation.objects.filter(study=study, state=State.EXCLUDED)
    for effect in robustness(studies=[study]):
        if effect.rule != "all":
            assert effect.excluded == excluded.filter(exclusion_kind=effect.rule).count(), effect.rule
    # The smallest detectable gap: given for every number of workers, narrower with 10 than with 3. Five
    # simulations per size keep this fast; at that noise 3 and 5 workers may cross, 3 and 10 do not.
    plan = plan_for_study(study, simulations=5, resamples=100)
    for cell in plan.cells:
        gaps = [cell.detectable_gap[n] for n in sorted(cell.detectable_gap)]
        assert gaps and all(g > 0 for g in gaps) and gaps[-1] < gaps[0], (name, gaps)
    # The release alone gives back the app's table.
    out = tmp_path / "release"
    call_command("release_study", study.slug, "-o", str(out), stdout=StringIO(), stderr=StringIO())
    recomputed = _recompute(out)
    app = {
        row.shots: (c.mean, c.std, c.n)
        for row in build_table(studies=[study], include_models=False, intervals=None).rows
        for c in row.cells
        if c.n
    }
    assert app.keys() == recomputed.keys() and app
    for shots, (mean, std, n) in recomputed.items():
        assert app[shots][2] == n and app[shots][0] == pytest.approx(mean) and app[shots][1] == pytest.approx(std)
