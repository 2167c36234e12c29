"""Pay at the hourly rate with bonuses; model predictions upload and scoring; score recomputation."""

import json
from decimal import Decimal

import pytest

from annotation.models import ModelRun, Participation, Response
from annotation.reporting import analyses
from annotation.reporting.options import MetricOptions, ReportError
from annotation.reporting.pay import condition_pay
from annotation.reporting.predictions import model_run_create, model_run_score, parse_predictions
from annotation.reporting.recompute import recompute_item_scores
from annotation.reporting.tables import build_table
from annotation.services.money.pay import pay_lines
from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, gold_answers, items_of, make_study

State = Participation.State


def test_without_a_posted_reward_workers_are_paid_the_rate_for_their_time(sst2):
    # A reward of 0 stated on purpose: paid by the hour, all of it as the bonus (base + bonus = owed).
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2), minutes=45)
    line = pay_lines(study=study, participations=[p])[p.pk]
    assert (line.minutes, line.amount, line.bonus, line.effective_hourly, line.below_rate) == (
        45.0,
        Decimal("9.00"),
        Decimal("9.00"),
        Decimal("12.00"),
        False,
    )
    assert line.base == Decimal("0.00")


def test_with_the_posted_reward_unset_the_owed_amount_is_shown_and_no_bonus_is_computed(sst2):
    study = make_study(sst2, shots=(0,))
    assert study.base_reward is None  # the default: not set, never taken as 0
    p = add_annotator(study, 0, answers=gold_answers(sst2), minutes=45)
    line = pay_lines(study=study, participations=[p])[p.pk]
    assert (line.owed, line.amount, line.base, line.bonus) == (Decimal("9.00"), Decimal("9.00"), None, None)
    (condition,) = condition_pay(study=study)
    assert condition.total_amount == Decimal("9.00") and condition.total_bonus is None


@pytest.mark.parametrize("base_reward", [Decimal("0.00"), Decimal("2.00")])
def test_a_worker_paid_under_a_minute_has_no_effective_hourly_rate(sst2, base_reward):
    study = make_study(sst2, shots=(0,), base_reward=base_reward, slug=f"quick-{base_reward}")
    quick = add_annotator(study, 0, answers=gold_answers(sst2), minutes=0.5, worker_id="quick")
    line = pay_lines(study=study, participations=[quick])[quick.pk]
    assert line.effective_hourly is None and not line.below_rate  # not "12.00/h" beside 0.5 minutes
    assert condition_pay(study=study)[0].median_effective_hourly is None


def test_a_posted_reward_below_the_rate_is_flagged_with_the_bonus_that_makes_it_up(sst2):
    study = make_study(sst2, shots=(0,), base_reward=Decimal("2.00"))
    slow = add_annotator(study, 0, answers=gold_answers(sst2), minutes=30)
    fast = add_annotator(study, 0, answers=gold_answers(sst2), minutes=5)
    lines = pay_lines(study=study, participations=[slow, fast])
    # 30 min: 2.00 for half an hour = 4.00/h < 12.00 -> bonus 6.00 - 2.00 = 4.00
    assert (
        lines[slow.pk].effective_hourly,
        lines[slow.pk].below_rate,
        lines[slow.pk].bonus,
        lines[slow.pk].amount,
    ) == (Decimal("4.00"), True, Decimal("4.00"), Decimal("6.00"))
    # 5 min: 2.00 for 1/12 h = 24.00/h -> no bonus
    assert (lines[fast.pk].effective_hourly, lines[fast.pk].below_rate, lines[fast.pk].amount) == (
        Decimal("24.00"),
        False,
        Decimal("2.00"),
    )
    (condition,) = condition_pay(study=study)
    assert condition.median_effective_hourly == Decimal("14.00") and not condition.below_rate
    assert condition.total_bonus == Decimal("4.00")


def test_excluded_and_abandoned_workers_are_paid_for_their_time(sst2):
    study = make_study(sst2, shots=(0,))
    excluded = add_annotator(study, 0, answers=[], state=State.EXCLUDED, minutes=10)
    abandoned = add_annotator(study, 0, answers=[], state=State.ABANDONED, minutes=20)
    lines = pay_lines(study=study, participations=[excluded, abandoned])
    assert lines[excluded.pk].amount == Decimal("2.00")
    assert lines[abandoned.pk].amount == Decimal("4.00")  # claim -> last activity


def _ids(task):
    return [e.source_id for e in items_of(task)]


def test_clues_format_predictions_are_scored_and_shown_in_the_table(sst2):
    study = make_study(sst2, shots=(0,))
    add_annotator(study, 0, answers=gold_answers(sst2))
    ids, gold = _ids(sst2), gold_answers(sst2)
    content = json.dumps({ids[0]: gold[0], ids[1]: gold[1], ids[2]: [], ids[3]: ["positive", "negative"]})
    run = model_run_create(task=sst2, name="BERT-large", shots=10, content=content)
    # item S1: 1, 1, 0, 2·(1/2·1)/(1/2+1) = 2/3 -> 2.6667 / 4
    assert model_run_score(run).s1 == pytest.approx((2 + 2 / 3) / 4)
    table = build_table(studies=[study])
    model_row = next(r for r in table.rows if r.is_model)
    assert model_row.label == "BERT-large (10-shot)" and model_row.cells[0].text() == "66.7"


