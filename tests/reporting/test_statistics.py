"""Bootstrap intervals, Krippendorff's alpha and Spearman's rho: hand-worked values and properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.reporting.agreement import krippendorff_alpha_nominal, spans_of_strings, token_marks
from annotation.reporting.analyses import confidence_vs_correctness, majority_and_agreement, study_analyses
from annotation.reporting.bootstrap import (
    IntervalOptions,
    cell_interval,
    cell_replicates,
    cell_value,
    draw,
    gap_replicates,
    paired_gap,
    percentile_interval,
    score_matrix,
)
from annotation.reporting.correlation import (
    average_ranks,
    cluster_codes,
    spearman,
    spearman_replicates,
    spearman_with_interval,
)
from annotation.reporting.options import MetricOptions, ReportError
from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, make_study

POS, NEG = ["positive"], ["negative"]
NAN = math.nan

# --- bootstrap ---


def _direct_replicate(matrix, annotators, items) -> float:
    """One resample computed the long way: the drawn annotators' means over the drawn items they scored."""
    means = []
    for a in annotators:
        values = [matrix[a][i] for i in items if not math.isnan(matrix[a][i])]
        if values:
            means.append(sum(values) / len(values))
    return sum(means) / len(means) if means else NAN


def test_bootstrap_replicates_match_a_direct_computation_with_a_fixed_seed():
    matrix = np.array([[1.0, 0.0, 0.5, 1.0], [0.0, NAN, 1.0, 1.0], [0.25, 0.75, NAN, 0.0]])
    rng = np.random.default_rng(20211206)
    annotator_draws, item_draws = draw(rng, 200, 3), draw(rng, 200, 4)
    fast = cell_replicates(matrix, annotator_draws, item_draws)
    slow = [_direct_replicate(matrix.tolist(), a, i) for a, i in zip(annotator_draws, item_draws, strict=True)]
    np.testing.assert_allclose(fast, slow, equal_nan=True)


def test_one_annotator_two_items_gives_the_hand_worked_interval():
    # Items scored 0 and 1: a resample of items is {0,0}, {0,1}, {1,0} or {1,1}, so the cell is 0, 0.5 or 1
    # with probabilities 1/4, 1/2, 1/4; with 2000 resamples the 2.5th and 97.5th percentiles are 0 and 1.
    interval = cell_interval({"a": {1: 0.0, 2: 1.0}})
    assert (interval.low, interval.high, interval.resamples) == (0.0, 1.0, 2000)


def test_the_interval_is_95_percent_where_90_percent_would_differ():
    # One annotator, items scored 0, 0, 1: a resample's cell is k/3 with k ~ Binomial(3, 1/3), so
    # P(cell <= 2/3) = 26/27 = 0.963. That is above 0.95 and below 0.975: the 95% interval's upper
    # bound is 1, a 90% interval's would be 2/3. Both lower bounds are 0 (P(cell = 0) = 8/27).
    scores = {"a": {1: 0.0, 2: 0.0, 3: 1.0}}
    interval = cell_interval(scores)
    assert (interval.low, interval.high) == (0.0, 1.0)
    narrower = cell_interval(scores, IntervalOptions(level=0.90))
    assert (narrower.low, narrower.high) == (0.0, pytest.approx(2 / 3))


def test_two_annotators_who_disagree_fully_span_zero_to_one():
    # One item; annotator a scores 1, b scores 0. Resampling annotators gives 1, 0.5 or 0.
    interval = cell_interval({"a": {1: 1.0}, "b": {1: 0.0}})
    assert (interval.low, interval.high) == (0.0, 1.0)


def test_a_constant_cell_has_a_degenerate_interval_and_no_scores_no_interval():
    interval = cell_interval({"a": {1: 0.5, 2: 0.5}, "b": {1: 0.5, 2: 0.5}})
    assert (interval.low, interval.high) == (0.5, 0.5)
    assert cell_interval({}) is None
    assert cell_interval({"a": {}}) is None


