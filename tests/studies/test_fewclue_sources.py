"""FewCLUE as its sources say, on the real datasets/ (../shared/fewclue/datasets beside the repository, or
FEWCLUE_DIR): the paper's own sizes, the data's defects named, samples without repeats, contradictions or
training items, the README protocol's validation set, and the simulated crowd's gold by item.

Every expectation is read from the files here, line by line, not from the code under test."""

import json
from collections import defaultdict
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from annotation.rehearsal.crowd import shown_key
from annotation.rehearsal.runner import gold_book
from annotation.services.session import presentation, samples
from tasks_app.importing.fewclue.service import import_fewclue
from tasks_app.models import ExampleSet
from tasks_app.paper import FEWCLUE_TEST_SET_SIZES

pytestmark = [pytest.mark.fewclue, pytest.mark.django_db]

SEED = 20211206
ID_FIELD = {"cluewsc": "idx"}


def rows(root, folder, name):
    """(line, row) of a FewCLUE file, in order."""
    text = (root / folder / f"{name}.json").read_text(encoding="utf-8-sig")
    return [(n, json.loads(line)) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


def item(row, folder):
    """The item without its id and its gold."""
    id_field = ID_FIELD.get(folder, "id")
    return json.dumps(
        {k: v for k, v in row.items() if k not in (id_field, "label")}, sort_keys=True, ensure_ascii=False
    )


def test_every_size_said_to_be_the_papers_is_the_papers_own(fewclue_dir):
    # The paper's Table 1 and the README's table both give CSL 2828 public test items; the file holds 2838.
    assert FEWCLUE_TEST_SET_SIZES["csl"] == 2828
    assert len(rows(fewclue_dir, "csl", "test_public")) == 2838
    result = import_fewclue(path=fewclue_dir, folders=["csl", "cluewsc"], dry_run=True)
    said = {f.task: f.message for f in result.findings if f.kind == "paper_comparison" and "test_public" in f.message}
    assert said["fewclue-csl"].startswith("test_public: 2838 items; the paper has 2828, the file +10;")
    assert said["fewclue-cluewsc"].startswith("test_public: 976 items; as in the paper;")


def test_the_importer_names_test_overlap_and_contradictory_gold(fewclue_dir):
    result = import_fewclue(path=fewclue_dir, folders=["csl"], dry_run=True)
    test = rows(fewclue_dir, "csl", "test_public")
    in_test = {item(row, "csl"): (line, row) for line, row in reversed(test)}  # the first occurrence wins
    expected_overlap = set()
    for name in [*(f"train_{k}" for k in range(5)), *(f"dev_{k}" for k in range(5)), "train_few_all", "dev_few_all"]:
        for line, row in rows(fewclue_dir, "csl", name):
            if item(row, "csl") in in_test:
                expected_overlap.add((f"csl/{name}.json", line, row["id"], in_test[item(row, "csl")][1]["id"]))
    # The four: dev_2 ids 0 and 6 (and dev_few_all 64 and 70) are test_public 293 and 1556.
    assert {(f, i, t) for f, _, i, t in expected_overlap} == {
        ("csl/dev_2.json", 0, 293),
        ("csl/dev_2.json", 6, 1556),
        ("csl/dev_few_all.json", 64, 293),
        ("csl/dev_few_all.json", 70, 1556),
    }
    found = {(f.file, f.line) for f in result.findings if f.kind == "test_overlap"}
    assert found == {(f, line) for f, line, _, _ in expected_overlap}
    for f in result.findings:
        if f.kind == "test_overlap":
            want = next(e for e in expected_overlap if (e[0], e[1]) == (f.file, f.line))
            assert f.message.startswith(f"id {want[2]} is test_public id {want[3]} ")

    first: dict[str, dict] = {}
    expected_contradictions = set()
    for _, row in test:
        earlier = first.setdefault(item(row, "csl"), row)
        if earlier is not row and earlier["label"] != row["label"]:
            expected_contradictions.add((row["id"], earlier["id"]))
    assert expected_contradictions == {(2569, 107), (1479, 1265)}
    contradictions = [f for f in result.findings if f.kind == "contradictory_gold"]
    assert {(f.file, f.message.split(" (")[0]) for f in contradictions} == {
        ("csl/test_public.json", f"id {later}") for later, _ in expected_contradictions
    }


def _by_line(example_set):
    """Example id -> its line in the set's file (the set keeps the file's order)."""
    return {pk: line for line, pk in enumerate(samples.set_ids(example_set.pk), start=1)}


@pytest.mark.timeout(600)
def test_samples_hold_no_repeat_no_contradiction_and_no_training_item(fewclue_dir):
    call_command("import_fewclue", str(fewclue_dir), "--task", "csl", "--task", "cluewsc", stdout=StringIO())
    for protocol in ("paper", "readme"):
        out = StringIO()
        call_command(
            "create_fewclue_studies",
            "--tasks",
            "csl",
            "cluewsc",
            "--seed",
            str(SEED),
            "--protocol",
            protocol,
            stdout=out,
        )
        assert out.getvalue().count("created (draft)") == 2
    for study in Study.objects.select_related("task"):
        folder = study.task.slug.removeprefix("fewclue-")
        condition = study.conditions.get()
        training_set, test_set = condition.training_set, condition.test_set
        # The README labels 100 items of the validation set (验证集), its merged file dev_few_all.
        want = ("dev_few_all", "test_public") if protocol_of(study) == "paper" else ("train_few_all", "dev_few_all")
        assert (training_set.name, test_set.name) == want
        training_rows = dict(rows(fewclue_dir, folder, training_set.name))
        test_rows = dict(rows(fewclue_dir, folder, test_set.name))
        training_lines, test_lines = _by_line(training_set), _by_line(test_set)
        trained = [item(training_rows[training_lines[pk]], folder) for pk in condition.training_sample]
        tested = [item(test_rows[test_lines[pk]], folder) for pk in condition.test_sample]
        # 30 distinct training items (CLUEWSC's old sample held dev_few_all ids 98 and 136, one item twice).
        assert len(trained) == len(set(trained)) == 30
        assert len(tested) == len(set(tested)) == 100
        # No test item is also in the set the training items come from.
        assert not set(tested) & {item(row, folder) for row in training_rows.values()}
        golds = defaultdict(set)
        for row in test_rows.values():
            golds[item(row, folder)].add(row["label"])
        assert all(len(golds[i]) == 1 for i in tested)


def protocol_of(study):
    return "paper" if study.protocol == Study.Protocol.FEWCLUE_PAPER else "readme"


def test_the_statement_says_what_the_screen_left_out(fewclue_dir):
    call_command("import_fewclue", str(fewclue_dir), "--task", "csl", stdout=StringIO())
    call_command("create_fewclue_studies", "--tasks", "csl", "--seed", str(SEED), stdout=StringIO())
    condition = Study.objects.get(slug="fewclue-csl-paper").conditions.get()
    said = samples.describe(condition)
    # test_public: ids 107/2569 and 1265/1479 (lines 125/830, 1389/2582) contradict each other; ids 293 and
    # 1556 (lines 1625, 2537) are dev_few_all's 64 and 70.
    assert "left out of test_public before the draw" in said
    assert "4 shown alike with different gold (lines 125/830, 1389/2582)" in said
    assert "2 also in dev_few_all (line 1625, 2537)" in said
    statement = StringIO()
    call_command("human_evaluation_statement", "--study", "fewclue-csl-paper", stdout=statement)
    assert "4 shown alike with different gold" in statement.getvalue()


def test_the_simulated_crowd_knows_each_cluewsc_items_own_gold(fewclue_dir):
    """CLUEWSC items share a text and mark other spans: the crowd's gold is keyed by the item as shown."""
    call_command("import_fewclue", str(fewclue_dir), "--task", "cluewsc", stdout=StringIO())
    call_command("create_fewclue_studies", "--tasks", "cluewsc", "--seed", str(SEED), stdout=StringIO())
    study = Study.objects.get(slug="fewclue-cluewsc-paper")
    condition = study.conditions.get()
    test_set = ExampleSet.objects.get(pk=condition.test_set_id)
    lines = _by_line(test_set)
    file_rows = dict(rows(fewclue_dir, "cluewsc", "test_public"))
    shared_text = defaultdict(set)
    for row in file_rows.values():
        shared_text[row["text"]].add(item(row, "cluewsc"))
    gold, _ = gold_book(study)
    sharing = 0
    for example in condition.test_set.task.examples.filter(pk__in=condition.test_sample):
        row = file_rows[lines[example.pk]]
        shown = {
            "context": example.context,
            "question": presentation.question_for(study.task, example, study.language),
            "marks": presentation.item_marks(example),
            "options": presentation.item_options(example),
        }
        assert gold[shown_key(shown)] == frozenset([row["label"]])
        sharing += len(shared_text[row["text"]]) > 1
    assert sharing > 50  # most sampled items share their text with another item


def test_the_statement_says_the_workers_did_not_discuss_and_three_is_the_platforms_choice(fewclue_dir):
    call_command("import_fewclue", str(fewclue_dir), "--task", "eprstmt", stdout=StringIO())
    call_command("create_fewclue_studies", "--tasks", "eprstmt", "--seed", str(SEED), stdout=StringIO())
    statement = StringIO()
    call_command("human_evaluation_statement", "--study", "fewclue-eprstmt-paper", stdout=statement)
    text = " ".join(statement.getvalue().split())
    assert "who discussed their answers after training, these workers did not" in text
    assert "The number of workers per condition is this platform's choice; neither source gives one." in text
