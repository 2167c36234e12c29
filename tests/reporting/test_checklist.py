"""The human-baselines checklist (Wei et al., ICML 2025) in the statement: every item, answered from the data
or by the authors, and a data answer that moves when its fact does."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from annotation.models import ConsentDecline, ModelRun, Participation, RehearsalJob, Response, Study
from annotation.models.prolific import ProlificGroup
from annotation.protocol.checklist import CHECKLIST, NUMBERS
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.checklist import AUTHORS, DATA, FROM_DATA, NOT_FILLED
from annotation.reporting.statement import build_statement, render_statement, statement_datasheet
from annotation.services.verdicts import attention
from tasks_app.models import ExampleSet, ExampleSetItem
from tests.factories import ExampleFactory, WorkerFactory
from tests.reporting.builders import add_annotator, gold_answers, items_of, make_study, wrong

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "statement.schema.json").read_text())


@pytest.fixture
def study(sst2):
    """A study that ran: two conditions, three workers who completed, one who left."""
    s = make_study(sst2, shots=(0, 10), slug="listed", consent_required=True, consent_text="I agree.")
    gold = gold_answers(sst2)
    add_annotator(s, 0, answers=gold)
    add_annotator(s, 0, answers=[gold[0], wrong(gold[1], sst2), gold[2], gold[3]])
    add_annotator(s, 10, answers=gold)
    add_annotator(s, 10, answers=gold[:1], state=Participation.State.ABANDONED)
    return s


def _answers(study: Study, intervals: IntervalOptions | None = None) -> dict[str, tuple[str, str]]:
    statement = build_statement(study=Study.objects.get(pk=study.pk), intervals=intervals)
    return {a.number: (a.answer, a.source) for a in statement.checklist}


def test_every_item_in_order_and_the_json_validates(study):
    statement = build_statement(study=study)
    assert [a.number for a in statement.checklist] == list(NUMBERS)
    assert len(NUMBERS) == 71 and NUMBERS[0] == "0.1" and NUMBERS[-1] == "5.4"
    data = statement_datasheet(statement)
    jsonschema.validate(data, SCHEMA)
    by_number = {row["item"]: row for row in data["checklist"]}
    assert by_number["1.1"]["source"] == DATA and by_number["1.1"]["answer"].startswith("4 took a slot")
    assert by_number["0.1"]["source"] == NOT_FILLED and "--checklist-file" in by_number["0.1"]["answer"]
    for fmt in ("markdown", "latex"):
        text = render_statement(statement, fmt)
        assert "Human-baselines checklist (Wei et al., ICML 2025)" in text and "Minimum Detectable Effect" in text


def test_the_authors_answer_what_only_they_know_and_the_statement_says_so(study, tmp_path):
    answers = tmp_path / "checklist.json"
    answers.write_text(json.dumps({"0.1": "Humans on CLUES", "2.4": "No", "1.1": "one pilot worker was a colleague"}))
    call_command("configure_study", "listed", "--checklist-file", str(answers))
    got = {a.number: a for a in build_statement(study=Study.objects.get(pk=study.pk)).checklist}
    assert (got["0.1"].answer, got["0.1"].source) == ("Humans on CLUES", AUTHORS)
    assert got["2.4"].basis == "filled by the authors on the study"
    # A data item keeps its figure; the authors' words are added, not put in its place.
    assert got["1.1"].source == DATA and got["1.1"].answer.startswith("4 took a slot")
    assert got["1.1"].answer.endswith("The authors add: one pilot worker was a colleague")


def test_an_unknown_item_or_a_non_text_answer_is_refused_and_nothing_saved(study, tmp_path):
    bad = tmp_path / "bad.json"
    for value, message in (
        ({"9.9": "x"}, "unknown checklist item '9.9'"),
        ({"0.1": 3}, "item 0.1: the answer is text"),
    ):
        bad.write_text(json.dumps(value))
        with pytest.raises(Exception, match=message):
            call_command("configure_study", "listed", "--checklist-file", str(bad))
    assert Study.objects.get(pk=study.pk).checklist_answers == {}
    with pytest.raises(ValidationError):
        Study(checklist_answers=["0.1"]).clean()


def _add_check(s: Study) -> None:
    attention.definitions.generate(study=s, positions=[2])


def _model(s: Study) -> None:
    ModelRun.objects.create(task=s.task, name="bert", predictions={str(e.pk): ["positive"] for e in items_of(s.task)})


def _exclude(s: Study) -> None:
    p = s.participations.filter(state=Participation.State.COMPLETED).order_by("pk").last()
    Participation.objects.filter(pk=p.pk).update(
        state=Participation.State.EXCLUDED, exclusion_kind=Participation.ExclusionKind.ATTENTION
    )


def _drop_training(s: Study) -> None:
    condition = s.conditions.get(shots=10)
    Response.all_objects.filter(participation__condition=condition).delete()
    Participation.all_objects.filter(condition=condition).delete()
    condition.delete()


def _update(**fields: object) -> Callable[[Study], None]:
    return lambda s: Study.objects.filter(pk=s.pk).update(**fields)


# For each item answered from the data: a change of the fact it reads.
CHANGES: dict[str, Callable[[Study], None]] = {
    "0.6": lambda s: items_of(s.task)[0].__class__.objects.filter(pk=items_of(s.task)[0].pk).update(context=[1, 2]),
    "0.7": _update(language="de"),
    "0.8": lambda s: ExampleSetItem.objects.create(
        example_set=ExampleSet.objects.get(task=s.task, role="test"), example=ExampleFactory(task=s.task), position=99
    ),
    "0.9": _model,
    "0.10": _model,
    "1.1": lambda s: add_annotator(s, 0, answers=gold_answers(s.task)),
    "1.2": lambda s: Response.objects.filter(example=items_of(s.task)[0]).delete(),
    "1.2.1": lambda s: s.conditions.filter(shots=0).update(test_sample=[items_of(s.task)[0].pk], sample_seed=7),
    "1.3": lambda s: add_annotator(s, 0, answers=gold_answers(s.task)),
    "1.4": _add_check,
    "1.6": lambda s: RehearsalJob.objects.create(study=s, passed=True),
    "1.9": _update(ethics_review=Study.EthicsReview.APPROVED, ethics_board="the Board"),
    "1.10": _update(preregistration="https://osf.io/abcd1"),
    "2.2": lambda s: WorkerFactory._meta.model.objects.filter(participations__study=s).update(platform="inhouse"),
    "2.3": _update(consent_required=False),
    "2.3.1": _update(consent_required=False),
    "2.3.2": lambda s: ConsentDecline.objects.create(study=s, worker=WorkerFactory(), at=timezone.now()),
    "2.5": lambda s: ProlificGroup.objects.create(task=s.task, group_id="g1", name="Took part in SST-2"),
    "2.6": _drop_training,
    "2.6.1": _drop_training,
    "2.6.2": _update(hourly_rate=Decimal("15.00")),
    "2.6.2.1": _update(hourly_rate=Decimal("15.00")),
    "2.7": _update(hourly_rate=Decimal("15.00")),
    "2.7.1": _update(hourly_rate=Decimal("15.00")),
    "2.7.2": _update(base_reward=Decimal("1.50")),
    "2.7.2.1": _update(base_reward=Decimal("1.50")),
    "2.7.3": _update(hourly_rate=Decimal("15.00")),
    "2.7.3.1": _update(hourly_rate=Decimal("15.00")),
    "3.1": _add_check,
    "3.1.1": _update(test_order=Study.TestOrder.SHUFFLED),
    "3.2": _update(integrity_max_copies=1),
    "3.2.1": _update(integrity_max_copies=1),
    "3.2.2": _exclude,
    "3.5.1": lambda s: Response.objects.filter(participation__study=s).update(copy_count=1),
    "3.6": _update(survey=[{"key": "why", "type": "text", "label": "Why?"}]),
    "4.1": _model,
    "4.1.1": _model,
    "4.3": _model,
    "4.4": _model,
    "4.5": _model,
    "4.6": _exclude,
    "5.1.1": _update(
        survey=[{"key": "age", "type": "single", "label": "Age", "options": ["18-29", "30+"], "demographic": True}]
    ),
    "5.1.2": _update(language="de"),
    "5.1.3": lambda s: Response.objects.filter(participation__study=s).update(active_ms=90_000),
    "5.1.5": lambda s: add_annotator(s, 0, answers=[], state=Participation.State.ABANDONED),
}


# Read from the analysis options and the settings, not the database: the last test changes those.
OPTIONS = {"4.2", "4.2.1", "5.4"}


def test_every_data_item_has_a_change_below():
    assert set(CHANGES) | OPTIONS == set(FROM_DATA), set(FROM_DATA) ^ (set(CHANGES) | OPTIONS)
    assert {n for n, _, _ in CHECKLIST} >= set(FROM_DATA)


@pytest.mark.parametrize("number", sorted(CHANGES, key=lambda n: [int(x) for x in n.split(".")]))
def test_a_data_answer_moves_with_its_fact(study, number):
    before, source = _answers(study)[number]
    assert source == DATA
    CHANGES[number](study)
    after, _ = _answers(study)[number]
    assert after != before, (number, before)


def test_the_analysis_options_and_the_app_version_are_read_not_written(study):
    _model(study)
    level = _answers(study, IntervalOptions(level=0.9))
    assert level["4.2"][0].startswith("Yes: 90% two-way") and "95%" not in level["4.2"][0]
    assert _answers(study)["4.2.1"][0] == "Point and interval estimate"
    assert "300 resamples" in _answers(study, IntervalOptions(resamples=300))["4.1.1"][0]
    with override_settings(APP_VERSION="9.9.9-test"):
        assert "9.9.9-test" in _answers(study)["5.4"][0]
