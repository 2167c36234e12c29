"""The skip rule is written once (``scoring.SKIP_RULES``): the Python rule, the reports' SQL expression
and the analyses agree on every kind of item under every policy."""

from __future__ import annotations

import pytest

from annotation.models import Response
from annotation.reporting import analyses
from annotation.reporting.options import MetricOptions
from annotation.reporting.scores import annotator_rows, policy_score
from tasks_app import scoring
from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, gold_answers, make_study

pytestmark = pytest.mark.django_db

# Items 0..7 of an 8-item span task: golds [A, B], [], [G], [T], [A, B], [], [G], [T].
CASES = [
    "answered right",
    "skipped, empty gold",
    "skipped, non-empty gold",
    "answered empty, non-empty gold",
    "answered half right",
    "answered empty, empty gold",
    "answered wrong",
    "pending",
]
EXPECTED = {  # the policies by hand, so that the table itself is pinned too
    "zero": [1.0, 0.0, 0.0, 0.0, 2 / 3, 1.0, 0.0, None],
    "empty": [1.0, 1.0, 0.0, 0.0, 2 / 3, 1.0, 0.0, None],
    "exclude": [1.0, None, None, 0.0, 2 / 3, 1.0, 0.0, None],
}


@pytest.fixture
def every_case():
    task = make_span_task(slug="skip-rule", n_test=8)
    study = make_study(task, shots=(0,))
    gold = gold_answers(task)
    answers = [gold[0], None, None, [], gold[4][:1], [], ["Grace"], gold[7]]
    p = add_annotator(study, 0, answers=answers)
    last = Response.objects.filter(participation=p, phase=Response.Phase.TEST).order_by("position").last()
    assert last is not None
    Response.objects.filter(pk=last.pk).update(
        status=Response.Status.PENDING, score=None, answer=[], submitted_at=None, confidence=None
    )
    return study, p


@pytest.mark.parametrize("policy", scoring.SKIP_POLICIES)
def test_the_python_rule_and_the_sql_expression_agree_on_every_case(every_case, policy):
    _, p = every_case
    rows = (
        Response.objects.filter(participation=p, phase=Response.Phase.TEST)
        .order_by("position")
        .annotate(s=policy_score(MetricOptions(skip_policy=policy)))
        .values_list("status", "score", "example__gold_answers", "s")
    )
    python, sql = [], []
    for status, stored, gold, s in rows:
        skipped = status == Response.Status.SKIPPED
        python.append(scoring.policy_score(stored, skipped=skipped, policy=policy))
        sql.append(s)
        if skipped:  # the live path's stored score, under the policy, is the same rule
            assert scoring.skip_score(gold, policy) == python[-1]
    assert python == pytest.approx(EXPECTED[policy]), dict(zip(CASES, python, strict=True))
    assert sql == pytest.approx(EXPECTED[policy]), dict(zip(CASES, sql, strict=True))


@pytest.mark.parametrize("policy", scoring.SKIP_POLICIES)
def test_the_analyses_and_the_table_give_an_annotator_the_same_mean(every_case, policy):
    study, p = every_case
    options = MetricOptions(skip_policy=policy)
    (row,) = analyses.majority_and_agreement(study=study, options=options)
    (annotator,) = annotator_rows(studies=[study], options=options)
    assert annotator.test_s1 is not None
    assert row["annotator_mean"]["mean"] == pytest.approx(100 * annotator.test_s1, abs=0.01)


def test_the_analyses_read_the_stored_score_not_a_recomputation(every_case):
    study, p = every_case
    right = Response.objects.filter(participation=p, phase=Response.Phase.TEST).order_by("position").first()
    assert right is not None and right.score == 1.0 and right.status == Response.Status.ANSWERED
    before = analyses.majority_and_agreement(study=study, options=MetricOptions())[0]["annotator_mean"]["mean"]
    Response.objects.filter(pk=right.pk).update(score=0.0)  # e.g. a corrected gold, rescored by recompute
    after = analyses.majority_and_agreement(study=study, options=MetricOptions())[0]["annotator_mean"]["mean"]
    assert after == pytest.approx(before - 100 / 7, abs=0.01)  # 7 locked items, one fewer right


def test_an_unknown_policy_is_refused_by_name():
    with pytest.raises(ValueError, match="skip policy must be one of zero, empty, exclude, not 'half'"):
        scoring.policy_score(1.0, skipped=True, policy="half")
