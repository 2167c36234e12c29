"""Task.overlapping_spans: may one answer's spans overlap (nested names)?

No data step: the default, False, is the value for all six CLUES tasks (CoNLL-2003 and WikiANN
annotate flat entities; SQuAD 2.0 and ReCoRD take one span at most). Answers already stored keep
their spans: the option applies to new submissions.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0002_clues_tasks"),
    ]

    operations = [
        migrations.AddField(
            model_name="task",
            name="overlapping_spans",
            field=models.BooleanField(
                default=False,
                help_text="Span tasks with several spans: may they overlap (a nested name such as New York inside "
                "New York City)? Duplicates and near-copies are refused either way.",
            ),
        ),
    ]
