"""The replay harness checks the app with an S1 of its own: it must agree with the app's scorer."""

from hypothesis import given
from hypothesis import strategies as st

from bench.stats import expected_s1, gc_summary, latency_summary, percentile, pooled_rate
from tasks_app import scoring

answer_sets = st.frozensets(st.sampled_from(["a", "b", "c", "New York", ""]), max_size=4)


@given(answer_sets, answer_sets)
def test_the_harness_s1_equals_the_scorer_s1(answer, gold):
    assert expected_s1([(answer, gold)]) == scoring.s1(sorted(answer), sorted(gold))


def test_the_harness_mean_is_worked_by_hand():
    pairs = [(frozenset(), frozenset()), (frozenset({"a", "b"}), frozenset({"a"})), (frozenset({"x"}), frozenset())]
    assert abs(expected_s1(pairs) - (1 + 2 / 3 + 0) / 3) < 1e-12
    assert expected_s1([]) is None


def test_percentiles_are_nearest_rank():
    values = list(range(1, 101))
    assert (percentile(values, 50), percentile(values, 99), percentile(values, 100)) == (50, 99, 100)
    assert latency_summary([])["n"] == 0


def test_the_gc_summary_counts_only_requests_that_collected():
    assert gc_summary([0, 1500, 0, 250_000]) == {"requests": 4, "requests_with_gc": 2, "total_s": 0.25, "max_ms": 250.0}
    assert gc_summary([]) == {"requests": 0, "requests_with_gc": 0, "total_s": 0.0, "max_ms": 0.0}


def test_reference_rounds_pool_their_requests_and_seconds():
    # 6,000 requests in 2 s and 6,000 in 6 s: 1,500/s over the 8 s, not the mean rate 2,000/s
    assert pooled_rate([{"requests": 6000, "seconds": 2.0}, {"requests": 6000, "seconds": 6.0}]) == 1500
    assert pooled_rate([{"requests": 10, "seconds": 4.0}]) == 2.5
