"""FilterDecision.rule_version (decisions made before it: version 1), and the right exclusion kind on
the relative filter's group exclusions, which were recorded as "admin".

A group exclusion is recognised by what only it wrote: an exclusion event with no actor whose reason
starts "failed training filter: ", on a worker with a failing, non-override, non-pending verdict. An
admin's exclusion always has the reason "admin override: ..." and so is never touched.
"""

from django.db import migrations, models
from django.db.models import Exists, OuterRef

GROUP_REASON = "failed training filter: "


def group_exclusions_kind(apps, schema_editor):
    Participation = apps.get_model("annotation", "Participation")
    ParticipationEvent = apps.get_model("annotation", "ParticipationEvent")
    FilterDecision = apps.get_model("annotation", "FilterDecision")
    by_group = ParticipationEvent.objects.filter(
        participation=OuterRef("pk"), to_state="excluded", actor__isnull=True, reason__startswith=GROUP_REASON
    )
    failed = FilterDecision.objects.filter(
        participation=OuterRef("pk"), passed=False, is_override=False, pending_group=False
    )
    Participation.objects.filter(state="excluded", exclusion_kind="admin").filter(Exists(by_group)).filter(
        Exists(failed)
    ).update(exclusion_kind="training_filter")


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0015_exportjob_progress"),
    ]

    operations = [
        # Existing decisions were made under version 1; new ones take the model's current version.
        migrations.AddField(
            model_name="filterdecision",
            name="rule_version",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AlterField(
            model_name="filterdecision",
            name="rule_version",
            field=models.PositiveSmallIntegerField(
                default=2, help_text="The version of the filter's rules that made this decision."
            ),
        ),
        migrations.RunPython(group_exclusions_kind, migrations.RunPython.noop),
    ]