def test_jsonl_predictions_are_accepted(sst2):
    ids, gold = _ids(sst2), gold_answers(sst2)
    content = "\n".join(json.dumps({"id": i, "prediction": g}) for i, g in zip(ids, gold, strict=True))
    run = model_run_create(task=sst2, name="jsonl", content=content.encode())
    assert model_run_score(run).s1 == 1.0


def test_a_line_separator_inside_a_jsonl_prediction_does_not_split_its_line():
    content = json.dumps({"id": "q1", "answer": ["Eastgate\u2028Hospital"]}, ensure_ascii=False) + "\r\n"
    content += json.dumps({"id": "q2", "answer": []}) + "\r\n"
    assert parse_predictions(content.encode()) == {"q1": ["Eastgate\u2028Hospital"], "q2": []}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ('{"id": "x"', "line 1: not valid JSON"),
        ('{"id": "x"}', 'no "answer"'),
        ('{"a": "positive"}', "lists of strings"),
        ('{"a": [1]}', "lists of strings"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_prediction_files_are_refused_with_a_clear_error(content, message):
    with pytest.raises(ReportError, match=message):
        parse_predictions(content)


def test_unknown_and_missing_ids_are_refused_and_nothing_is_stored(sst2):
    ids, gold = _ids(sst2), gold_answers(sst2)
    content = json.dumps({ids[0]: gold[0], "nope": ["positive"]})
    with pytest.raises(ReportError) as err:
        model_run_create(task=sst2, name="bad", content=content)
    assert "unknown test ids: 'nope'" in str(err.value)
    assert "missing predictions for 3 test ids" in str(err.value)
    assert not ModelRun.objects.exists()
    with pytest.raises(ReportError, match="name"):
        model_run_create(task=sst2, name=" ", content=content)


def test_recomputation_gives_the_same_numbers_and_reports_tampering(sst2):
    study = make_study(sst2, shots=(0,))
    gold = gold_answers(sst2)
    add_annotator(study, 0, answers=[gold[0], None, [], ["negative", "positive"]])
    before = build_table(studies=[study]).rows[0].cells[0]
    result = recompute_item_scores(study_ids=[study.pk])
    assert result.ok and result.checked == 4
    tampered = Response.objects.filter(status="answered").first()
    Response.objects.filter(pk=tampered.pk).update(score=0.0)
    result = recompute_item_scores(fix=True)
    assert [m["response"] for m in result.mismatches] == [tampered.pk] and result.fixed == 1
    assert build_table(studies=[study]).rows[0].cells[0] == before


@pytest.mark.parametrize(("policy", "expected"), [("zero", 75.0), ("empty", 100.0), ("exclude", 100.0)])
def test_recomputation_keeps_the_stored_skip_score_and_the_analyses_apply_the_policy(db, policy, expected):
    task = make_span_task(slug="ner-recompute")
    study = make_study(task, shots=(0,))
    gold = gold_answers(task)
    add_annotator(study, 0, answers=[gold[0], None, gold[2], gold[3]])  # the skip is on the empty-gold item
    (skipped,) = Response.objects.filter(status="skipped")
    assert skipped.score == 1.0  # stored: the empty answer's S1, whatever policy a report applies
    assert recompute_item_scores().ok
    (row,) = analyses.majority_and_agreement(study=study, options=MetricOptions(skip_policy=policy))
    assert row["annotator_mean"]["mean"] == pytest.approx(expected)


def test_a_model_row_is_scored_on_the_items_the_humans_saw(sst2):
    """Humans answered items 0 and 1 only (as a FewCLUE sample would): the model's cell is its S1 on those two
    (100), not on the whole test set (50), and the paired gap pairs the same two items."""
    from annotation.models import ModelRun
    from annotation.reporting.bootstrap import IntervalOptions
    from annotation.reporting.tables import build_table
    from tests.reporting.builders import add_annotator, gold_answers, items_of, make_study, wrong

    study = make_study(sst2, shots=(0,), slug="seen")
    gold = gold_answers(sst2)
    add_annotator(study, 0, answers=gold[:2])
    items = items_of(sst2)
    predictions = {
        e.source_id: (g if i < 2 else wrong(g, sst2)) for i, (e, g) in enumerate(zip(items, gold, strict=True))
    }
    ModelRun.objects.create(task=sst2, name="m", predictions=predictions)
    table = build_table(studies=[study], intervals=IntervalOptions(resamples=100))
    [model_row] = table.model_rows()
    assert model_row.cells[0].mean == 100.0
    [gap] = table.gaps
    assert (gap["items"], gap["model_s1"], gap["paired_on"]) == (2, 100.0, "the items the humans saw")
