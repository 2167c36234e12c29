"""Each example's reading-time estimate is computed once, when it is written: by the importer, on save,
and for the rows that existed before the field (the data migration); a submission only copies it."""

from __future__ import annotations

import importlib
import json

import pytest
from django.apps import apps
from django.core.management import call_command

from tasks_app.models import Example
from tests.factories import ExampleFactory, TaskFactory

pytestmark = pytest.mark.django_db

# Counted by hand at the rates of tasks_app.reading_time (300 words, 320 CJK characters a minute):
ENGLISH = ("sport, weather or music?", "Headline number 0 about sport .")  # 4 + 5 words (a lone "." is none)
ENGLISH_MS = 1_800  # 9 words: 9 / 300 min
CHINESE = ("正面还是负面？", "我喜欢这部电影。")  # 6 + 7 characters, full-width punctuation not read
CHINESE_MS = 2_438  # 13 characters: 13 / 320 min = 2437.5 ms


def test_the_importer_stores_each_examples_estimate(tmp_path):
    rows = [
        {"id": "en", "question": ENGLISH[0], "context": ENGLISH[1], "answer": ["sport"]},
        {"id": "zh", "question": CHINESE[0], "context": CHINESE[1], "answer": ["music"]},
    ]
    path = tmp_path / "topics_test.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    call_command(
        "import_tasks", str(path), "--task", "topics", "--name", "Topics", "--kind", "classification",
        "--labels", "sport,weather,music",
    )  # fmt: skip
    stored = dict(Example.objects.filter(task__slug="topics").values_list("source_id", "reading_ms"))
    assert stored == {"en": ENGLISH_MS, "zh": CHINESE_MS}


def test_a_saved_example_gets_its_estimate_and_a_sentence_pair_counts_both_sentences():
    example = ExampleFactory(question="x?", context=["A b c.", "D e."])  # 1 + 3 + 2 words
    assert Example.objects.get(pk=example.pk).reading_ms == 1_200
    example.question = "x y z?"  # the text changed: the estimate follows, even with update_fields
    example.save(update_fields=["question"])
    assert Example.objects.get(pk=example.pk).reading_ms == 1_600


def test_the_migration_fills_the_rows_written_before_the_field():
    task = TaskFactory(slug="old")
    english = ExampleFactory(task=task, question=ENGLISH[0], context=ENGLISH[1])
    chinese = ExampleFactory(task=task, question=CHINESE[0], context=CHINESE[1])
    kept = ExampleFactory(task=task)
    Example.objects.filter(pk__in=[english.pk, chinese.pk]).update(reading_ms=None)  # as before the migration
    Example.objects.filter(pk=kept.pk).update(reading_ms=7)  # a row that has one keeps it
    migration = importlib.import_module("tasks_app.migrations.0012_xdist_example_reading_ms")
    migration.fill_reading_ms(apps, None)
    stored = dict(Example.objects.filter(task=task).values_list("pk", "reading_ms"))
    assert stored == {english.pk: ENGLISH_MS, chinese.pk: CHINESE_MS, kept.pk: 7}
