"""A pilot's completed workers for the docs' ``plan_study SLUG`` (it plans from them), written by the test.

Run inside the docs' prepared database (``manage.py shell -c``): one completed worker a condition, each right
on a different share of the test items, so the plan has a pilot accuracy and a spread to start from. The
workers are the test's, not a crowd's: ``plan_study`` is what the docs run, this only gives it a pilot.
"""

from annotation.models import Study
from tests.reporting.builders import add_annotator, gold_answers, wrong


def complete_pilot(slug: str) -> int:
    study = Study.objects.select_related("task").get(slug=slug)
    gold = gold_answers(study.task)
    conditions = list(study.conditions.order_by("shots"))
    for n, condition in enumerate(conditions):
        right = len(gold) - 1 - n % max(len(gold) - 1, 1)  # each worker misses a few more than the last
        answers = [g if i < right else wrong(g, study.task) for i, g in enumerate(gold)]
        add_annotator(study, condition.shots, answers=answers, worker_id=f"docs-pilot-{condition.shots}")
    return len(conditions)
