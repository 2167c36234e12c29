"""The demo's SST-2 study configured as a real one, the design the rehearsal tests rehearse."""

from decimal import Decimal

from annotation.models import Study
from annotation.services.studies import studies
from annotation.services.verdicts import attention
from tasks_app.demo import import_demo_data
from tasks_app.models import Task


def demo_study(*, shots=(10, 20)) -> Study:
    """The demo's SST-2 study (as load_demo makes it), configured as a real one: consent, survey, an
    attention check that excludes, the training filter, a posted reward; fewer conditions to keep the run
    short (with training in each, so that the worker who fails the filter meets it)."""
    import_demo_data()
    study = studies.create_standard_design(
        task=Task.objects.get(slug="sst2"),
        split_number=1,
        slug="demo-sst2",
        name="Demo: SST-2",
        outcome_codes={"completed": {"code": "DEMO-SST2", "url": ""}},
    )
    studies.set_conditions(study=study, shots=shots)
    Study.objects.filter(pk=study.pk).update(
        consent_required=True,
        consent_text="You will label sentences. Your answers are kept anonymously.",
        survey=[
            {"key": "age_band", "type": "single", "label": "Your age", "options": ["18-29", "30-49", "50+"]},
            {"key": "years", "type": "number", "label": "Years of annotation work", "min": 0, "max": 60},
        ],
        comprehension=[
            {
                "key": "what",
                "label": "What do you decide for each sentence?",
                "options": ["Its sentiment", "Its topic"],
                "correct": ["Its sentiment"],
            }
        ],
        attention_fail_limit=1,
        attention_action=Study.AttentionAction.EXCLUDE,
        filter_rule=Study.FilterRule.ABSOLUTE,
        filter_threshold=0.5,
        base_reward=Decimal("0.10"),
    )
    study.refresh_from_db()
    attention.definitions.generate(study=study, positions=[2])
    return studies.change_status(study=study, to_status=Study.Status.OPEN)
