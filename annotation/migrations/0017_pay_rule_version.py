from django.db import migrations, models


def unset_zero_rewards(apps, schema_editor):
    # 0 was the default, so it cannot say whether a study posted no reward on purpose: unset it, so that
    # no bonus is computed until someone states the reward (docs/reports.md, "Pay").
    Study = apps.get_model("annotation", "Study")
    Study.objects.filter(base_reward=0).update(base_reward=None)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0016_filter_rule_version_and_group_exclusion_kind"),
    ]

    operations = [
        migrations.AlterField(
            model_name="study",
            name="base_reward",
            field=models.DecimalField(
                blank=True,
                decimal_places=2,
                default=None,
                max_digits=8,
                null=True,
                help_text="Fixed reward posted per participant on the platform; empty until set (no bonus is computed while it is empty), 0 only if none was posted (paid by the hour, all of it as a bonus). Effective hourly pay is this reward over the time spent; a bonus tops it up to the hourly rate. With Prolific operations on, the bonus uses the reward read from the Prolific study instead.",
            ),
        ),
        migrations.RunPython(unset_zero_rewards, migrations.RunPython.noop),
        migrations.AddField(
            model_name="prolificaction",
            name="pay_rule_version",
            field=models.CharField(
                blank=True,
                max_length=10,
                help_text="The pay rule (annotation.services.pay.PAY_RULE_VERSION) that computed this bonus.",
            ),
        ),
    ]
