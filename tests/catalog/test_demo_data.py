"""The bundled demo data: six tasks in the release layout, importable again and again."""

import json
from collections import Counter

import pytest

from tasks_app.catalog import CLUES_TASKS
from tasks_app.demo import DEMO_DATA_DIR, import_demo_data
from tasks_app.models import Example, ExampleSet, Task, TrainingSplit

pytestmark = pytest.mark.django_db


def test_demo_data_follows_the_release_layout():
    for definition in CLUES_TASKS:
        folder = DEMO_DATA_DIR / definition.folder
        names = sorted(p.name for p in folder.iterdir())
        assert names == sorted(
            [f"{definition.prefix}_test.jsonl"] + [f"{definition.prefix}_train_{k}_1.jsonl" for k in (10, 20, 30)]
        )
        per_type = 3 if definition.question_types else 1
        for k in (10, 20, 30):
            lines = (folder / f"{definition.prefix}_train_{k}_1.jsonl").read_text(encoding="utf-8").splitlines()
            assert len(lines) == k * per_type
            if per_type == 3:
                assert set(Counter(json.loads(line)["question"] for line in lines).values()) == {k}


def test_importing_the_demo_data_creates_six_tasks_with_sets():
    result = import_demo_data()
    assert [t.slug for t in result.tasks] == [t.slug for t in CLUES_TASKS]
    assert Task.objects.filter(slug__in=[t.slug for t in CLUES_TASKS]).count() == 6
    # MNLI's question, kept honest; and each small demo test set against the paper's size
    assert {f.kind for f in result.findings} == {"question_label_mismatch", "paper_comparison"}
    for slug in ("sst2", "mnli", "squad2", "record"):
        assert ExampleSet.objects.get(task__slug=slug, role="test").items.count() == 8
    assert ExampleSet.objects.get(task__slug="conll03", role="test").items.count() == 9
    assert ExampleSet.objects.get(task__slug="wikiann", split__number=1, shots=30).items.count() == 90
    assert TrainingSplit.objects.filter(is_nested=True).count() == 6


def test_importing_the_demo_data_twice_changes_nothing():
    import_demo_data()
    before = Example.objects.count()
    again = import_demo_data()
    assert Example.objects.count() == before
    assert all(t.stats.examples_created == 0 and t.stats.sets_written == 0 for t in again.tasks)


def test_demo_span_contexts_with_emoji_and_accents_have_exact_offsets():
    import_demo_data()
    spans = [(e.context, s) for e in Example.objects.filter(task__kind="span") for s in e.gold_spans]
    assert spans
    assert all(context[s["start"] : s["end"]] == s["text"] for context, s in spans)
    wikiann = Example.objects.get(task__slug="wikiann", source_id="730_1")
    assert "🎬" in wikiann.context and wikiann.gold_answers == ["Søren Holm"]
    assert any(not text.isascii() for _, s in spans for text in [s["text"]])


def test_demo_squad_data_has_unanswerable_and_multi_annotator_items():
    import_demo_data()
    squad = Example.objects.filter(task__slug="squad2")
    assert squad.filter(extra__is_impossible=True, gold_answers=[]).exists()
    assert any(len(e.alternative_answers) > 1 for e in squad)
