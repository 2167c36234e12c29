"""import_tasks: a brand-new task from unified JSONL files, with no code."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tasks_app.models import Example, ExampleSet, Label, Task, TrainingSplit

pytestmark = pytest.mark.django_db


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def run(*args):
    out = StringIO()
    call_command("import_tasks", *args, stdout=out)
    return out.getvalue()


def topic_rows(n, start=0):
    topics = ["sport", "weather", "music"]
    return [
        {
            "id": f"t{i}",
            "context": f"Headline number {i} about {topics[i % 3]}.",
            "question": "sport, weather or music?",
            "answer": [topics[i % 3]],
        }
        for i in range(start, start + n)
    ]


LABELS = "sport,weather,music"


def test_a_raw_line_separator_in_a_context_imports_as_one_record_with_the_character_kept(tmp_path):
    rows = topic_rows(3)
    rows[1]["context"] = "Headline one\u2028continued on the next line, about the weather."
    path = write_jsonl(tmp_path / "topics_test.jsonl", rows)
    assert "\u2028" in path.read_text(encoding="utf-8")  # raw in the file, as json.dumps leaves it
    run(str(path), "--task", "topics", "--name", "Topics", "--kind", "classification", "--labels", LABELS)
    examples = Example.objects.filter(task__slug="topics")
    assert examples.count() == 3
    assert examples.get(source_id="t1").context == "Headline one\u2028continued on the next line, about the weather."


def test_a_new_classification_task_with_training_splits(tmp_path):
    write_jsonl(tmp_path / "topics_test.jsonl", topic_rows(5))
    train = topic_rows(6, start=100)
    write_jsonl(tmp_path / "topics_train_2_1.jsonl", train[:2])
    write_jsonl(tmp_path / "topics_train_6_1.jsonl", train)
    out = run(
        str(tmp_path),
        "--task",
        "topics",
        "--name",
        "Topics",
        "--kind",
        "classification",
        "--labels",
        "sport, weather,music",
        "--description",
        "Pick the topic of the headline.",
    )
    task = Task.objects.get(slug="topics")
    assert (task.name, task.kind, task.description) == ("Topics", "classification", "Pick the topic of the headline.")
    assert list(task.labels.values_list("name", flat=True)) == ["sport", "weather", "music"]
    assert ExampleSet.objects.get(task=task, role="test").items.count() == 5
    assert ExampleSet.objects.get(task=task, shots=2).items.count() == 2
    assert TrainingSplit.objects.get(task=task, number=1).is_nested
    assert "topics: test 5 items" in out


def test_the_same_command_twice_imports_once(tmp_path):
    write_jsonl(tmp_path / "topics_test.jsonl", topic_rows(4))
    args = (
        str(tmp_path),
        "--task",
        "topics",
        "--name",
        "Topics",
        "--kind",
        "classification",
        "--labels",
        "sport,weather,music",
    )
    run(*args)
    out = run(*args)
    assert Example.objects.filter(task__slug="topics").count() == 4
    assert Task.objects.filter(slug="topics").count() == 1 and Label.objects.filter(task__slug="topics").count() == 3
    assert "examples 0 new" in out


def test_a_new_span_task_from_a_single_file_with_offsets(tmp_path):
    context = "Café Zoë opened in Köln 🎉 and Café Zoë stayed."
    rows = [
        {"id": "a", "context": context, "question": "Which café?", "answer": [{"text": "Café Zoë", "answer_start": 30}]}
    ]
    path = write_jsonl(tmp_path / "cafes.jsonl", rows)
    run(str(path), "--task", "cafes", "--name", "Cafés", "--kind", "span", "--single-span")
    example = Example.objects.get(task__slug="cafes")
    assert example.gold_answers == ["Café Zoë"]
    assert [(s["start"], s["end"]) for s in example.gold_spans] == [(30, 38), (0, 8)]  # the given start first
    assert not Task.objects.get(slug="cafes").multiple_spans


def test_question_types_for_a_new_task(tmp_path):
    rows = [{"id": "1", "context": "Rex barked at Tom .", "question": "List the dogs", "answer": ["Rex"]}]
    write_jsonl(tmp_path / "dogs_test.jsonl", rows)
    run(str(tmp_path), "--task", "dogs", "--name", "Dogs", "--kind", "span", "--question-type", "DOG=List the dogs")
    assert Task.objects.get(slug="dogs").question_types == [{"code": "DOG", "name": "DOG", "question": "List the dogs"}]
    assert Example.objects.get(task__slug="dogs").question_type == "DOG"


def test_an_existing_task_needs_no_definition(tmp_path):
    line = {"id": "x", "context": "a lovely day", "question": "positive or negative?", "answer": ["positive"]}
    write_jsonl(tmp_path / "more_test.jsonl", [line])
    run(str(tmp_path), "--task", "sst2")
    assert ExampleSet.objects.get(task__slug="sst2", role="test").items.count() == 1


def test_a_label_outside_the_new_label_set_creates_nothing(tmp_path):
    rows = topic_rows(3)
    rows[1]["answer"] = ["politics"]
    write_jsonl(tmp_path / "topics_test.jsonl", rows)
    with pytest.raises(CommandError, match="nothing was imported"):
        run(
            str(tmp_path),
            "--task",
            "topics",
            "--name",
            "Topics",
            "--kind",
            "classification",
            "--labels",
            "sport,weather,music",
        )
    assert not Task.objects.filter(slug="topics").exists()
    assert not Label.objects.filter(task__slug="topics").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "nope"], "task 'nope' does not exist; give --name and --kind to create it"),
        (["--task", "nope", "--name", "Nope"], "a new task needs both --name and --kind"),
        (["--task", "nope", "--name", "N", "--kind", "classification"], "needs its label set"),
        (["--task", "nope", "--name", "N", "--kind", "span", "--question-type", "PER"], "CODE=question text"),
        (["--task", "no pe", "--name", "N", "--kind", "span"], "must be 1-50 letters"),
        (["--task", "nope", "--name", "N", "--kind", "classification", "--labels", "a,a"], "must be distinct"),
        (["--task", "nope", "--name", "N", "--kind", "span", "--question-type", f"{'X' * 21}=q"], "at most 20"),
    ],
)
def test_incomplete_definitions_are_one_line_errors(tmp_path, args, message):
    write_jsonl(tmp_path / "x_test.jsonl", topic_rows(1))
    with pytest.raises(CommandError, match=message):
        run(str(tmp_path), *args)


def test_a_missing_file_is_a_one_line_error(tmp_path):
    with pytest.raises(CommandError, match="no such file or directory"):
        run(str(tmp_path / "missing.jsonl"), "--task", "sst2")


def test_an_empty_test_file_is_an_error(tmp_path):
    (tmp_path / "empty_test.jsonl").write_text("\n", encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_tasks", str(tmp_path), "--task", "sst2", "--json", stdout=out)
    assert [f["kind"] for f in json.loads(out.getvalue())] == ["empty_file"]


def test_a_byte_order_mark_is_tolerated(tmp_path):
    line = {"id": "b", "context": "a fine day", "question": "positive or negative?", "answer": ["positive"]}
    (tmp_path / "bom_test.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps(line).encode() + b"\n")
    run(str(tmp_path), "--task", "sst2")
    assert Example.objects.filter(task__slug="sst2", source_id="b").exists()


def test_a_file_that_is_not_utf8_is_reported(tmp_path):
    (tmp_path / "bad_test.jsonl").write_bytes(b'{"id": 1, "context": "caf\xe9"}\n')
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_tasks", str(tmp_path), "--task", "sst2", "--json", stdout=out)
    assert [f["kind"] for f in json.loads(out.getvalue())] == ["unreadable_file"]


def test_rerunning_with_a_contradicting_definition_is_refused(tmp_path):
    write_jsonl(tmp_path / "topics_test.jsonl", topic_rows(3))
    run(
        str(tmp_path),
        "--task",
        "topics",
        "--name",
        "Topics",
        "--kind",
        "classification",
        "--labels",
        "sport,weather,music",
    )
    with pytest.raises(CommandError, match="task 'topics' exists as a classification task, not span"):
        run(str(tmp_path), "--task", "topics", "--name", "Topics", "--kind", "span")
    with pytest.raises(CommandError, match="exists with the labels music, sport, weather"):
        run(str(tmp_path), "--task", "topics", "--name", "Topics", "--kind", "classification", "--labels", "sport,art")
    assert list(Label.objects.filter(task__slug="topics").values_list("name", flat=True)) == [
        "sport",
        "weather",
        "music",
    ]


def test_labels_for_a_new_span_task_are_refused(tmp_path):
    rows = [{"id": "1", "context": "Rex barked .", "question": "Which dog?", "answer": ["Rex"]}]
    write_jsonl(tmp_path / "dogs_test.jsonl", rows)
    with pytest.raises(CommandError, match="labels are for classification tasks"):
        run(str(tmp_path), "--task", "dogs", "--name", "Dogs", "--kind", "span", "--labels", "Rex")
    assert not Task.objects.filter(slug="dogs").exists()


def test_split_on_a_single_file_is_a_one_line_error(tmp_path):
    path = write_jsonl(tmp_path / "rows.jsonl", topic_rows(2))
    with pytest.raises(CommandError, match="rows.jsonl is a single file without training files"):
        run(str(path), "--task", "sst2", "--split", "1")
