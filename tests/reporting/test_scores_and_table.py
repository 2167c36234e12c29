"""Every table cell against values worked out by hand."""

import math

import pytest

from annotation.models import Participation
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.scores import annotator_rows, condition_summaries
from annotation.reporting.tables import build_table
from annotation.services.verdicts import training_s1
from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

State = Participation.State


def answers_with_correct(task, n_correct):
    """The first n_correct answers right, the rest wrong."""
    gold = gold_answers(task)
    return [g if i < n_correct else wrong(g, task) for i, g in enumerate(gold)]


@pytest.fixture
def three_annotators(sst2):
    """0-shot: S1 of 1.0, 0.75, 0.5 -> mean 0.75, population std sqrt(0.125/3) = 0.2041."""
    study = make_study(sst2, shots=(0, 10), slug="sst2-a")
    for n in (4, 3, 2):
        add_annotator(study, 0, answers=answers_with_correct(sst2, n))
    return study


def test_three_annotators_give_the_hand_worked_mean_and_population_std(three_annotators):
    table = build_table(studies=[three_annotators])
    zero = next(r for r in table.rows if r.shots == 0)
    cell = zero.cells[0]
    assert cell.mean == pytest.approx(75.0)
    assert cell.std == pytest.approx(100 * math.sqrt(0.125 / 3))
    assert cell.n == 3
    assert cell.text() == "75.0 ± 20.4"


def test_sample_std_is_an_option_and_the_note_says_which(three_annotators):
    table = build_table(studies=[three_annotators], options=MetricOptions(ddof=1))
    assert table.rows[0].cells[0].text() == "75.0 ± 25.0"
    assert "sample standard deviation (ddof=1)" in table.note
    default_note = build_table(studies=[three_annotators]).note
    assert "population standard deviation (ddof=0, as in the CLUES paper)" in default_note


def test_missing_cells_stay_missing_not_zero(three_annotators):
    table = build_table(studies=[three_annotators])
    by_shots = {r.shots: r.cells[0] for r in table.rows}
    assert sorted(by_shots) == [0, 10, 20, 30]
    for shots in (10, 20, 30):  # 10 is a condition with nobody completed; 20 and 30 do not exist
        assert by_shots[shots].is_missing
        assert by_shots[shots].text() == "–"


def test_excluded_abandoned_and_running_workers_are_listed_apart_never_averaged(three_annotators, sst2):
    gold = gold_answers(sst2)
    add_annotator(three_annotators, 0, answers=[wrong(g, sst2) for g in gold], state=State.EXCLUDED)
    add_annotator(three_annotators, 0, answers=[wrong(g, sst2) for g in gold], state=State.ABANDONED)
    add_annotator(three_annotators, 0, answers=[wrong(g, sst2) for g in gold[:2]], state=State.TEST)
    summary = next(s for s in condition_summaries(studies=[three_annotators]) if s.shots == 0)
    assert summary.mean == pytest.approx(0.75)
    assert (len(summary.completed), len(summary.excluded), len(summary.abandoned), len(summary.in_progress)) == (
        3,
        1,
        1,
        1,
    )
    table = build_table(studies=[three_annotators])
    assert table.rows[0].cells[0].text() == "75.0 ± 20.4"
    (apart,) = table.set_apart()
    assert (apart["shots"], apart["completed"], len(apart["excluded"]), len(apart["abandoned"])) == (0, 3, 1, 1)
    assert table.set_apart_text() == "Not averaged in: sst2-fixture 0-shot: 1 excluded, 1 abandoned, 1 in progress."


def test_a_skip_scores_zero_by_default_and_can_be_excluded(sst2):
    study = make_study(sst2, shots=(0,))
    gold = gold_answers(sst2)
    # right, right, skipped, wrong -> default 2/4 = 0.5; without skips 2/3; coverage 3/4
    add_annotator(study, 0, answers=[gold[0], gold[1], None, wrong(gold[3], sst2)])
    (row,) = annotator_rows(studies=[study])
    assert (row.test_s1, row.skips, row.test_items, row.coverage) == (0.5, 1, 4, 0.75)
    (row,) = annotator_rows(studies=[study], options=MetricOptions(skip_policy="exclude"))
    assert row.test_s1 == pytest.approx(2 / 3)
    cell = build_table(studies=[study], options=MetricOptions(skip_policy="exclude")).rows[0].cells[0]
    assert (cell.text(), cell.coverage) == ("66.7 ± 0.0", 0.75)
    assert "skipped items are left out" in MetricOptions(skip_policy="exclude").describe()
    assert "skip policy 'zero': a skipped item scores 0" in MetricOptions().describe()