def test_bootstrap_is_reproducible_and_the_seed_matters():
    scores = {p: {i: float((p * 7 + i * 3) % 5) / 4 for i in range(20)} for p in range(3)}
    first = cell_interval(scores, IntervalOptions(seed=1))
    assert first == cell_interval(scores, IntervalOptions(seed=1))
    assert first != cell_interval(scores, IntervalOptions(seed=2))


def test_interval_options_refuse_bad_values():
    with pytest.raises(ReportError):
        IntervalOptions(resamples=5)
    with pytest.raises(ReportError):
        IntervalOptions.from_params({"seed": "abc"})
    assert IntervalOptions.from_params({"seed": "7", "resamples": ""}) == IntervalOptions(seed=7)


def test_paired_gap_hand_worked():
    # Humans: item 1 all right, item 2 all wrong; the model gets both wrong. Gap = 0.5; a resample of
    # the two items gives human 0, 0.5 or 1 against model 0 -> the interval [0, 1].
    gap = paired_gap({"a": {1: 1.0, 2: 0.0}, "b": {1: 1.0, 2: 0.0}}, {1: 0.0, 2: 0.0})
    assert (gap.human, gap.model, gap.gap, gap.items) == (0.5, 0.0, 0.5, 2)
    assert (gap.interval.low, gap.interval.high) == (0.0, 1.0)


def test_paired_gap_is_zero_when_the_model_scores_like_every_human():
    scores = {"a": {i: float(i % 2) for i in range(10)}, "b": {i: float(i % 2) for i in range(10)}}
    gap = paired_gap(scores, {i: float(i % 2) for i in range(10)})
    assert gap.gap == 0 and (gap.interval.low, gap.interval.high) == (0.0, 0.0)


def _three_unequal_annotators() -> dict[str, dict[int, float]]:
    """40 items; annotators right on 10 %, 50 % and 95 % of them (a crowd cell of three)."""
    rng = np.random.default_rng(5)
    return {name: {i: float(rng.random() < p) for i in range(40)} for name, p in (("a", 0.1), ("b", 0.5), ("c", 0.95))}


def test_the_gap_interval_resamples_the_annotators_too():
    scores, model = _three_unequal_annotators(), {i: float(i % 2) for i in range(40)}
    options = IntervalOptions(resamples=1000)
    gap = paired_gap(scores, model, options)
    # The interval the gap had with the annotators kept fixed (only the items drawn), same seed.
    matrix, _, items = score_matrix(scores)
    rng = np.random.default_rng(options.seed)
    draw(rng, options.resamples, matrix.shape[0])  # the annotator draw, unused here
    item_draws = draw(rng, options.resamples, len(items))
    everyone = np.tile(np.arange(matrix.shape[0]), (options.resamples, 1))
    model_vector = np.array([model[i] for i in items])
    fixed = percentile_interval(gap_replicates(matrix, model_vector, everyone, item_draws), options.level)
    assert gap.interval.high - gap.interval.low > 2 * (fixed.high - fixed.low)
    assert "annotators and test items resampled" in options.as_dict()["gap_method"]
    assert "annotators and test items" in options.describe().split("model gaps:")[1]


def test_the_spearman_interval_resamples_annotators_and_items_not_answers():
    # Each annotator rates every item with one confidence: 1 (10 % right), 3 (50 %), 5 (95 %). Across
    # answers that looks like a strong, sure correlation; with three annotators it is not sure at all.
    scores = _three_unequal_annotators()
    confidence = {"a": 1, "b": 3, "c": 5}
    pairs = [(confidence[a], s, a, i) for a, by_item in scores.items() for i, s in by_item.items()]
    x, y = [p[0] for p in pairs], [p[1] for p in pairs]
    clustered = spearman_with_interval(
        x, y, IntervalOptions(resamples=1000), annotators=[p[2] for p in pairs], items=[p[3] for p in pairs]
    )
    rng = np.random.default_rng(1)
    xs, ys = np.array(x, dtype=float), np.array(y, dtype=float)
    naive = [spearman(xs[d], ys[d]) for d in rng.integers(0, len(x), size=(1000, len(x)))]
    low, high = np.percentile(naive, [2.5, 97.5])
    assert clustered.interval.high - clustered.interval.low > 2 * (high - low)
    with pytest.raises(ValueError):
        spearman_with_interval(x, y, annotators=["a"], items=[1])


