"""Sample-size planning (annotation.reporting.planning): interval widths over simulated workers, cost, time."""

import json
from decimal import Decimal

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Participation
from annotation.reporting import planning
from annotation.reporting.options import ReportError
from annotation.reporting.planning import PlanningError, plan_for_study, pooled_spread
from tests.factories import ParticipationFactory, WorkerFactory, make_classification_task
from tests.reporting.builders import add_annotator, gold_answers, items_of, make_study, respond, wrong

pytestmark = pytest.mark.django_db
State = Participation.State
FAST = {"simulations": 30, "resamples": 200}  # enough for the medians these tests compare


@pytest.fixture
def task():
    return make_classification_task(slug="plan-task", n_test=20)


def answers(task, right: int) -> list[list[str]]:
    """The first ``right`` items answered with the gold label, the rest wrong."""
    gold = gold_answers(task)
    return [g if i < right else wrong(g, task) for i, g in enumerate(gold)]


def test_widths_shrink_with_more_workers(task):
    study = make_study(task, shots=(0,), slug="shrink")
    plan = plan_for_study(study, accuracy=0.8, workers=(3, 5, 10), **FAST)
    [cell] = plan.cells
    assert cell.widths[3] > cell.widths[5] > cell.widths[10] > 0


def test_the_same_seed_gives_the_same_figures_and_another_seed_others(task):
    study = make_study(task, shots=(0, 10), slug="seeded")
    add_annotator(study, 0, answers=answers(task, 16))
    add_annotator(study, 0, answers=answers(task, 12))
    first = plan_for_study(study, seed=7, **FAST).as_dict()
    assert plan_for_study(study, seed=7, **FAST).as_dict() == first
    assert plan_for_study(study, seed=8, **FAST).as_dict()["cells"] != first["cells"]
    # A cell's figures do not depend on which other sizes were asked for.
    alone = plan_for_study(study, seed=7, workers=(5,), **FAST)
    assert alone.cells[0].widths[5] == first["cells"][0]["median_width"]["5"]


def test_the_pilot_is_the_completed_workers_and_a_given_accuracy_overrides_it(task):
    study = make_study(task, shots=(0, 10), slug="pilot")
    add_annotator(study, 0, answers=answers(task, 20))  # 1.0
    add_annotator(study, 0, answers=answers(task, 16))  # 0.8
    add_annotator(study, 10, answers=answers(task, 10))  # 0.5
    # Not in the pilot: an excluded worker, one still at work, a staff preview.
    add_annotator(study, 0, answers=answers(task, 0), state=State.EXCLUDED)
    add_annotator(study, 0, answers=answers(task, 0), state=State.TEST)
    preview = ParticipationFactory(
        condition=study.conditions.get(shots=0),
        worker=WorkerFactory(platform="preview", external_id="staff-1"),
        slot_index=None,
        is_preview=True,
        state=State.COMPLETED,
    )
    for i, example in enumerate(items_of(task)):
        respond(preview, example, wrong(example.gold_answers, task), phase="test", position=i)

    from_pilot = plan_for_study(study, **FAST)
    assert from_pilot.source == "pilot" and from_pilot.pilot_workers == 3
    zero, ten = from_pilot.cells
    assert (zero.accuracy, zero.pilot_workers, ten.accuracy, ten.pilot_workers) == (0.9, 2, 0.5, 1)
    # The spread pools each condition's workers around their own mean: only the 0-shot pair has one.
    assert from_pilot.spread == pytest.approx(0.1414, abs=1e-4)
    assert "the pilot's workers" in from_pilot.spread_source

    given = plan_for_study(study, accuracy=0.6, **FAST)
    assert given.source == "given" and [c.accuracy for c in given.cells] == [0.6, 0.6]
    assert [c.pilot_workers for c in given.cells] == [0, 0]
    assert given.spread == from_pilot.spread  # the pilot still tells how much workers differ
    assert "0.60 as given" in given.markdown()


def test_a_condition_without_pilot_workers_takes_the_mean_of_all_of_them(task):
    study = make_study(task, shots=(0, 10), slug="borrow")
    add_annotator(study, 0, answers=answers(task, 15))
    plan = plan_for_study(study, workers=(3,), **FAST)
    assert [c.accuracy for c in plan.cells] == [0.75, 0.75]
    assert plan.spread == planning.DEFAULT_SPREAD and plan.spread_source.startswith("a default")


