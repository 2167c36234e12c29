"""The training filter: after the training step, does a worker go on to the test?

Rules (set on the study), on the worker's training S1 (``training_s1.of``):
- none: everyone passes.
- absolute: pass when training S1 >= threshold.
- relative: pass when training S1 >= (mean or median training S1 of the other
  workers of the condition's group) - threshold. The worker goes on to the
  test at once with a pending verdict; the group is judged once it has
  trained (``filter_groups``, which says how and why).

A worker without a training S1 (no scored training item) passes whatever the
rule: there is nothing to judge. Zero-shot workers never reach the filter
(claimed goes straight to test); an admin's override of one records no
training S1.

``evaluate`` records the verdict; ``step_end.end_step`` acts on it. A failing
worker is excluded before the test step (the slot reopens for a fresh worker;
they stay ineligible for the task and are paid for their time). Admins can
override either way (``overrides``); every verdict is a FilterDecision with
its reason.
"""

from __future__ import annotations

from django.utils import timezone

from annotation.models import FilterDecision, Participation, Study
from annotation.services.verdicts import training_s1


def evaluate(participation: Participation) -> FilterDecision:
    """Apply the study's rule to a worker who has just finished training."""
    study = participation.study
    s1 = training_s1.of(participation)
    pending = False
    if s1 is None:
        passed, reason = True, "no scored training item: no training S1 to filter on"
    elif study.filter_rule == Study.FilterRule.ABSOLUTE:
        passed = s1 >= study.filter_threshold
        reason = f"training S1 {s1:.3f} {'>=' if passed else '<'} minimum {study.filter_threshold:.3f}"
    elif study.filter_rule == Study.FilterRule.RELATIVE:
        passed, pending = True, True
        reason = f"training S1 {s1:.3f}; goes on to the test, judged against the group once it has trained"
    else:
        passed, reason = True, f"training S1 {s1:.3f}; no filter"
    return FilterDecision.objects.create(
        participation=participation,
        training_s1=s1,
        rule=study.filter_rule,
        threshold=study.filter_threshold,
        reference=study.filter_reference if pending else "",
        pending_group=pending,
        passed=passed,
        reason=reason,
        at=timezone.now(),
    )
