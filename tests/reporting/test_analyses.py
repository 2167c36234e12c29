"""Training analyses on nested sets, majority vote, Fleiss' kappa, agreement, difficulty, confidence, time."""

import math

import pytest

from annotation.reporting.agreement import fleiss_kappa, majority_label, majority_spans, pairwise_s1
from annotation.reporting.analyses import (
    confidence_vs_correctness,
    item_difficulty,
    majority_and_agreement,
    study_analyses,
    time_per_item,
    training_overlaps,
)
from annotation.reporting.options import MetricOptions
from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, gold_answers, make_study

POS, NEG = ["positive"], ["negative"]


@pytest.fixture
def voted(sst2):
    """Gold pos, neg, pos, neg. Ratings per item: (pos,pos,pos) (pos,pos,neg) (neg,neg,neg) (pos,neg,neg)."""
    study = make_study(sst2, shots=(0,))
    add_annotator(study, 0, answers=[POS, POS, NEG, POS], confidence=5)  # S1 0.25
    add_annotator(study, 0, answers=[POS, POS, NEG, NEG], confidence=3)  # S1 0.5
    add_annotator(study, 0, answers=[POS, NEG, NEG, NEG], confidence=1)  # S1 0.75
    return study


def test_fleiss_kappa_matches_the_hand_computed_value(voted):
    # P_i = 1, 1/3, 1, 1/3 -> P-bar 2/3; p(pos) = p(neg) = 1/2 -> P_e 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    (row,) = majority_and_agreement(study=voted, options=MetricOptions())
    assert row["agreement"] == {"measure": "fleiss_kappa", "value": round(1 / 3, 4), "items": 4}


def test_majority_vote_s1_stands_next_to_the_annotator_mean(voted):
    # majority per item: pos (right), pos (wrong), neg (wrong), neg (right) -> 50.0; annotators 25/50/75
    (row,) = majority_and_agreement(study=voted, options=MetricOptions())
    assert row["majority_vote_s1"] == 50.0
    assert row["annotator_mean"]["mean"] == 50.0
    assert row["annotator_mean"]["std"] == pytest.approx(100 * math.sqrt(0.125 / 3), abs=0.01)


def test_fleiss_kappa_pure_cases():
    assert fleiss_kappa([["a", "a"], ["b", "b"]]) == 1.0
    assert math.isnan(fleiss_kappa([["a", "a"], ["a", "a"]]))  # undefined: one category only
    with pytest.raises(ValueError):
        fleiss_kappa([["a", "b"], ["a"]])


def test_majority_rules_for_labels_and_spans():
    assert majority_label([frozenset({"b"}), frozenset({"a"})]) == frozenset({"a"})  # tie: sorted first
    assert majority_spans([frozenset({"x", "y"}), frozenset({"x"}), frozenset()]) == frozenset({"x"})
    assert pairwise_s1([{1: ["a"], 2: ["b"]}, {1: ["a"], 2: ["c"]}]) == 0.5


def test_span_agreement_is_pairwise_s1(db):
    task = make_span_task(slug="ner-agree", n_test=2)
    study = make_study(task, shots=(0,))
    gold = gold_answers(task)  # [Ada Lovelace, Charles Babbage], []
    add_annotator(study, 0, answers=gold)
    add_annotator(study, 0, answers=[gold[0][:1], []])
    (row,) = majority_and_agreement(study=study, options=MetricOptions())
    # pair on item 1: S1({A, C}, {A}) = 2/3; item 2: empty vs empty = 1 -> (2/3 + 1) / 2
    assert row["agreement"]["measure"] == "pairwise_s1"
    assert row["agreement"]["value"] == pytest.approx(100 * (2 / 3 + 1) / 2, abs=0.01)
    # span majority keeps strings chosen by more than half: only Ada Lovelace has 2 of 2 -> item 1 S1 = 2/3
    assert row["majority_vote_s1"] == pytest.approx(100 * (2 / 3 + 1) / 2, abs=0.01)


def test_training_analyses_on_nested_sets(sst2):
    study = make_study(sst2, shots=(10, 20))
    train_gold = [e.gold_answers for e in study.conditions.get(shots=20).training_set.ordered_examples()]
    right = list(train_gold)
    test = gold_answers(sst2)
    add_annotator(study, 10, answers=test, training_answers=right[:10])  # shared 1.0
    add_annotator(study, 10, answers=test, training_answers=right[:5] + [[]] * 5)  # shared 0.5
    add_annotator(study, 20, answers=test, training_answers=right[:10] + [[]] * 10)  # shared 1.0, extra 0.0
    add_annotator(study, 20, answers=test, training_answers=right[:8] + [[]] * 2 + right[10:])  # 0.8, 1.0
    rows = training_overlaps(study=study, options=MetricOptions())
    assert rows == [
        {"pair": "10 vs 20", "subset": "shared", "examples": 10, "group_shots": 10, "mean": 75.0, "std": 25.0, "n": 2},
        {"pair": "10 vs 20", "subset": "shared", "examples": 10, "group_shots": 20, "mean": 90.0, "std": 10.0, "n": 2},
        {
            "pair": "10 vs 20",
            "subset": "only in the 20-shot set",
            "examples": 10,
            "group_shots": 20,
            "mean": 50.0,
            "std": 50.0,
            "n": 2,
        },
    ]


def test_difficulty_confidence_and_time(voted):
    hardest = item_difficulty(study=voted)
    # item 3 (gold pos): nobody right; item 2 and 4: one or two right
    assert hardest[0]["mean_s1"] == 0.0 and hardest[0]["wrong"] == 3
    assert [h["mean_s1"] for h in hardest] == sorted(h["mean_s1"] for h in hardest)
    confidence = confidence_vs_correctness(study=voted)
    assert [(lv["confidence"], lv["n"], lv["mean_s1"]) for lv in confidence["levels"]] == [
        (1, 4, 75.0),
        (3, 4, 50.0),
        (5, 4, 25.0),
    ]
    assert confidence["pearson_confidence_s1"] < 0
    (time,) = time_per_item(study=voted)
    assert (time["phase"], time["items"], time["mean_seconds"]) == ("test", 12, 1.0)
    assert set(study_analyses(study=voted, options=MetricOptions())) >= {"training_overlaps", "conditions"}