matrices = st.integers(1, 4).flatmap(
    lambda rows: st.integers(1, 6).flatmap(
        lambda cols: st.lists(
            st.lists(st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.0])), min_size=cols, max_size=cols),
            min_size=rows,
            max_size=rows,
        )
    )
)


@settings(max_examples=60, deadline=None)
@given(matrices)
def test_bootstrap_properties(rows):
    scores = {a: {i: v for i, v in enumerate(row) if v is not None} for a, row in enumerate(rows)}
    values = [v for row in rows for v in row if v is not None]
    interval = cell_interval(scores, IntervalOptions(resamples=200))
    if not values:
        assert interval is None
        return
    assert min(values) - 1e-12 <= interval.low <= interval.high <= max(values) + 1e-12
    matrix, annotators, items = score_matrix(scores)
    identity = cell_replicates(matrix, np.array([range(len(annotators))]), np.array([range(len(items))]))
    assert identity[0] == pytest.approx(cell_value(matrix))  # the "resample" that draws everyone once


# --- Krippendorff's alpha ---


def test_alpha_matches_krippendorffs_nominal_example_with_missing_data():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units, gaps; alpha 0.743.
    table = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    ratings = {c: {u: v for u, v in enumerate(row) if v is not None} for c, row in enumerate(table)}
    assert krippendorff_alpha_nominal(ratings) == pytest.approx(0.743, abs=5e-4)


def test_alpha_matches_krippendorffs_two_coder_binary_example():
    # Same paper, two observers, ten units, binary data: alpha 0.095.
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    ratings = {"A": dict(enumerate(a)), "B": dict(enumerate(b))}
    assert krippendorff_alpha_nominal(ratings) == pytest.approx(0.095, abs=5e-4)


def test_alpha_is_undefined_without_variation_or_pairable_units():
    assert math.isnan(krippendorff_alpha_nominal({"a": {1: "x", 2: "x"}, "b": {1: "x", 2: "x"}}))
    assert math.isnan(krippendorff_alpha_nominal({"a": {1: "x"}, "b": {2: "y"}}))
    assert math.isnan(krippendorff_alpha_nominal({}))


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from("abcde"),
        st.dictionaries(
            st.one_of(st.integers(0, 6), st.tuples(st.integers(0, 3), st.integers(0, 3))),
            st.sampled_from(["x", "y", "z"]),
        ),
    )
)
def test_alpha_agrees_with_the_krippendorff_package(ratings):
    import krippendorff

    # The package reckons from the coder × unit matrix (NaN: not rated), with units that fewer than two coders
    # rated left out and the undefined cases (no such unit, one value among them) decided here.
    units = sorted({u for r in ratings.values() for u in r}, key=repr)
    codes = {"x": 0, "y": 1, "z": 2}
    rows = [[codes.get(r.get(u), np.nan) for u in units] for r in ratings.values() if r]
    matrix = np.array(rows, dtype=float).reshape(len(rows), len(units))
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    if pairable.size == 0 or len(set(pairable[~np.isnan(pairable)].tolist())) < 2:
        assert math.isnan(krippendorff_alpha_nominal(ratings))
    else:
        expected = krippendorff.alpha(reliability_data=pairable, level_of_measurement="nominal")
        assert krippendorff_alpha_nominal(ratings) == pytest.approx(expected, abs=1e-9)


def test_alpha_values_may_be_any_hashable_labels():
    assert krippendorff_alpha_nominal({"a": {1: ("pos",), 2: ("neg",)}, "b": {1: ("pos",), 2: ("neg",)}}) == 1.0