def test_no_pilot_and_no_accuracy_is_a_clear_error(task):
    study = make_study(task, shots=(0,), slug="empty")
    add_annotator(study, 0, answers=answers(task, 20), state=State.EXCLUDED)
    with pytest.raises(PlanningError, match="no completed pilot worker yet.*--accuracy 0.85"):
        plan_for_study(study)
    with pytest.raises(CommandError, match="no completed pilot worker yet"):
        call_command("plan_study", "empty")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"accuracy": 85}, "between 0 and 1"),
        ({"accuracy": -0.1}, "between 0 and 1"),
        ({"accuracy": 0.8, "workers": ()}, "at least one number of workers"),
        ({"accuracy": 0.8, "workers": (0, 3)}, "between 1 and 50"),
        ({"accuracy": 0.8, "resamples": 10}, "resamples must be between"),
        ({"accuracy": 0.8, "seed": -1}, "seed must be a non-negative"),
        ({"accuracy": 0.8, "simulations": 0}, "simulations must be at least 1"),
    ],
)
def test_bad_input_is_refused_before_any_work(task, kwargs, message):
    study = make_study(task, shots=(0,), slug="bad")
    with pytest.raises(ReportError, match=message):  # a PlanningError, or the bootstrap's own refusal
        plan_for_study(study, **kwargs)


def test_cost_and_time_by_hand(sst2):
    """4 test items, 0 and 10 shots, 15 s per item (the default for a classification task), 12.00/h.

    0-shot: 4 items = 60 s = 1 min -> 0.20; 10-shot: 14 items = 210 s = 3.5 min -> 0.70.
    3 workers per condition: 3 x (0.20 + 0.70) = 2.70; 5 workers: 4.50.
    """
    study = make_study(sst2, shots=(0, 10), slug="costly", hourly_rate=Decimal("12.00"))
    plan = plan_for_study(study, accuracy=0.9, workers=(3, 5), **FAST)
    assert (plan.seconds_per_item, plan.seconds_from_study) == (15.0, False)
    assert [(t.shots, t.items, t.minutes, t.pay) for t in plan.times] == [
        (0, 4, 1.0, Decimal("0.20")),
        (10, 14, 3.5, Decimal("0.70")),
    ]
    assert plan.costs == {3: Decimal("2.70"), 5: Decimal("4.50")}
    assert "without platform fees" in plan.markdown()

    # With a posted reward of 0.50: the 1-minute worker gets the reward (50 ct is over the rate), the
    # 3.5-minute worker gets it topped up to the rate (0.70): 3 x (0.50 + 0.70) = 3.60.
    study.base_reward = Decimal("0.50")
    study.save()
    rewarded = plan_for_study(study, accuracy=0.9, workers=(3,), **FAST)
    assert [t.pay for t in rewarded.times] == [Decimal("0.50"), Decimal("0.70")]
    assert rewarded.costs == {3: Decimal("3.60")}
    assert "posted reward 0.50 topped up to the rate" in rewarded.markdown()


def test_every_assumption_is_stated(task):
    study = make_study(task, shots=(0,), slug="stated")
    plan = plan_for_study(study, accuracy=0.8, workers=(3,), **FAST)
    text = plan.markdown()
    for words in (
        "normal distribution",
        "right (S1 = 1) or wrong (S1 = 0)",
        "two-way percentile bootstrap",
        f"{FAST['simulations']} simulated studies",
        "median width",
        "seed 20211206",
        "the task's default estimate",
        "without platform fees",
        "consent, survey",
    ):
        assert words in text, words
    assert plan.as_dict()["assumptions"] == plan.assumptions


def test_pooled_spread():
    assert pooled_spread([[0.5, 0.7], [0.9]]) == pytest.approx(0.1414, abs=1e-4)
    assert pooled_spread([[0.5], [0.9]]) is None
    assert pooled_spread([[0.6, 0.8], [0.2, 0.4]]) == pytest.approx(0.1414, abs=1e-4)


def test_the_command_prints_markdown_or_json(task, capsys):
    study = make_study(task, shots=(0,), slug="cmd")
    call_command("plan_study", "cmd", "--accuracy", "0.85", "--workers", "3,5", "--simulations", "20")
    out = capsys.readouterr().out
    assert out.startswith("## Sample-size plan for cmd") and "| 0 | 85.0 | 0 |" in out
    call_command("plan_study", "cmd", "--accuracy", "0.85", "--workers", "3", "--format", "json", "--simulations", "20")
    data = json.loads(capsys.readouterr().out)
    assert data["workers_per_condition"] == [3] and data["cells"][0]["accuracy"] == 0.85
    assert data["cost"]["platform_fees"].startswith("not included")
    with pytest.raises(CommandError, match="numbers separated by commas"):
        call_command("plan_study", "cmd", "--workers", "3,x")
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("plan_study", "nope")
    assert study.pk


