"""Best individual, mean and majority per cell; each cell with an exclusion rule lifted (figures by hand)."""

from __future__ import annotations

import pytest

from annotation.models import Participation
from annotation.reporting.aggregates import cell_aggregates, robustness
from annotation.reporting.statement import build_statement, render_statement
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

State = Participation.State
Kind = Participation.ExclusionKind


@pytest.fixture
def ran(sst2):
    study = make_study(sst2, shots=(0, 10), slug="agg")
    g = gold_answers(sst2)
    w = [wrong(x, sst2) for x in g]
    add_annotator(study, 0, answers=g)  # 100
    add_annotator(study, 0, answers=[g[0], g[1], g[2], w[3]])  # 75
    add_annotator(study, 0, answers=[g[0], g[1], w[2], w[3]])  # 50
    attention = add_annotator(study, 0, answers=[g[0], w[1], w[2], w[3]], state=State.EXCLUDED)  # 25, whole test
    filtered = add_annotator(study, 10, answers=[], state=State.EXCLUDED)  # excluded before any test item
    add_annotator(study, 10, answers=g)  # 100
    Participation.objects.filter(pk=attention.pk).update(exclusion_kind=Kind.ATTENTION)
    Participation.objects.filter(pk=filtered.pk).update(exclusion_kind=Kind.TRAINING_FILTER)
    return study


def test_best_mean_and_majority_by_hand(ran):
    cells = {c.shots: c for c in cell_aggregates(studies=[ran])}
    zero = cells[0]
    assert (zero.workers, zero.best, zero.mean) == (3, 100.0, 75.0)
    # Items 0-2: two or three of the three vote gold; item 3: two vote the same wrong label.
    assert (zero.majority_strict, zero.majority_plurality, zero.majority.no_majority) == (75.0, 75.0, 0)
    assert (cells[10].best, cells[10].mean, cells[10].majority_strict) == (100.0, 100.0, 100.0)


def test_each_rule_lifted_puts_back_only_whole_tests(ran):
    effects = {e.rule: e for e in robustness(studies=[ran])}
    attention = effects[Kind.ATTENTION]
    assert (attention.excluded, attention.put_back) == (1, 1)
    zero = next(c for c in attention.cells if c.shots == 0)
    assert (zero.reported, zero.lifted, zero.moved, zero.put_back) == (75.0, 62.5, -12.5, 1)
    assert "1 of 1 excluded put back" in attention.text() and "75.0 → 62.5 (-12.5)" in attention.text()
    training = effects[Kind.TRAINING_FILTER]
    assert (training.excluded, training.put_back) == (1, 0)
    assert training.text().endswith("1 excluded, none with a whole test to put back")
    assert effects[Kind.INTEGRITY].text().endswith("nobody excluded by it")
    assert (effects["all"].excluded, effects["all"].put_back) == (2, 1)


def test_the_statement_says_both(ran):
    text = render_statement(build_statement(study=ran), "markdown")
    assert "best individual 100.0, mean 75.0, majority 75.0" in text
    assert "Failed attention checks: 1 of 1 excluded put back" in text
