"""The S1 scorer: hand-worked values, options, aggregation and properties."""

import ast
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasks_app.scoring import (
    answer_set,
    mean,
    mean_and_std,
    mean_s1,
    normalize_answer,
    s1,
    s1_best_of,
    skip_score,
    std,
    stored_skip_score,
)

SCORING_PY = Path(__file__).resolve().parents[2] / "tasks_app" / "scoring.py"


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        # both empty, in every spelling of the empty set
        ([], [], 1.0),
        ([""], [], 1.0),
        ([], [""], 1.0),
        ([""], [""], 1.0),
        # exactly one empty
        (["Paris"], [], 0.0),
        ([], ["Paris"], 0.0),
        ([""], ["Paris"], 0.0),
        # exact match, order and duplicates do not matter
        (["positive"], ["positive"], 1.0),
        (["a", "b"], ["b", "a"], 1.0),
        (["a", "a", "b"], ["a", "b"], 1.0),
        (["a", "b"], ["a", "a", "b", "b"], 1.0),
        # no overlap
        (["negative"], ["positive"], 0.0),
        (["a", "b"], ["c"], 0.0),
        # partial overlap: P = 1/2, R = 1 -> 2/3
        (["a", "b"], ["a"], 2 / 3),
        # P = 1, R = 1/3 -> 1/2
        (["a"], ["a", "b", "c"], 0.5),
        # P = 2/3, R = 2/4 -> 2*(2/3)*(1/2)/(2/3+1/2) = 4/7
        (["a", "b", "x"], ["a", "b", "c", "d"], 4 / 7),
        # P = 1/2, R = 1/2 -> 1/2 (duplicates in the gold collapse first)
        (["a", "x", "x"], ["a", "a", "b"], 0.5),
        # exact match is case and punctuation sensitive by default
        (["The Beatles"], ["the beatles"], 0.0),
        (["Paris."], ["Paris"], 0.0),
    ],
)
def test_s1_matches_hand_worked_values(prediction, gold, expected):
    assert s1(prediction, gold) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        (["The Beatles"], ["beatles"], 1.0),
        (["Paris."], ["paris"], 1.0),
        (["  New   York "], ["new york"], 1.0),
        (["an apple", "pear"], ["apple"], 2 / 3),
        (["London"], ["Paris"], 0.0),
    ],
)
def test_normalize_option_compares_squad_normalised_strings(prediction, gold, expected):
    assert s1(prediction, gold, normalize=True) == pytest.approx(expected)


def test_normalize_answer_lowercases_and_drops_punctuation_and_articles():
    assert normalize_answer("The  Quick, Brown Fox!") == "quick brown fox"


def test_an_answer_that_normalises_to_nothing_still_counts_as_an_answer():
    assert answer_set(["the"], normalize=True) == frozenset({"the"})
    assert s1(["the"], [], normalize=True) == 0.0


def test_answers_must_be_a_collection_of_strings():
    with pytest.raises(TypeError):
        s1("Paris", ["Paris"])
    with pytest.raises(TypeError):
        s1([1], ["1"])


@pytest.mark.parametrize(
    ("prediction", "golds", "expected"),
    [
        (["Paris"], [["Paris"], ["in Paris"]], 1.0),
        (["in Paris"], [["Paris"], ["in Paris"]], 1.0),
        (["Lyon"], [["Paris"], ["in Paris"]], 0.0),
        (["a", "b"], [["a"], ["a", "b", "c"]], 0.8),  # 2/3 vs 4/5 -> best 4/5
        ([], [], 1.0),  # no alternatives: the gold is the empty set
        (["x"], [], 0.0),
    ],
)
def test_best_of_keeps_the_best_alternative(prediction, golds, expected):
    assert s1_best_of(prediction, golds) == pytest.approx(expected)


def test_best_of_rejects_a_flat_list_of_strings():
    with pytest.raises(TypeError):
        s1_best_of(["Paris"], ["Paris", "in Paris"])  # would silently compare characters


def test_best_of_with_normalisation():
    assert s1_best_of(["the Eiffel Tower"], [["Eiffel Tower."], ["tower"]], normalize=True) == 1.0