def test_token_marks_and_strings_placed_in_the_text():
    text = "Ada Lovelace met Charles Babbage ."
    assert token_marks(text, [(0, 12)]) == [1, 1, 0, 0, 0, 0]
    assert token_marks(text, [(4, 5)]) == [0, 1, 0, 0, 0, 0]  # any overlap marks the token
    assert spans_of_strings(text, ["Charles Babbage", "", "Nobody"]) == [(17, 32)]


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.text(alphabet="ab", min_size=1, max_size=3), max_size=8),
    gaps=st.lists(st.integers(1, 3), min_size=8, max_size=8),
    spans=st.lists(st.tuples(st.integers(-2, 40), st.integers(-2, 40)), max_size=4),
)
def test_token_marks_mark_every_token_a_span_overlaps_and_no_other(words, gaps, spans):
    text = "".join(" " * gap + word for word, gap in zip(words, gaps, strict=False))
    # Each token's characters, found one by one: a token is marked when a span holds any of them, or (an
    # empty or reversed span) lies strictly inside it.
    tokens, start = [], None
    for at, char in enumerate(text + " "):
        if char != " " and start is None:
            start = at
        elif char == " " and start is not None:
            tokens.append((start, at))
            start = None
    expected = [
        int(any(set(range(s, e)) & set(range(t_s, t_e)) or t_s < e <= s < t_e for s, e in spans)) for t_s, t_e in tokens
    ]
    assert token_marks(text, spans) == expected


@pytest.fixture
def voted(sst2):
    """Gold pos, neg, pos, neg. Ratings per item: (pos,pos,pos) (pos,pos,neg) (neg,neg,neg) (pos,neg,neg)."""
    study = make_study(sst2, shots=(0,))
    add_annotator(study, 0, answers=[POS, POS, NEG, POS], confidence=5)  # item S1 1, 0, 0, 0
    add_annotator(study, 0, answers=[POS, POS, NEG, NEG], confidence=3)  # 1, 0, 0, 1
    add_annotator(study, 0, answers=[POS, NEG, NEG, NEG], confidence=1)  # 1, 1, 0, 1
    return study


def test_alpha_per_condition_hand_worked(voted):
    # Coincidences (each pair of a unit's 3 values weighs 1/2): o(pos,pos) = 3 + 1, o(neg,neg) = 3 + 1,
    # o(pos,neg) = o(neg,pos) = 2; n = 12, n_pos = n_neg = 6.
    # alpha = 1 - (n - 1) * (o_pn + o_np) / (2 * n_pos * n_neg) = 1 - 11 * 4 / 72 = 28 / 72.
    (row,) = majority_and_agreement(study=voted, options=MetricOptions())
    assert row["alpha"]["value"] == round(28 / 72, 4)
    assert row["alpha"]["coders"] == 3
    assert row["agreement"]["value"] == round(1 / 3, 4)  # Fleiss' kappa beside it, unchanged


def test_alpha_treats_a_skip_as_missing(voted, sst2):
    add_annotator(voted, 0, answers=[POS, None, None, None])  # one more rating of item 1 only
    (row,) = majority_and_agreement(study=voted, options=MetricOptions())
    ratings = [["pos"] * 4, ["pos", "pos", "neg"], ["neg"] * 3, ["pos", "neg", "neg"]]
    by_coder = {c: {u: r[c] for u, r in enumerate(ratings) if c < len(r)} for c in range(4)}
    assert row["alpha"]["value"] == round(krippendorff_alpha_nominal(by_coder), 4)
    assert row["alpha"]["coders"] == 4


def test_span_alpha_is_token_level_and_skips_are_missing(db):
    task = make_span_task(slug="ner-alpha", n_test=1)  # "Ada Lovelace met Charles Babbage in London . (0)"
    study = make_study(task, shots=(0,))
    add_annotator(study, 0, answers=[[(0, 12)]])  # tokens 1 1 0 0 0 0 0 0 0
    add_annotator(study, 0, answers=[[(0, 12), (17, 32)]])  # tokens 1 1 0 1 1 0 0 0 0
    add_annotator(study, 0, answers=[None])  # skipped: missing
    # 9 two-value units: 2 agree on 1, 5 agree on 0, 2 disagree. o_11 = 4, o_00 = 10, o_01 = o_10 = 2;
    # n = 18, n_1 = 6, n_0 = 12: alpha = 1 - 17 * 4 / (2 * 12 * 6) = 76 / 144.
    (row,) = majority_and_agreement(study=study, options=MetricOptions())
    assert row["alpha"]["value"] == round(76 / 144, 4)
    assert "token" in row["alpha"]["unit"]
    assert study_analyses(study=study, options=MetricOptions())["task_agreement"]["value"] == round(76 / 144, 4)


