"""Importing the real CLUES release: counts, every finding it makes, idempotence, nesting."""

from collections import Counter

import pytest

from tasks_app.importing.service import import_clues
from tasks_app.models import Example, ExampleSet, ExampleSetItem, Task, TrainingSplit

pytestmark = [pytest.mark.clues, pytest.mark.django_db]

TEST_SIZES = {"sst2": 210, "mnli": 210, "conll03": 600, "wikiann": 600, "squad2": 200, "record": 200}
PER_QUESTION_TYPE = {"conll03": 3, "wikiann": 3}
# Lines whose id an earlier file (test first, then splits 1..5 by shots) used for other content.
# Every SST-2 training line: each file numbers its lines from 1, like the test file.
SST_REUSED = {f"SST-2/sst_train_{k}_{n}.jsonl": k for k in (10, 20, 30) for n in range(1, 6)}
NER_REUSED = {
    "CoNLL2003/conll_train_10_1.jsonl": 3,
    "CoNLL2003/conll_train_20_1.jsonl": 3,
    "CoNLL2003/conll_train_30_1.jsonl": 3,
    "CoNLL2003/conll_train_10_2.jsonl": 3,
    "CoNLL2003/conll_train_20_2.jsonl": 3,
    "CoNLL2003/conll_train_30_2.jsonl": 6,
    "CoNLL2003/conll_train_20_5.jsonl": 3,
    "CoNLL2003/conll_train_30_5.jsonl": 3,
    "WikiANN_EN/wikiann_train_20_1.jsonl": 3,
    "WikiANN_EN/wikiann_train_30_1.jsonl": 3,
    "WikiANN_EN/wikiann_train_30_4.jsonl": 3,
}
GOLD_NOT_FOUND = [
    ("CoNLL2003/conll_train_10_2.jsonl", 29, '"MOODY S"'),
    ("CoNLL2003/conll_train_10_4.jsonl", 5, '"Queen s Park"'),
    ("CoNLL2003/conll_train_20_2.jsonl", 23, '"MOODY S"'),
    ("CoNLL2003/conll_train_20_4.jsonl", 2, '"Queen s Park"'),
    ("CoNLL2003/conll_train_30_1.jsonl", 35, '"MOODY S"'),
    ("CoNLL2003/conll_train_30_2.jsonl", 53, '"MOODY S"'),
    ("CoNLL2003/conll_train_30_3.jsonl", 19, '"Alex OBrien"'),
    ("CoNLL2003/conll_train_30_4.jsonl", 77, '"Queen s Park"'),
    ("WikiANN_EN/wikiann_test.jsonl", 14, '"Oklahoma Women s Hall of Fame"'),
    (
        "WikiANN_EN/wikiann_test.jsonl",
        83,
        '"People s Instinctive Travels and the Paths of Rhythm", A Tribe Called Quest',
    ),
    ("WikiANN_EN/wikiann_test.jsonl", 271, '"Bill `` Bojangles  Robinson"'),
    ("WikiANN_EN/wikiann_test.jsonl", 317, '"Pontyragin s maximum principle"'),
    ("WikiANN_EN/wikiann_test.jsonl", 359, '"High Energy  ( Freddie Hubbard album )"'),
    ("WikiANN_EN/wikiann_test.jsonl", 383, '"South Korea women s national volleyball team"'),
    ("WikiANN_EN/wikiann_test.jsonl", 430, '"Michael ONeill"'),
    ("WikiANN_EN/wikiann_test.jsonl", 471, '"Martha s Vineyard", Massachusetts'),
    ("WikiANN_EN/wikiann_test.jsonl", 545, '"Now That s What I Call Music ! discography"'),
    (
        "WikiANN_EN/wikiann_train_20_1.jsonl",
        53,
        '"You re the Guy I Want to Share My Money With", Giorno Poetry Systems',
    ),
    ("WikiANN_EN/wikiann_train_20_4.jsonl", 5, '"1984 Men s Olympic 1,500 metres ( Los Angeles )"'),
    (
        "WikiANN_EN/wikiann_train_30_1.jsonl",
        20,
        '"You re the Guy I Want to Share My Money With", Giorno Poetry Systems',
    ),
    ("WikiANN_EN/wikiann_train_30_1.jsonl", 65, '"1996 Women s Olympic 5,000 metres ( Atlanta )"'),
    ("WikiANN_EN/wikiann_train_30_3.jsonl", 32, '"Ashdot Yaakov Meuhad"'),
    ("WikiANN_EN/wikiann_train_30_3.jsonl", 33, '"Ashdot Yaakov"'),
    ("WikiANN_EN/wikiann_train_30_4.jsonl", 83, '"1984 Men s Olympic 1,500 metres ( Los Angeles )"'),
]
NOT_NESTED = [  # (file, message)
    ("SQuAD-v2/squad-v2_train_10_1.jsonl", "split 1: 10 of 10 items are not in SQuAD-v2/squad-v2_train_20_1.jsonl"),
    ("SQuAD-v2/squad-v2_train_20_1.jsonl", "split 1: 20 of 20 items are not in SQuAD-v2/squad-v2_train_30_1.jsonl"),
    ("SQuAD-v2/squad-v2_train_10_2.jsonl", "split 2: 10 of 10 items are not in SQuAD-v2/squad-v2_train_20_2.jsonl"),
    ("SQuAD-v2/squad-v2_train_20_2.jsonl", "split 2: 20 of 20 items are not in SQuAD-v2/squad-v2_train_30_2.jsonl"),
    ("SQuAD-v2/squad-v2_train_10_3.jsonl", "split 3: 10 of 10 items are not in SQuAD-v2/squad-v2_train_20_3.jsonl"),
    ("SQuAD-v2/squad-v2_train_20_3.jsonl", "split 3: 20 of 20 items are not in SQuAD-v2/squad-v2_train_30_3.jsonl"),
    ("SQuAD-v2/squad-v2_train_10_5.jsonl", "split 5: 10 of 10 items are not in SQuAD-v2/squad-v2_train_20_5.jsonl"),
    ("ReCoRD/record_train_10_1.jsonl", "split 1: 10 of 10 items are not in ReCoRD/record_train_20_1.jsonl"),
    ("ReCoRD/record_train_20_1.jsonl", "split 1: 20 of 20 items are not in ReCoRD/record_train_30_1.jsonl"),
    ("ReCoRD/record_train_10_2.jsonl", "split 2: 10 of 10 items are not in ReCoRD/record_train_20_2.jsonl"),
    ("ReCoRD/record_train_20_2.jsonl", "split 2: 20 of 20 items are not in ReCoRD/record_train_30_2.jsonl"),
    ("ReCoRD/record_train_20_3.jsonl", "split 3: 20 of 20 items are not in ReCoRD/record_train_30_3.jsonl"),
    ("ReCoRD/record_train_10_4.jsonl", "split 4: 10 of 10 items are not in ReCoRD/record_train_20_4.jsonl"),
    ("ReCoRD/record_train_20_4.jsonl", "split 4: 20 of 20 items are not in ReCoRD/record_train_30_4.jsonl"),
    ("ReCoRD/record_train_10_5.jsonl", "split 5: 10 of 10 items are not in ReCoRD/record_train_20_5.jsonl"),
    ("ReCoRD/record_train_20_5.jsonl", "split 5: 20 of 20 items are not in ReCoRD/record_train_30_5.jsonl"),
]


