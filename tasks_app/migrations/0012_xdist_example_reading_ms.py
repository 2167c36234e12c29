"""Example.reading_ms: each example's reading-time estimate, computed once; existing rows filled here."""

from django.db import migrations, models

from tasks_app.reading_time import example_reading_ms

BATCH = 500


def fill_reading_ms(apps, schema_editor):
    """Every example without an estimate gets it (the rule of tasks_app.reading_time, as the importer).

    In batches of ids read first: SQLite does not isolate a cursor from writes to the table it reads."""
    Example = apps.get_model("tasks_app", "Example")
    ids = list(Example.objects.filter(reading_ms__isnull=True).order_by("id").values_list("id", flat=True))
    for start in range(0, len(ids), BATCH):
        batch = list(Example.objects.filter(id__in=ids[start : start + BATCH]).only("id", "question", "context"))
        for example in batch:
            example.reading_ms = example_reading_ms(example.question, example.context)
        Example.objects.bulk_update(batch, ["reading_ms"])


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0011_sst2_german_examples"),
    ]

    operations = [
        migrations.AddField(
            model_name="example",
            name="reading_ms",
            field=models.PositiveIntegerField(
                blank=True,
                editable=False,
                help_text="Reading-time estimate of the question and context (tasks_app.reading_time), computed when written.",
                null=True,
            ),
        ),
        migrations.RunPython(fill_reading_ms, migrations.RunPython.noop),
    ]
