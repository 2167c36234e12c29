"""Krippendorff's alpha's engine (``agreement.Coded``, ``coded``, ``alpha_of_coincidences``): the mutants the
``majority`` area's first run of it left, each expectation worked out by hand."""

import math
import warnings

import numpy as np
import pytest

from annotation.reporting.agreement import Coded, alpha_of_coincidences, coded, item_coincidences, nominal_alpha
from annotation.reporting.alpha import alpha_interval


def test_alpha_of_each_matrix_of_a_stack_is_its_own():
    # Two matrices, values x and y. The first: o_xx 4, o_xy = o_yx 1, o_yy 2; n_x 5, n_y 3, n 8:
    # alpha = 1 - 7 * 2 / (2 * 5 * 3) = 1 - 14/30. The second: o_xx 2, o_xy = o_yx 2, o_yy 0; n_x 4, n_y 2,
    # n 6: alpha = 1 - 5 * 4 / (2 * 4 * 2) = 1 - 20/16.
    stack = np.array([[[4.0, 1.0], [1.0, 2.0]], [[2.0, 2.0], [2.0, 0.0]]])
    assert alpha_of_coincidences(stack) == pytest.approx([1 - 14 / 30, 1 - 20 / 16])


def test_alpha_of_a_matrix_with_a_fraction_of_expected_disagreement():
    # Coincidences are fractions in general: o_xx 0.5, o_xy = o_yx 0.25, o_yy 0; n_x 0.75, n_y 0.25, n 1:
    # expected 2 * 0.75 * 0.25 = 0.375, observed 0.5: alpha = 1 - 0 * 0.5 / 0.375 = 1.
    assert alpha_of_coincidences(np.array([[[0.5, 0.25], [0.25, 0.0]]]))[0] == pytest.approx(1.0)
    # n 2: o_xx 1.5, o_xy = o_yx 0.25; n_x 1.75, n_y 0.25: 1 - 1 * 0.5 / (2 * 1.75 * 0.25) = 1 - 0.5/0.875.
    assert alpha_of_coincidences(np.array([[[1.5, 0.25], [0.25, 0.0]]]))[0] == pytest.approx(1 - 0.5 / 0.875)


def test_undefined_alpha_is_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by zero reckoned and thrown away
        result = alpha_of_coincidences(np.array([[[3.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]))
    assert np.isnan(result).all()


def test_coded_counts_each_unit_under_its_item_and_names_values_and_coders():
    ratings = {
        "a": {(7, 0): "x", (7, 1): "y", (9, 0): "x"},
        "b": {(7, 0): "x", (7, 1): "x"},
        "c": {},  # no answer: no coder
    }
    data = coded(ratings)
    assert data.values == ("x", "y") and data.coders == {"a", "b"}
    assert sorted(data.items) == [7, 9]
    # Item 7: token 0 given x twice; token 1 y once, x once. Item 9: token 0 x once.
    assert sorted(map(tuple, data.items[7].tolist())) == [(1.0, 1.0), (2.0, 0.0)]
    assert data.items[9].tolist() == [[1.0, 0.0]]
    # Per item, the pairable units' coincidences: item 7's token 0 gives o_xx 2; token 1 o_xy = o_yx 1.
    shares = item_coincidences(data)
    assert list(shares) == [7] and shares[7].tolist() == [[2.0, 1.0], [1.0, 0.0]]


def test_coded_takes_values_of_any_types_together():
    # Labels of two types at once (a number and a text): sorted by their repr, not compared to each other.
    data = coded({"a": {1: 0, 2: "x"}, "b": {1: 0, 2: "x"}})
    assert data.values == ("x", 0) and nominal_alpha(data) == 1.0  # "'x'" before "0"


def test_merged_adds_the_counts_of_an_item_and_joins_the_coders():
    first = Coded(("x", "y"), {1: np.array([[1.0, 0.0]])}, {"a"})
    second = Coded(("x", "y"), {1: np.array([[1.0, 1.0]]), 2: np.array([[0.0, 2.0]])}, {"b", "c"})
    whole = Coded.merged([first, second])
    assert whole.values == ("x", "y") and whole.coders == {"a", "b", "c"}
    assert whole.items[1].tolist() == [[2.0, 1.0]] and whole.items[2].tolist() == [[0.0, 2.0]]
    assert first.items[1].tolist() == [[1.0, 0.0]] and first.coders == {"a"}  # the parts are left as they were
    empty = Coded.merged([])
    assert (empty.values, empty.items, empty.coders) == ((), {}, set()) and math.isnan(nominal_alpha(empty))


def test_merged_refuses_parts_that_number_values_differently():
    with pytest.raises(ValueError, match=r"^merged parts must number their values alike$"):
        Coded.merged([Coded(("x", "y")), Coded(("y", "x"))])


def test_the_interval_needs_the_values_given():
    # Two items each rated x by two coders: one value only, nothing to resample; with a y among them, there is.
    assert alpha_interval(coded({"a": {1: "x", 2: "x"}, "b": {1: "x", 2: "x"}})) is None
    interval = alpha_interval(coded({"a": {1: "x", 2: "y", 3: "x"}, "b": {1: "x", 2: "y", 3: "y"}}))
    assert interval is not None


def test_an_item_without_units_has_no_share_and_moves_no_other():
    # A span item whose context has no token (no unit) beside one with two tokens rated by two coders: the
    # first token given 1 by both, the second 0 and 1. By hand, per unit (n_uv n_uw - [v = w] n_uv) / (n_u - 1):
    # token 1 (no 0, two 1s) gives o_11 = (2 * 2 - 2) / 1 = 2; token 2 (one 0, one 1) gives o_01 = o_10 = 1.
    data = Coded((0, 1), {"empty": np.zeros((0, 2)), "two": np.array([[0.0, 2.0], [1.0, 1.0]])}, {"a", "b"})
    shares = item_coincidences(data)
    assert list(shares) == ["two"]
    np.testing.assert_array_equal(shares["two"], [[0.0, 1.0], [1.0, 2.0]])