def findings_of(result, kind):
    return [f for f in result.findings if f.kind == kind]


def test_test_sets_have_the_release_sizes(imported_release):
    for slug, size in TEST_SIZES.items():
        test_set = ExampleSet.objects.get(task__slug=slug, role=ExampleSet.Role.TEST)
        assert test_set.items.count() == size, slug
        assert test_set.source_file.endswith("_test.jsonl")


def test_training_files_have_k_items_or_k_per_question_type(imported_release):
    for slug in TEST_SIZES:
        assert TrainingSplit.objects.filter(task__slug=slug).count() == 5
        for split in range(1, 6):
            for shots in (10, 20, 30):
                example_set = ExampleSet.objects.get(task__slug=slug, split__number=split, shots=shots)
                assert example_set.items.count() == shots * PER_QUESTION_TYPE.get(slug, 1), (slug, split, shots)


def test_ner_training_sets_hold_k_items_of_each_question_type(imported_release):
    for slug in PER_QUESTION_TYPE:
        example_set = ExampleSet.objects.get(task__slug=slug, split__number=3, shots=20)
        counts = Counter(example_set.ordered_examples().values_list("question_type", flat=True))
        assert counts == {"PER": 20, "ORG": 20, "LOC": 20}


def test_the_run_reports_exactly_these_finding_kinds(imported_release):
    by_task_kind = Counter((f.task, f.kind) for f in imported_release.findings)
    assert by_task_kind == {
        ("sst2", "id_reused"): 300,
        ("mnli", "question_label_mismatch"): 16,
        ("conll03", "gold_not_found"): 8,
        ("conll03", "id_reused"): 27,
        ("conll03", "duplicate_content"): 3,
        ("wikiann", "gold_not_found"): 16,
        ("wikiann", "id_reused"): 9,
        ("squad2", "split_not_nested"): 7,
        ("record", "split_not_nested"): 9,
        **{(slug, "paper_comparison"): 1 for slug in ("sst2", "conll03", "wikiann", "squad2", "record")},
        ("mnli", "paper_comparison"): 2,  # the size, and the genres
    }
    assert not any(f.is_error for f in imported_release.findings)


