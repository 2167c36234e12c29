"""Install the six CLUES tasks so they exist right after ``migrate``.

Existing tasks are left as the admin edited them (no overwrite). Reversing
does nothing: deleting tasks would delete their examples and answers.
"""

from django.db import migrations


def install(apps, schema_editor):
    from tasks_app.catalog import install_clues_tasks

    install_clues_tasks(
        task_model=apps.get_model("tasks_app", "Task"), label_model=apps.get_model("tasks_app", "Label")
    )


class Migration(migrations.Migration):
    dependencies = [("tasks_app", "0001_initial")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
