"""Task.empty_answer_allowed; the data step that brings the installed CLUES tasks in line is
annotation's ``0009_clues_qa_answer_options`` (it needs to know whether workers have answered)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0003_task_overlapping_spans"),
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
    ]