def test_the_run_compares_every_test_set_with_the_paper(imported_release):
    lines = {(f.task, f.message) for f in findings_of(imported_release, "paper_comparison")}
    assert lines == {
        ("sst2", "test set: 210 items; as in the paper"),
        ("mnli", "test set: 210 items; as in the paper"),
        ("conll03", "test set: 600 items; as in the paper"),
        ("wikiann", "test set: 600 items; as in the paper"),
        ("squad2", "test set: 200 items; as in the paper"),
        ("record", "test set: 200 items; as in the paper"),
        (
            "mnli",
            "MNLI test genres: 10 genres x 21 items (facetoface 21, fiction 21, government 21, letters 21, "
            "nineeleven 21, oup 21, slate 21, telephone 21, travel 21, verbatim 21); the paper has 7 genres x 30 items",
        ),
    }
    assert {f.severity for f in findings_of(imported_release, "paper_comparison")} == {"info"}


def test_every_gold_string_missing_from_its_context_is_reported(imported_release):
    found = [(f.file, f.line, f.message) for f in findings_of(imported_release, "gold_not_found")]
    assert sorted(found) == sorted(
        (file, line, f"gold {text!r} does not occur in the context") for file, line, text in GOLD_NOT_FOUND
    )


def test_unlocated_gold_is_imported_without_spans(imported_release):
    example = Example.objects.get(task__slug="conll03", source_id="7888_2")
    assert example.gold_answers == ["S&P", '"MOODY S"']
    assert [s["text"] for s in example.gold_spans] == ["S&P"]


def test_ids_reused_across_files_are_reported_per_line(imported_release):
    reused = Counter(f.file for f in findings_of(imported_release, "id_reused"))
    assert reused == {**SST_REUSED, **NER_REUSED}
    first = next(f for f in findings_of(imported_release, "id_reused") if f.file == "SST-2/sst_train_10_1.jsonl")
    assert (first.line, first.message) == (1, "id '1' stands for other content in SST-2/sst_test.jsonl:1")


def test_sst_lines_sharing_an_id_stay_separate_examples(imported_release):
    assert Example.objects.filter(task__slug="sst2", source_id="1").count() > 1


def test_nested_splits_share_the_very_example_rows_across_shot_levels(imported_release):
    # SST-2 numbers the same sentence differently in each file; the rows must still be shared,
    # or a 10-shot and a 20-shot cohort would not train on the same examples.
    for split in TrainingSplit.objects.filter(is_nested=True).select_related("task"):
        members = {es.shots: set(es.items.values_list("example_id", flat=True)) for es in split.sets.all()}
        assert members[10] <= members[20] <= members[30], split


def test_identical_conll_test_lines_under_two_ids_are_two_test_items(imported_release):
    assert [(f.line, f.message) for f in findings_of(imported_release, "duplicate_content")] == [
        (463, "same content as line 226 (id '487_1') under id '3313_1'; kept as two examples"),
        (464, "same content as line 227 (id '487_2') under id '3313_2'; kept as two examples"),
        (465, "same content as line 228 (id '487_3') under id '3313_3'; kept as two examples"),
    ]
    test_set = ExampleSet.objects.get(task__slug="conll03", role="test")
    assert test_set.examples.filter(context="ATLANTIC DIVISION").count() == 6