@pytest.mark.parametrize(
    ("policy", "expected_s1", "cell_text"),
    [
        # 4 NER items, one with an empty gold: 0/4; 1/4 (the empty gold matches the empty answer); none left
        ("zero", 0.0, "0.0 ± 0.0"),
        ("empty", 0.25, "25.0 ± 0.0"),
        ("exclude", None, "–"),
    ],
)
def test_a_worker_who_skips_everything_under_each_skip_policy(db, policy, expected_s1, cell_text):
    task = make_span_task(slug="ner-skips")
    study = make_study(task, shots=(0,))
    add_annotator(study, 0, answers=[None, None, None, None])
    options = MetricOptions(skip_policy=policy)
    (row,) = annotator_rows(studies=[study], options=options)
    assert (row.test_s1, row.skips, row.test_items, row.coverage) == (expected_s1, 4, 4, 0.0)
    table = build_table(studies=[study], options=options)
    assert table.rows[0].cells[0].text() == cell_text
    assert f"skip policy {policy!r}" in table.note


def test_per_annotator_row_has_training_s1_items_time_and_pay(sst2):
    study = make_study(sst2, shots=(10,))
    train_gold = [e.gold_answers for e in study.conditions.get().training_set.ordered_examples()]
    training = [g if i < 7 else [] for i, g in enumerate(train_gold)]  # 7 of 10 right
    add_annotator(study, 10, answers=gold_answers(sst2), training_answers=training, minutes=30, active_ms=1500)
    (row,) = annotator_rows(studies=[study])
    assert row.test_s1 == 1.0
    assert row.training_s1 == pytest.approx(0.7)
    assert (row.training_items, row.test_items) == (10, 4)
    assert row.active_ms == 14 * 1500
    assert row.paid_seconds == 1800
    assert str(row.pay) == "6.00"  # 12.00/h for half an hour


def test_training_s1_in_the_reports_is_the_filter_s_and_none_without_training_items(sst2):
    study = make_study(sst2, shots=(0, 10))
    train_gold = [e.gold_answers for e in study.conditions.get(shots=10).training_set.ordered_examples()]
    trained = add_annotator(study, 10, answers=gold_answers(sst2), training_answers=train_gold[:3] + [[]] * 7)
    zero_shot = add_annotator(study, 0, answers=gold_answers(sst2))
    rows = {r.participation_id: r for r in annotator_rows(studies=[study])}
    assert rows[trained.pk].training_s1 == training_s1.of(trained) == pytest.approx(0.3)
    assert (rows[zero_shot.pk].training_s1, rows[zero_shot.pk].training_items) == (None, 0)
    assert training_s1.of(zero_shot) is None


def test_studies_combine_into_one_table_grouped_like_the_paper(three_annotators, sst2):
    conll = make_span_task(slug="conll03-fixture", n_test=4)
    conll.name = "CoNLL03"
    conll.save()
    span_study = make_study(conll, shots=(0,), slug="conll-a")
    gold = gold_answers(conll)
    # item S1: 1, 1, 1, 1 -> 1.0 ; and 0.667 (one of two names), 1, 1, 1 -> 0.9167
    add_annotator(span_study, 0, answers=gold)
    add_annotator(span_study, 0, answers=[gold[0][:1]] + gold[1:])
    table = build_table(studies=[span_study, three_annotators])
    assert [t.name for t in table.tasks] == ["SST-2", "CoNLL03"]
    assert table.groups == [("Sentence Classification", 1), ("Named Entity Recognition", 1)]
    zero = table.rows[0]
    expected_mean = (1 + (2 / 3 + 3) / 4) / 2
    expected_std = abs(1 - (2 / 3 + 3) / 4) / 2
    assert zero.cells[1].mean == pytest.approx(100 * expected_mean)
    assert zero.cells[1].std == pytest.approx(100 * expected_std)
    assert zero.cells[1].text() == "95.8 ± 4.2"
    assert zero.cells[0].text() == "75.0 ± 20.4"
    assert table.rows[3].cells[1].is_missing  # conll has no 30-shot condition


def test_the_same_task_in_two_studies_pools_its_annotators(sst2):
    first, second = make_study(sst2, shots=(0,), slug="one"), make_study(sst2, shots=(0,), slug="two")
    add_annotator(first, 0, answers=answers_with_correct(sst2, 4))
    add_annotator(second, 0, answers=answers_with_correct(sst2, 2))
    assert build_table(studies=[first, second]).rows[0].cells[0].text() == "75.0 ± 25.0"


def test_options_from_bad_params_are_refused():
    with pytest.raises(ReportError, match="ddof"):
        MetricOptions.from_params({"ddof": "2"})
    with pytest.raises(ReportError, match="exclude_skips"):
        MetricOptions.from_params({"exclude_skips": "maybe"})
    with pytest.raises(ReportError, match="skip_policy"):
        MetricOptions.from_params({"skip_policy": "half"})
    with pytest.raises(ReportError, match="contradicts"):
        MetricOptions.from_params({"skip_policy": "empty", "exclude_skips": "1"})


def test_options_read_the_skip_policy_and_the_old_exclude_skips_alias():
    assert MetricOptions.from_params({}) == MetricOptions("zero", 0)
    assert MetricOptions.from_params({"skip_policy": "Empty", "ddof": "1"}) == MetricOptions("empty", 1)
    # Old links: exclude_skips=true is the "exclude" policy, false leaves the default.
    assert MetricOptions.from_params({"exclude_skips": "true", "ddof": "1"}) == MetricOptions("exclude", 1)
    assert MetricOptions.from_params({"exclude_skips": "0"}) == MetricOptions("zero", 0)
