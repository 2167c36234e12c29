"""MNLI's German segment titles: the worker page headed the two sentences "Satz 1" / "Satz 2" while the
German description and help speak of "Prämisse" and "Hypothese" (a frozen copy of tasks_app.catalog_de's).

Added only where the German entry has no segment titles of its own (a researcher's are kept).
"""

from django.db import migrations

TITLES = ["Prämisse", "Hypothese"]


def forward(apps, schema_editor):
    Task = apps.get_model("tasks_app", "Task")
    for task in Task.objects.filter(slug="mnli"):
        german = (task.translations or {}).get("de") if isinstance(task.translations, dict) else None
        if isinstance(german, dict) and not german.get("segment_titles"):
            german["segment_titles"] = list(TITLES)
            task.save(update_fields=["translations"])


def backward(apps, schema_editor):
    Task = apps.get_model("tasks_app", "Task")
    for task in Task.objects.filter(slug="mnli"):
        german = (task.translations or {}).get("de") if isinstance(task.translations, dict) else None
        if isinstance(german, dict) and german.get("segment_titles") == TITLES:
            del german["segment_titles"]
            task.save(update_fields=["translations"])


class Migration(migrations.Migration):
    dependencies = [("tasks_app", "0012_xdist_example_reading_ms")]
    operations = [migrations.RunPython(forward, backward)]