def test_the_rehearsal_section_is_the_plan_or_why_not(task):
    study = make_study(task, shots=(0,), slug="hook")
    assert "no completed pilot worker" in planning.rehearsal_section("hook")["error"]
    add_annotator(study, 0, answers=answers(task, 18))
    section = planning.rehearsal_section("hook")
    assert section["accuracy_source"] == "pilot" and section["markdown"].startswith("## Sample-size plan")


def _bootstrap_interval(scores: np.ndarray, rng: np.random.Generator, resamples: int) -> tuple[float, float]:
    """A two-way percentile bootstrap of the cell mean (workers and items resampled), written apart from the app's."""
    workers, items = scores.shape
    means = [
        scores[np.ix_(rng.integers(workers, size=workers), rng.integers(items, size=items))].mean()
        for _ in range(resamples)
    ]
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def test_the_detectable_gap_is_detected_about_four_times_in_five(task):
    """Humans truly the detectable gap above the model: a simulated study's interval excludes the model's score
    in about 80 % of studies (an independent simulation, not the plan's)."""
    study = make_study(task, shots=(0,), slug="power")
    plan = plan_for_study(study, accuracy=0.7, workers=(5,), model_score=0.7, simulations=60, resamples=300)
    [cell] = plan.cells
    gap = cell.detectable_gap[5] / 100
    assert 0.05 < gap < 0.4 and cell.model_score == 0.7
    rng = np.random.default_rng(11)
    detected, studies = 0, 150
    for _ in range(studies):
        skill = np.clip(rng.normal(0.7 + gap, plan.spread, size=5), 0, 1)
        scores = (rng.random((5, 20)) < skill[:, None]).astype(float)
        low, high = _bootstrap_interval(scores, rng, 300)
        detected += not low <= 0.7 <= high
    assert 0.65 <= detected / studies <= 0.95, detected / studies


def test_a_named_gap_gives_the_workers_it_needs_or_says_the_items_are_too_few(task):
    study = make_study(task, shots=(0, 10), slug="gap")
    base = plan_for_study(study, accuracy=0.7, workers=(3, 5, 10), model_score=0.8, **FAST)
    # Against one model score, every cell is the same question: one set of figures.
    assert base.cells[0].detectable_gap == base.cells[1].detectable_gap
    gaps = base.cells[0].detectable_gap
    assert gaps[3] > gaps[5] > gaps[10] > 0
    # Each detectable gap is that share of the interval's width at the model's score, by definition.
    ratio = (1.959964 + 0.841621) / (2 * 1.959964)
    widths_at_model = plan_for_study(study, accuracy=0.8, workers=(3, 5, 10), **FAST).cells[1].widths
    assert widths_at_model[10] * ratio == pytest.approx(gaps[10], abs=0.2 + 0.05 * gaps[10])
    asked = plan_for_study(study, accuracy=0.7, workers=(3, 5, 10), model_score=0.8, gap=gaps[5] / 100, **FAST)
    assert 3 <= asked.cells[0].workers_for_gap <= 7
    tiny = plan_for_study(study, accuracy=0.7, workers=(3, 5, 10), model_score=0.8, gap=0.005, **FAST)
    [cell, _] = tiny.cells
    assert cell.workers_for_gap is None and cell.gap_floor is not None and cell.gap_floor > 0.5
    assert "none: below" in tiny.markdown()
    assert "workers for the gap" in asked.markdown() and "Gap to detect" in asked.markdown()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"model_score": 1.5}, "model score must be a share"), ({"gap": 0}, "gap to detect must be above 0")],
)
def test_a_bad_model_score_or_gap_is_refused(task, kwargs, message):
    study = make_study(task, shots=(0,), slug="badgap")
    with pytest.raises(PlanningError, match=message):
        plan_for_study(study, accuracy=0.7, **kwargs)


def test_the_command_takes_a_model_score_and_a_gap(task, capsys):
    make_study(task, shots=(0,), slug="gapcmd")
    call_command(
        "plan_study", "gapcmd", "--accuracy", "0.7", "--model-score", "0.8", "--gap", "0.2", "--simulations", "20"
    )
    out = capsys.readouterr().out
    assert "against a model scoring 80.0" in out and "Gap to detect: 20.0 S1 points." in out