# --- Spearman ---


def test_average_ranks_share_ties():
    assert average_ranks(np.array([10, 20, 20, 30])).tolist() == [1, 2.5, 2.5, 4]


def test_spearman_hand_worked_with_ties():
    # ranks x 1, 2.5, 2.5, 4 and y 1, 3, 2, 4: sum dx*dy = 4.5, sum dx^2 = 4.5, sum dy^2 = 5.
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1], [1]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.floats(0, 1)), min_size=2, max_size=30))
def test_spearman_properties(pairs):
    x = [a for a, _ in pairs]
    y = [b for _, b in pairs]
    rho = spearman(x, y)
    if math.isnan(rho):
        return
    assert -1 - 1e-9 <= rho <= 1 + 1e-9
    assert spearman(y, x) == pytest.approx(rho)
    assert spearman([v**3 + 2 for v in x], y) == pytest.approx(rho)  # ranks only: any increasing transform


def test_spearman_interval_is_reproducible_and_brackets_perfect_agreement():
    five = {"annotators": ["a", "a", "b", "b", "c"], "items": [1, 2, 1, 2, 1]}
    result = spearman_with_interval([1, 2, 3, 4, 5], [0.1, 0.2, 0.3, 0.4, 0.5], IntervalOptions(resamples=500), **five)
    assert result.rho == 1.0 and (result.interval.low, result.interval.high) == (1.0, 1.0)
    four = {"annotators": ["a", "a", "b", "b"], "items": [1, 2, 1, 2]}
    assert spearman_with_interval([1, 2, 3, 1], [0, 1, 1, 0], **four) == spearman_with_interval(
        [1, 2, 3, 1], [0, 1, 1, 0], **four
    )


def test_confidence_analysis_reports_spearman_hand_worked(voted):
    # Confidence 5, 3, 1 for annotators with item S1 (1,0,0,0), (1,0,0,1), (1,1,0,1):
    # x ranks 10.5 / 6.5 / 2.5, y ranks 3.5 (zeros) / 9.5 (ones): sum dxdy = -48, sums of squares 128 and 108,
    # rho = -48 / sqrt(128 * 108) = -1 / sqrt(6).
    spearman_row = confidence_vs_correctness(study=voted)["spearman"]
    assert spearman_row["rho"] == round(-1 / math.sqrt(6), 4)
    assert spearman_row["n"] == 12
    assert spearman_row["ci_low"] <= spearman_row["rho"] <= spearman_row["ci_high"]
    assert spearman_row["seed"] == 20211206 and spearman_row["resamples"] == 2000


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 5), st.integers(1, 5), st.sampled_from([0.0, 0.5, 1.0])),
        min_size=2,
        max_size=30,
    ),
    st.integers(0, 2**32 - 1),
)
def test_spearman_replicates_are_rho_of_the_pairs_repeated_as_drawn(pairs, seed):
    # The long way: each resample's pairs copied as often as their annotator and item were drawn, then spearman().
    who, n_annotators = cluster_codes([p[0] for p in pairs])
    what, n_items = cluster_codes([p[1] for p in pairs])
    xs, ys = np.array([p[2] for p in pairs], dtype=float), np.array([p[3] for p in pairs], dtype=float)
    rng = np.random.default_rng(seed)
    annotator_draws, item_draws = draw(rng, 150, n_annotators), draw(rng, 150, n_items)
    fast = spearman_replicates(xs, ys, who, what, annotator_draws, item_draws)
    slow = []
    for drawn_annotators, drawn_items in zip(annotator_draws, item_draws, strict=True):
        times = (
            np.bincount(drawn_annotators, minlength=n_annotators)[who]
            * np.bincount(drawn_items, minlength=n_items)[what]
        )
        slow.append(spearman(np.repeat(xs, times), np.repeat(ys, times)))
    np.testing.assert_allclose(fast, slow, equal_nan=True, atol=1e-12)
