"""QA answer options as in the CLUES paper: SQuAD takes several spans, ReCoRD offers no "No answer".

The data step brings the tasks that ``0002_clues_tasks`` installed in line with the catalog: ReCoRD
(slug ``record``) gets ``empty_answer_allowed = False`` (its gold is never empty), and SQuAD (slug
``squad2``) gets ``multiple_spans = True`` and ``overlapping_spans = True`` (its gold's alternative
answers nest) unless a worker has already answered one of its items: a
study under way keeps the single-span protocol it started with (the admin can switch it by hand).
"""

from django.db import migrations, models


def forwards(apps, schema_editor):
    Task = apps.get_model("tasks_app", "Task")
    Response = apps.get_model("annotation", "Response")
    Task.objects.filter(slug="record").update(empty_answer_allowed=False)
    for task in Task.objects.filter(slug="squad2", kind="span", multiple_spans=False):
        if not Response.objects.filter(example__task_id=task.pk).exists():
            Task.objects.filter(pk=task.pk).update(multiple_spans=True, overlapping_spans=True)


def backwards(apps, schema_editor):
    pass  # the field goes away with the schema step; multiple_spans keeps what it was set to


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0003_task_overlapping_spans"),
        ("annotation", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="task",
            name="empty_answer_allowed",
            field=models.BooleanField(
                default=True,
                help_text="Span tasks: may a worker answer that there is no answer? Off for a task whose gold is "
                "never empty (ReCoRD): the worker page then offers no 'No answer' button and the server refuses "
                "one. A test item can still be skipped.",
            ),
        ),
        migrations.AlterField(
            model_name="task",
            name="multiple_spans",
            field=models.BooleanField(
                default=False,
                help_text="Span tasks: may an answer have several spans (NER, and SQuAD as in the CLUES paper) or "
                "at most one?",
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
