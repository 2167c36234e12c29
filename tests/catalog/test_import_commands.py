"""The import commands: reports, --json, atomic failure, idempotence, one-line errors."""

import json
import os
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tasks_app.demo import DEMO_DATA_DIR
from tasks_app.models import Example, ExampleSet, ExampleSetItem, TrainingSplit

from .conftest import clear_imported_data

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo_copy(tmp_path):
    target = tmp_path / "release"
    shutil.copytree(DEMO_DATA_DIR, target)
    return target


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def counts():
    return Example.objects.count(), ExampleSet.objects.count(), ExampleSetItem.objects.count()


def append_line(path: Path, text: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.append(text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def test_report_summarises_by_kind_and_details_list_every_finding(demo_copy):
    out = run("import_clues", str(demo_copy))
    assert "severity  kind" in out and "question_label_mismatch" in out and "MNLI/mnli_test.jsonl:1" in out
    assert "file:line" not in out and "add --details" in out  # the per-finding table is on request
    assert "sst2: test 8 items; split(s) 1 nested; training sets of 10/20/30 items" in out
    assert "Imported 6 task(s)." in out
    clear_imported_data()
    detailed = run("import_clues", str(demo_copy), "--details")
    assert "file:line" in detailed and detailed.count("question_label_mismatch") > 1


def test_the_summary_counts_each_kind_once_with_one_example(demo_copy):
    test_file = demo_copy / "CoNLL2003" / "conll_test.jsonl"
    first = json.loads(test_file.read_text(encoding="utf-8").splitlines()[0])
    for n in range(3):  # three golds that are not in their context: one summary line, count 3
        extra = {**first, "id": f"nf-{n}", "answer": [f"Nowhere{n}"], "context": f"{first['context']} {n}"}
        append_line(test_file, json.dumps(extra))
    out = run("import_clues", str(demo_copy), "--dry-run")
    line = next(line for line in out.splitlines() if line.startswith("warning") and "gold_not_found" in line)
    assert " 3  conll03 " in line and "Nowhere0" in line and "Nowhere1" not in out
    assert "Nowhere1" in run("import_clues", str(demo_copy), "--dry-run", "--details")


def test_an_error_is_listed_in_full_under_the_summary(demo_copy):
    line = append_line(demo_copy / "SST-2" / "sst_test.jsonl", "{not json")
    with pytest.raises(CommandError):
        call_command("import_clues", str(demo_copy), stdout=(out := StringIO()))
    text = out.getvalue()
    assert text.index("malformed_json") < text.index("question_label_mismatch")  # errors first
    assert "Errors:" in text and f"SST-2/sst_test.jsonl:{line}" in text


def test_json_option_prints_a_list_of_findings(demo_copy):
    findings = json.loads(run("import_clues", str(demo_copy), "--json"))
    assert isinstance(findings, list) and len(findings) == 4 + 7  # + the comparison with the paper
    assert set(findings[0]) == {"task", "file", "line", "kind", "message", "severity"}
    assert findings[0]["task"] == "mnli" and findings[0]["line"] == 1


def test_the_report_compares_each_test_set_with_the_paper(demo_copy):
    out = run("import_clues", str(demo_copy), "--dry-run")
    section = out[out.index("Compared with the CLUES paper") :]
    assert "sst2: test set: " in section and "items; the paper's Table 3 has 210" in section
    assert "mnli: MNLI test genres: " in section and "the paper has 7 genres x 30 items" in section
    assert "paper_comparison" not in out[: out.index("Compared with the CLUES paper")]  # not in the table


def test_importing_twice_creates_no_duplicates(demo_copy):
    run("import_clues", str(demo_copy))
    first = counts()
    out = run("import_clues", str(demo_copy))
    assert counts() == first
    assert "examples 0 new, 0 updated; sets 0 written, 4 unchanged" in out


def test_reimport_replaces_set_membership_in_the_new_order(demo_copy):
    run("import_clues", str(demo_copy), "--task", "sst2")
    ten = demo_copy / "SST-2" / "sst_train_10_1.jsonl"
    lines = ten.read_text(encoding="utf-8").splitlines()
    ten.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    before = Example.objects.count()
    run("import_clues", str(demo_copy), "--task", "sst2")
    ten_shot = ExampleSet.objects.get(task__slug="sst2", shots=10)
    ids = list(ten_shot.ordered_examples().values_list("source_id", flat=True))
    assert ids == [str(json.loads(line)["id"]) for line in reversed(lines)]
    assert Example.objects.count() == before


def test_dry_run_writes_nothing(demo_copy):
    clear_imported_data()
    out = run("import_clues", str(demo_copy), "--dry-run")
    assert "Dry run: nothing was written." in out
    assert counts() == (0, 0, 0)


def test_malformed_line_fails_the_whole_run_and_imports_nothing(demo_copy):
    clear_imported_data()
    bad_line = append_line(demo_copy / "ReCoRD" / "record_test.jsonl", '{"id": "broken", "context": ')
    with pytest.raises(CommandError, match=r"^import failed: 1 error\(s\) in 1 file\(s\); nothing was imported$"):
        run("import_clues", str(demo_copy))
    assert counts() == (0, 0, 0)  # not even the five good tasks before it
    assert not TrainingSplit.objects.exists()
    assert bad_line == 9


def test_failed_run_still_prints_where_the_error_is(demo_copy, capsys):
    line = {"id": 99, "context": "meh", "question": "positive or negative?", "answer": ["mixed"]}
    append_line(demo_copy / "SST-2" / "sst_test.jsonl", json.dumps(line))
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_clues", str(demo_copy), "--json", stdout=out)
    errors = [f for f in json.loads(out.getvalue()) if f["severity"] == "error"]
    assert errors == [
        {
            "task": "sst2",
            "file": "SST-2/sst_test.jsonl",
            "line": 9,
            "kind": "unknown_label",
            "message": "label 'mixed' is not one of: positive, negative",
            "severity": "error",
        }
    ]


@pytest.mark.parametrize(
    ("make_path", "message"),
    [
        (lambda tmp: tmp / "nowhere", "no such file or directory: "),
        (lambda tmp: tmp, "holds none of the CLUES task folders"),
    ],
)
def test_bad_paths_give_a_one_line_error(tmp_path, make_path, message):
    with pytest.raises(CommandError) as info:
        run("import_clues", str(make_path(tmp_path)))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_task_folder_without_its_test_file_is_an_error(demo_copy):
    (demo_copy / "MNLI" / "mnli_test.jsonl").unlink()
    with pytest.raises(CommandError, match="no test file in .*MNLI"):
        run("import_clues", str(demo_copy / "MNLI"))


def test_a_missing_training_file_is_reported(demo_copy):
    (demo_copy / "SST-2" / "sst_train_20_1.jsonl").unlink()
    findings = json.loads(run("import_clues", str(demo_copy / "SST-2"), "--json"))
    assert [(f["file"], f["kind"]) for f in findings if f["kind"] != "paper_comparison"] == [
        ("SST-2/sst_train_20_1.jsonl", "missing_file")
    ]


def test_build_nested_option_is_reported(demo_copy):
    ten = demo_copy / "SQuAD-v2" / "squad-v2_train_10_1.jsonl"
    test_lines = (demo_copy / "SQuAD-v2" / "squad-v2_test.jsonl").read_text(encoding="utf-8").splitlines()
    not_in_twenty = test_lines[:8] + ten.read_text(encoding="utf-8").splitlines()[:2]
    ten.write_text("\n".join(not_in_twenty) + "\n", encoding="utf-8")
    out = run("import_clues", str(demo_copy), "--task", "squad2", "--build-nested")
    assert "split_not_nested" in out and "nested_built" in out
    assert "split(s) 1 built from largest file" in out
    split = TrainingSplit.objects.get(task__slug="squad2", number=1)
    assert split.nested_built and split.is_nested


def test_manage_py_prints_one_line_and_no_traceback(tmp_path, demo_copy):
    append_line(demo_copy / "MNLI" / "mnli_train_10_1.jsonl", "not json at all")
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path}/cli.sqlite3"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    manage = [sys.executable, str(REPO / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=REPO)
    done = subprocess.run(
        [*manage, "import_clues", str(demo_copy), "--json"], env=env, cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "CommandError: import failed: 1 error(s) in 1 file(s); nothing was imported"
    ]
    errors = [f for f in json.loads(done.stdout) if f["severity"] == "error"]
    assert [(e["file"], e["line"], e["kind"]) for e in errors] == [("MNLI/mnli_train_10_1.jsonl", 11, "malformed_json")]


@pytest.mark.clues
def test_malformed_copy_of_the_real_release_rolls_back_every_task(clues_dir, tmp_path):
    clear_imported_data()
    for folder in ("SST-2", "CoNLL2003"):
        shutil.copytree(clues_dir / folder, tmp_path / folder)
    target = tmp_path / "CoNLL2003" / "conll_train_30_5.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines()
    lines[40] = lines[40].replace('"answer"', '"answers"')
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError, match="1 error"):
        call_command("import_clues", str(tmp_path), stdout=out)
    assert "CoNLL2003/conll_train_30_5.jsonl:41  error" in out.getvalue()
    assert "missing field(s): answer" in out.getvalue()
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize("value", ["0", "6", "two"])
def test_a_split_outside_1_to_5_is_refused_before_reading_anything(demo_copy, value):
    with pytest.raises(CommandError, match=r"a split is a number from 1 to 5"):
        run("import_clues", str(demo_copy), "--split", value)


