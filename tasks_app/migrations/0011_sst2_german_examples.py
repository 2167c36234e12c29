"""SST-2's German label examples in German: 0010 installed them in English, the only English text of a
German worker page outside the items themselves (a frozen copy of tasks_app.catalog_de's).

An example is changed only where it is still 0010's English one (a researcher's edit is kept).
"""

from django.db import migrations

OLD_TO_NEW = {
    "positive": (
        "a warm, funny story that stayed with me for days",
        "eine warmherzige, witzige Geschichte, die mich noch tagelang begleitet hat",
    ),
    "negative": (
        "two hours of tired jokes and wooden acting",
        "zwei Stunden abgestandene Witze und hölzernes Schauspiel",
    ),
}


def _replace(apps, *, forward):
    Task = apps.get_model("tasks_app", "Task")
    for task in Task.objects.filter(slug="sst2"):
        translations = task.translations if isinstance(task.translations, dict) else {}
        german = translations.get("de")
        labels = german.get("labels") if isinstance(german, dict) else None
        if not isinstance(labels, dict):
            continue
        changed = False
        for name, (english, german_example) in OLD_TO_NEW.items():
            label = labels.get(name)
            before, after = (english, german_example) if forward else (german_example, english)
            if isinstance(label, dict) and label.get("example") == before:
                label["example"] = after
                changed = True
        if changed:
            task.save(update_fields=["translations"])


def forward(apps, schema_editor):
    _replace(apps, forward=True)


def backward(apps, schema_editor):
    _replace(apps, forward=False)


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0010_clues_german_texts"),
    ]

    operations = [migrations.RunPython(forward, backward)]
