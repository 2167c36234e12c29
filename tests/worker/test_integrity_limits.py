"""The integrity rule's limits are maxima: a worker AT a limit is within the rule, one past it breaches it
(docs/studies.md: "more copied items than", "a larger share ... than"). Plain figures, no database."""

import pytest

from annotation.models import Study
from annotation.services.verdicts.integrity import Figures, breaches


def rule(**limits) -> Study:
    return Study(integrity_hidden_seconds=10, **limits)


@pytest.mark.parametrize(("copied", "breached"), [(1, False), (2, False), (3, True)])
def test_copied_items_up_to_the_limit_are_within_the_rule(copied, breached):
    found = breaches(rule(integrity_max_copies=2), Figures(items=10, answered=10, copied_items=copied))
    assert bool(found) is breached


def test_no_copies_allowed_means_one_copy_breaches():
    assert breaches(rule(integrity_max_copies=0), Figures(items=5, answered=5, copied_items=0)) == []
    assert breaches(rule(integrity_max_copies=0), Figures(items=5, answered=5, copied_items=1)) != []


@pytest.mark.parametrize(("fast", "breached"), [(1, False), (2, False), (3, True)])
def test_a_fast_share_equal_to_the_limit_is_within_the_rule(fast, breached):
    # 2 of 4 answers fast is exactly the 50 % limit.
    found = breaches(rule(integrity_max_fast_share=0.5), Figures(items=4, answered=4, fast_items=fast))
    assert bool(found) is breached


@pytest.mark.parametrize(("hidden", "breached"), [(1, False), (2, False), (3, True)])
def test_a_hidden_share_equal_to_the_limit_is_within_the_rule(hidden, breached):
    found = breaches(rule(integrity_max_hidden_share=0.5), Figures(items=4, answered=4, hidden_items=hidden))
    assert bool(found) is breached
