"""QA answer options as in the CLUES paper, for the tasks that tasks_app's ``0002_clues_tasks`` installed.

ReCoRD (slug ``record``) gets ``empty_answer_allowed = False``: its gold is never empty. SQuAD (slug
``squad2``) gets ``multiple_spans = True`` and ``overlapping_spans = True`` (its gold's alternative
answers nest), unless a worker has already answered one of its items: a study under way keeps the
single-span protocol it started with (the admin can switch it by hand). It lives here, not in
tasks_app, because it reads the responses, and tasks_app knows nothing of workers.
"""

from django.db import migrations


def forwards(apps, schema_editor):
    Task = apps.get_model("tasks_app", "Task")
    Response = apps.get_model("annotation", "Response")
    Task.objects.filter(slug="record", kind="span").update(empty_answer_allowed=False)
    for task in Task.objects.filter(slug="squad2", kind="span", multiple_spans=False):
        if not Response.objects.filter(example__task_id=task.pk).exists():
            Task.objects.filter(pk=task.pk).update(multiple_spans=True, overlapping_spans=True)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0008_prolific_operations"),
        ("tasks_app", "0004_qa_answer_options"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
