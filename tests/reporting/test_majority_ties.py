"""A tie is no majority (FewCLUE's README: the answer given by more than half of the workers wins)."""

from annotation.reporting.agreement import majority_spans, strict_majority


def test_a_tie_between_two_answers_is_no_majority():
    a, b = frozenset({"positive"}), frozenset({"negative"})
    assert strict_majority([a, a, b, b]) is None
    assert strict_majority([a, b]) is None
    assert strict_majority([a, a, a, b]) == a
    assert strict_majority([a, a, b]) == a


def test_a_span_chosen_by_exactly_half_of_the_workers_is_not_kept():
    assert (
        majority_spans([frozenset({"Ada"}), frozenset({"Ada", "Bob"}), frozenset(), frozenset({"Bob"})]) == frozenset()
    )
    assert majority_spans([frozenset({"Ada"}), frozenset({"Ada"}), frozenset({"Bob"})]) == frozenset({"Ada"})


def test_a_condition_of_two_workers_who_disagree_has_no_majority_on_those_items(sst2):
    from annotation.reporting.majority import condition_majority
    from tests.reporting.builders import add_annotator, gold_answers, make_study

    study = make_study(sst2, shots=(0,))
    gold = gold_answers(sst2)  # positive, negative, positive, negative
    add_annotator(study, 0, answers=gold)
    add_annotator(study, 0, answers=[["positive"]] * 4)  # agrees on items 1 and 3, ties on 2 and 4
    result = condition_majority(condition=study.conditions.get())
    assert (result.items, result.no_majority, result.correct) == (4, 2, 2.0)