def test_mnli_question_misspelling_is_reported_once_per_file(imported_release):
    mismatches = findings_of(imported_release, "question_label_mismatch")
    assert len({f.file for f in mismatches}) == 16
    assert all(f.line == 1 and "'contradiction'" in f.message for f in mismatches)


def test_splits_that_are_not_nested_are_reported_and_recorded(imported_release):
    assert [(f.file, f.message) for f in findings_of(imported_release, "split_not_nested")] == NOT_NESTED
    nested = {
        slug: sorted(TrainingSplit.objects.filter(task__slug=slug, is_nested=True).values_list("number", flat=True))
        for slug in TEST_SIZES
    }
    assert nested == {
        "sst2": [1, 2, 3, 4, 5],
        "mnli": [1, 2, 3, 4, 5],
        "conll03": [1, 2, 3, 4, 5],
        "wikiann": [1, 2, 3, 4, 5],
        "squad2": [4],
        "record": [],
    }
    assert not TrainingSplit.objects.filter(nested_built=True).exists()


def test_gold_fields_of_each_shape(imported_release):
    mnli = Example.objects.filter(task__slug="mnli").first()
    assert isinstance(mnli.context, list) and len(mnli.context) == 2 and "genre" in mnli.extra
    squad_impossible = Example.objects.filter(task__slug="squad2", extra__is_impossible=True).first()
    assert squad_impossible.gold_answers == [] and squad_impossible.alternative_answers == []
    squad = Example.objects.get(task__slug="squad2", source_id="56dddf4066d3e219004dad5f")
    assert squad.gold_answers == ["William the Conqueror"]
    assert squad.gold_spans[0] == {"text": "William the Conqueror", "start": 1022, "end": 1043}
    assert len(squad.extra["answer_raw"]) == 3
    record = Example.objects.filter(task__slug="record").first()
    assert "@placeholder" in record.question
    for entity, converted in zip(record.extra["entities"], record.extra["entities_exclusive"], strict=True):
        assert converted["end"] == entity["end"] + 1
        assert record.context[converted["start"] : converted["end"]] == converted["text"]


def test_every_located_span_matches_its_text(imported_release):
    for context, spans in Example.objects.filter(task__kind=Task.Kind.SPAN).values_list("context", "gold_spans"):
        for span in spans:
            assert context[span["start"] : span["end"]] == span["text"]


def test_importing_again_changes_nothing(imported_release, clues_dir):
    before = (Example.objects.count(), ExampleSetItem.objects.count(), ExampleSet.objects.count())
    again = import_clues(path=clues_dir)
    assert (Example.objects.count(), ExampleSetItem.objects.count(), ExampleSet.objects.count()) == before
    assert all(t.stats.examples_created == 0 and t.stats.sets_written == 0 for t in again.tasks)
    assert again.findings == imported_release.findings


def test_build_nested_rebuilds_small_sets_as_prefixes_of_the_30_shot_file(imported_release, clues_dir):
    result = import_clues(path=clues_dir, slugs=["squad2", "conll03"], build_nested=True)
    built = [(f.task, f.file) for f in result.findings if f.kind == "nested_built"]
    assert built == [("squad2", f"SQuAD-v2/squad-v2_train_30_{n}.jsonl") for n in (1, 2, 3, 5)]
    for number in (1, 2, 3, 5):
        split = TrainingSplit.objects.get(task__slug="squad2", number=number)
        assert split.is_nested and split.nested_built
        thirty = list(ExampleSet.objects.get(split=split, shots=30).ordered_examples())
        for shots in (10, 20):
            example_set = ExampleSet.objects.get(split=split, shots=shots)
            assert list(example_set.ordered_examples()) == thirty[:shots]
            assert "(first" in example_set.source_file
    untouched = TrainingSplit.objects.get(task__slug="squad2", number=4)
    assert untouched.is_nested and not untouched.nested_built
    assert not TrainingSplit.objects.filter(task__slug="conll03", nested_built=True).exists()


def test_a_single_task_folder_and_one_split_can_be_imported(imported_release, clues_dir):
    result = import_clues(path=clues_dir / "MNLI", split=2, dry_run=True)
    assert [t.slug for t in result.tasks] == ["mnli"]
    assert result.tasks[0].set_sizes == {
        "test": 210,
        "split 2 10-shot": 10,
        "split 2 20-shot": 20,
        "split 2 30-shot": 30,
    }
    assert not result.written
