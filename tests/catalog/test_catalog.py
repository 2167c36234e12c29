"""The six CLUES task definitions and how they are installed."""

import ast
import importlib
import json
from pathlib import Path

import pytest
from django.apps import apps

from tasks_app.catalog import BY_SLUG, CLUES_TASKS, FOLDER_TO_SLUG, NER_QUESTION_TYPES, install_clues_tasks
from tasks_app.models import Label, Task

pytestmark = pytest.mark.django_db
SLUGS = ["sst2", "mnli", "conll03", "wikiann", "squad2", "record"]
CLUES_MIGRATION = importlib.import_module("tasks_app.migrations.0002_clues_tasks")


def test_migrations_install_the_six_clues_tasks():
    assert sorted(Task.objects.filter(slug__in=SLUGS).values_list("slug", flat=True)) == sorted(SLUGS)
    assert list(Label.objects.filter(task__slug="mnli").values_list("name", flat=True)) == [
        "entailment",
        "neutral",
        "contradiction",
    ]


def test_definitions_are_complete():
    for definition in CLUES_TASKS:
        assert definition.description and definition.instructions
        if definition.kind == "classification":
            assert definition.labels and all(label.definition and label.example for label in definition.labels)
        else:
            assert not definition.labels
    assert {d.slug: d.multiple_spans for d in CLUES_TASKS if d.kind == "span"} == {
        "conll03": True,
        "wikiann": True,
        "squad2": True,  # the paper's SQuAD page takes several answers (its Fig. 3)
        "record": False,
    }
    assert [d.slug for d in CLUES_TASKS if not d.empty_answer_allowed] == ["record"]
    assert [qt["code"] for qt in BY_SLUG["conll03"].question_types] == ["PER", "ORG", "LOC"]


def test_installing_again_keeps_admin_edits():
    task = Task.objects.get(slug="sst2")
    task.description = "Edited by an admin."
    task.save()
    label = Label.objects.get(task=task, name="positive")
    label.definition = "Admin wording."
    label.save()
    install_clues_tasks()
    assert Task.objects.get(slug="sst2").description == "Edited by an admin."
    assert Label.objects.get(task=task, name="positive").definition == "Admin wording."
    assert Task.objects.filter(slug__in=SLUGS).count() == 6


def test_installing_adds_back_a_deleted_label_and_a_deleted_task():
    Label.objects.filter(task__slug="sst2", name="negative").delete()
    Task.objects.filter(slug="record").delete()
    install_clues_tasks()
    assert Label.objects.filter(task__slug="sst2", name="negative").exists()
    assert Task.objects.get(slug="record").group == "mrc"


def test_overwrite_resets_catalog_text():
    Task.objects.filter(slug="mnli").update(description="x", name="y")
    Label.objects.filter(task__slug="mnli", name="neutral").update(definition="z")
    install_clues_tasks(overwrite=True, slugs=["mnli"])
    task = Task.objects.get(slug="mnli")
    assert (task.name, task.description) == ("MNLI", BY_SLUG["mnli"].description)
    assert Label.objects.get(task=task, name="neutral").definition == BY_SLUG["mnli"].labels[1].definition


def test_question_type_lookup_on_the_installed_task():
    task = Task.objects.get(slug="wikiann")
    assert task.question_type_for("List all the organizations in the context") == "ORG"


@pytest.mark.clues
def test_folders_and_question_texts_match_the_release(clues_dir):
    assert sorted(FOLDER_TO_SLUG) == sorted(p.name for p in clues_dir.iterdir() if p.is_dir())
    expected = {qt["question"] for qt in NER_QUESTION_TYPES}
    for folder in ("CoNLL2003", "WikiANN_EN"):
        definition = BY_SLUG[FOLDER_TO_SLUG[folder]]
        test_file = clues_dir / folder / f"{definition.prefix}_test.jsonl"
        questions = {json.loads(line)["question"] for line in test_file.read_text(encoding="utf-8").splitlines()}
        assert questions == expected
    for slug in ("sst2", "mnli"):
        definition = BY_SLUG[slug]
        test_file = clues_dir / definition.folder / f"{definition.prefix}_test.jsonl"
        golds = {json.loads(line)["answer"][0] for line in test_file.read_text(encoding="utf-8").splitlines()}
        assert golds == {label.name for label in definition.labels}


def test_tasks_app_never_imports_annotation():
    root = Path(__file__).resolve().parents[2] / "tasks_app"
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            if any(name == "annotation" or name.startswith("annotation.") for name in names):
                offenders.append(str(path))
    assert offenders == []


def _imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


def test_the_clues_data_migration_imports_nothing_but_django():
    # Live application code may change; a migration must replay the same way forever.
    assert [m for m in _imported_modules(Path(CLUES_MIGRATION.__file__)) if m.split(".")[0] != "django"] == []


# What annotation's 0009_clues_qa_answer_options changed later, bringing the QA tasks in line with the paper.
GERMAN_MIGRATION = importlib.import_module("tasks_app.migrations.0010_clues_german_texts")
_LATER = {"squad2": {"multiple_spans": True, **GERMAN_MIGRATION.SQUAD_NEW}}


def test_the_clues_data_migration_created_exactly_its_frozen_tasks():
    for frozen in CLUES_MIGRATION.TASKS:
        task = Task.objects.get(slug=frozen["slug"])
        fields = {name: getattr(task, name) for name in frozen if name not in ("slug", "labels")}
        expected = {name: value for name, value in frozen.items() if name not in ("slug", "labels")}
        assert fields == {**expected, **{k: v for k, v in _LATER.get(frozen["slug"], {}).items() if k in frozen}}
        labels = list(Label.objects.filter(task=task).values("name", "definition", "example", "position"))
        assert labels == [{**label, "position": i} for i, label in enumerate(frozen["labels"])]
    assert [t["slug"] for t in CLUES_MIGRATION.TASKS] == SLUGS


def test_the_clues_data_migration_adds_back_what_is_missing_and_keeps_admin_edits():
    Task.objects.filter(slug="sst2").update(description="Edited by an admin.")
    Label.objects.filter(task__slug="mnli", name="neutral").delete()
    Task.objects.filter(slug="record").delete()
    CLUES_MIGRATION.install(apps, None)
    assert Task.objects.get(slug="sst2").description == "Edited by an admin."
    assert Label.objects.get(task__slug="mnli", name="neutral").position == 1
    assert Task.objects.get(slug="record").display_order == 60
    assert Task.objects.filter(slug__in=SLUGS).count() == 6
    assert Label.objects.filter(task__slug__in=SLUGS).count() == 5
