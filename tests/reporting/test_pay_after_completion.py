"""The documented pay rule (docs/reports.md): paid time runs from the slot taken to the worker's last act; what
staff or a rule decide after the worker completed neither shortens nor lengthens it. Written against that
behaviour, not the code's own figures, so it holds whatever form the rule's function takes."""

from datetime import timedelta
from decimal import Decimal

from annotation.models import Participation, Response
from annotation.services.money.pay import pay_lines
from annotation.services.state import lifecycle
from tests.reporting.builders import T0, add_annotator, gold_answers, make_study

State = Participation.State
Kind = Participation.ExclusionKind


def _minutes(study, p) -> Decimal:
    return Decimal(str(pay_lines(study=study, participations=[p])[p.pk].seconds)) / 60


def test_an_exclusion_after_completion_readmission_and_a_second_verdict_keep_the_paid_time(sst2):
    """Completed at 30 min; the group filter excludes them hours later; an admin readmits them a day later
    and the rules, judging the readmitted test step at once, exclude them again. The worker's last act was at
    30 min, and that is what they are paid for."""
    study = make_study(sst2, shots=(0,), base_reward=Decimal("0.00"))
    p = add_annotator(study, 0, answers=gold_answers(sst2), minutes=30)  # claimed at T0, completed at T0 + 30 min
    Response.all_objects.filter(participation=p).update(submitted_at=T0 + timedelta(minutes=30))
    assert p.state == State.COMPLETED and _minutes(study, p) == 30

    lifecycle.exclude(p, reason="failed training filter", kind=Kind.TRAINING_FILTER, at=T0 + timedelta(hours=6))
    assert _minutes(study, p) == 30
    lifecycle.transition(p, to_state=State.TEST, reason="admin override", at=T0 + timedelta(hours=24))
    lifecycle.exclude(p, reason="integrity: copied text", kind=Kind.INTEGRITY, at=T0 + timedelta(hours=24, minutes=1))
    p.refresh_from_db()
    assert p.state == State.EXCLUDED
    assert _minutes(study, p) == 30