def test_a_split_without_training_files_is_an_error_not_a_silent_test_only_import(demo_copy):
    clear_imported_data()
    with pytest.raises(CommandError, match=r"no training files of split 3 in .*SST-2 \(expected sst_train_<shots>_3"):
        run("import_clues", str(demo_copy), "--split", "3")
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize("name", ["sst_train_10_0.jsonl", "sst_train_10_6.jsonl", "sst_train_0_1.jsonl"])
def test_a_training_file_named_outside_the_release_scheme_is_a_one_line_error(demo_copy, name):
    clear_imported_data()
    shutil.copy(demo_copy / "SST-2" / "sst_train_10_1.jsonl", demo_copy / "SST-2" / name)
    with pytest.raises(CommandError) as info:
        run("import_clues", str(demo_copy))
    assert str(info.value) == (
        f"{name}: a training file is <prefix>_train_<shots>_<split>.jsonl with split 1-5 and at least 1 shot"
    )
    assert counts() == (0, 0, 0)


def test_a_set_with_recorded_answers_is_never_changed_by_a_reimport(demo_copy):
    from tests.factories import ResponseFactory

    run("import_clues", str(demo_copy), "--task", "sst2")
    test_set = ExampleSet.objects.get(task__slug="sst2", role="test")
    answered = test_set.ordered_examples().first()
    ResponseFactory(example=answered)
    before = list(test_set.items.values_list("example_id", "position"))
    test_file = demo_copy / "SST-2" / "sst_test.jsonl"
    test_file.write_text("\n".join(test_file.read_text(encoding="utf-8").splitlines()[1:]) + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as info:
        run("import_clues", str(demo_copy), "--task", "sst2")
    assert str(info.value).startswith("the sst2 test set already has answers recorded against its examples")
    assert "\n" not in str(info.value)
    assert list(test_set.items.values_list("example_id", "position")) == before


def test_unchanged_sets_with_answers_import_again_without_complaint(demo_copy):
    from tests.factories import ResponseFactory

    run("import_clues", str(demo_copy), "--task", "sst2")
    ResponseFactory(example=ExampleSet.objects.get(task__slug="sst2", role="test").ordered_examples().first())
    assert "sets 0 written, 4 unchanged" in run("import_clues", str(demo_copy), "--task", "sst2")