@pytest.mark.parametrize(("gold", "expected"), [([], 1.0), ([""], 1.0), (["positive"], 0.0), (["a", "b"], 0.0)])
def test_a_skip_under_the_empty_policy_scores_as_the_empty_answer_and_is_what_is_stored(gold, expected):
    assert skip_score(gold, "empty") == stored_skip_score(gold) == s1([], gold) == expected


@pytest.mark.parametrize("gold", [[], [""], ["positive"], ["a", "b"]])
def test_a_skip_scores_zero_by_default_and_none_when_excluded(gold):
    assert skip_score(gold) == skip_score(gold, "zero") == 0.0
    assert skip_score(gold, "exclude") is None


def test_an_unknown_skip_policy_is_refused():
    with pytest.raises(ValueError, match="skip policy"):
        skip_score([], "half")


def test_an_annotators_score_is_the_mean_item_s1():
    predictions = [["positive"], [], ["a", "b"], ["Paris"]]
    golds = [["positive"], [""], ["a"], ["Lyon"]]
    assert mean_s1(predictions, golds) == pytest.approx((1 + 1 + 2 / 3 + 0) / 4)
    assert mean_s1([["the Paris"]], [["paris"]], normalize=True) == 1.0


def test_mean_s1_refuses_misaligned_lists_and_is_missing_for_no_items():
    with pytest.raises(ValueError, match="2 predictions for 1 gold answers"):
        mean_s1([["a"], ["b"]], [["a"]])
    assert math.isnan(mean_s1([], []))


def test_mean_and_population_std_of_annotator_scores():
    m, sd = mean_and_std([0.5, 0.7, 0.9])
    assert m == pytest.approx(0.7)
    assert sd == pytest.approx(0.16329931618554522)  # sqrt(0.08 / 3), ddof = 0 as in the paper


def test_sample_std_on_request():
    assert std([0.5, 0.7, 0.9], ddof=1) == pytest.approx(0.2)


@pytest.mark.parametrize(("values", "expected_std"), [([0.8], 0.0), ([1.0, 1.0], 0.0), ([0.0, 1.0], 0.5)])
def test_std_small_cases(values, expected_std):
    assert std(values) == pytest.approx(expected_std)


def test_mean_and_std_of_nothing_are_missing_not_zero():
    assert math.isnan(mean([]))
    assert math.isnan(std([]))
    assert math.isnan(std([0.5], ddof=1))


answers = st.lists(st.text(alphabet="abcde ", max_size=4), max_size=6)


@given(answers, answers)
def test_s1_is_between_zero_and_one(prediction, gold):
    assert 0.0 <= s1(prediction, gold) <= 1.0


@given(answers)
def test_s1_of_a_set_with_itself_is_one(a):
    assert s1(a, a) == 1.0


@given(st.text(max_size=5), st.text(max_size=5))
def test_singleton_sets_reduce_to_accuracy(p, g):
    expected = 1.0 if answer_set([p]) == answer_set([g]) else 0.0
    assert s1([p], [g]) == expected


@given(answers, answers, st.data())
def test_duplicates_in_the_prediction_do_not_change_the_score(prediction, gold, data):
    doubled = prediction + data.draw(st.lists(st.sampled_from(prediction), max_size=4) if prediction else st.just([]))
    assert s1(doubled, gold) == s1(prediction, gold)


@given(answers, answers)
def test_s1_is_symmetric(a, b):
    assert s1(a, b) == pytest.approx(s1(b, a))


def test_scoring_module_imports_nothing_from_django():
    tree = ast.parse(SCORING_PY.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "django" not in imported
    assert "tasks_app" not in imported and "annotation" not in imported


def test_scoring_module_loads_with_django_unavailable():
    code = (
        "import sys, importlib.util\n"
        "sys.modules['django'] = None  # any django import now fails\n"
        f"spec = importlib.util.spec_from_file_location('scoring', {str(SCORING_PY)!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "assert mod.s1(['a'], ['a']) == 1.0\n"
        "assert not any(name.startswith('django') and sys.modules[name] for name in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
