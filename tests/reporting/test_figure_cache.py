"""Bootstrap figures are kept under a digest of their inputs: a write that changes an input recomputes them."""

import numpy as np
import pytest
from django.core.cache import cache

from annotation.reporting import bootstrap, correlation, figure_cache
from annotation.reporting.options import MetricOptions
from annotation.reporting.tables import build_table
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

SCORES = {"a": {1: 1.0, 2: 0.0, 3: 1.0}, "b": {1: 1.0, 2: 1.0, 3: 0.0}, "c": {1: 0.0, 2: 1.0, 3: 1.0}}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def test_a_kept_cell_interval_is_the_bootstrap_s_and_a_changed_score_gets_its_own():
    first = figure_cache.cell_interval(SCORES)
    assert first == bootstrap.cell_interval(SCORES)
    assert figure_cache.cell_interval(SCORES) == first  # served again
    changed = {**SCORES, "a": {1: 0.0, 2: 0.0, 3: 0.0}, "b": {1: 0.0, 2: 0.0, 3: 1.0}}
    assert figure_cache.cell_interval(changed) == bootstrap.cell_interval(changed) != first


def test_a_kept_gap_follows_the_model_s_scores():
    model = {1: 1.0, 2: 0.0, 3: 0.0}
    assert figure_cache.paired_gap(SCORES, model) == bootstrap.paired_gap(SCORES, model)
    other = {1: 0.0, 2: 0.0, 3: 0.0}
    assert (
        figure_cache.paired_gap(SCORES, other)
        == bootstrap.paired_gap(SCORES, other)
        != bootstrap.paired_gap(SCORES, model)
    )
    assert figure_cache.paired_gap(SCORES, {9: 1.0}) is None  # "no figure" is kept too, and stays None


def test_a_kept_correlation_follows_who_gave_each_pair():
    rng = np.random.default_rng(1)
    x, y = list(rng.integers(1, 6, 40).astype(float)), list(rng.integers(0, 2, 40).astype(float))
    items = [i % 10 for i in range(40)]
    by_four = [i % 4 for i in range(40)]
    by_two = [i % 2 for i in range(40)]
    kept = figure_cache.spearman_with_interval(x, y, annotators=by_four, items=items)
    assert kept == correlation.spearman_with_interval(x, y, annotators=by_four, items=items)
    regrouped = figure_cache.spearman_with_interval(x, y, annotators=by_two, items=items)
    assert regrouped == correlation.spearman_with_interval(x, y, annotators=by_two, items=items)
    assert regrouped.interval != kept.interval


def _intervals(table):
    return [(c.ci_low, c.ci_high) for row in table.human_rows() for c in row.cells]


def test_the_table_after_a_new_worker_is_the_one_computed_afresh(sst2):
    study = make_study(sst2, slug="cache-sst2")
    gold = gold_answers(sst2)
    add_annotator(study, 0, answers=gold)
    add_annotator(study, 0, answers=[wrong(g, sst2) if i % 2 else g for i, g in enumerate(gold)])
    before = _intervals(build_table(studies=[study], options=MetricOptions()))  # now kept
    add_annotator(study, 0, answers=[wrong(g, sst2) for g in gold])  # a write: a third, all wrong
    after = _intervals(build_table(studies=[study], options=MetricOptions()))
    cache.clear()
    assert after == _intervals(build_table(studies=[study], options=MetricOptions())) != before
