"""python manage.py import_tasks FILE_OR_DIR --task SLUG: import any task in the unified JSONL format."""

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from tasks_app.importing.service import NewTask, import_task_files
from tasks_app.management.base import ProjectCommand
from tasks_app.management.commands._importing import add_common_arguments, run_import
from tasks_app.models import Task


class Command(ProjectCommand):
    help = (
        "Import a task from JSONL lines with id, context, question and answer (a list of strings or of "
        "{text, answer_start}). Give a folder (one *_test.jsonl plus optional *_train_<k>_<split>.jsonl) or a "
        "test file. A task that does not exist yet is created from --name, --kind and (classification) --labels."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "path", help="A folder, or a test file (its *_train_<k>_<split>.jsonl siblings come along)."
        )
        parser.add_argument("--task", required=True, dest="slug", help="The task's slug.")
        parser.add_argument("--name", help="New task: display name.")
        parser.add_argument("--kind", choices=[k.value for k in Task.Kind], help="New task: classification or span.")
        parser.add_argument("--labels", help="New classification task: the label set, comma separated.")
        parser.add_argument("--description", default="", help="New task: the description shown to workers.")
        parser.add_argument(
            "--single-span",
            action="store_true",
            help="New span task: an answer is at most one span (QA), not several (NER).",
        )
        parser.add_argument(
            "--question-type",
            action="append",
            default=[],
            metavar="CODE=QUESTION",
            help="New task: a question type and its exact question text (repeatable).",
        )
        add_common_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        new_task = None
        if options["name"] or options["kind"]:
            if not (options["name"] and options["kind"]):
                raise CommandError("a new task needs both --name and --kind")
            new_task = NewTask(
                name=options["name"],
                kind=options["kind"],
                description=options["description"],
                labels=tuple(label.strip() for label in (options["labels"] or "").split(",") if label.strip()),
                question_types=tuple(_question_type(text) for text in options["question_type"]),
                multiple_spans=not options["single_span"],
            )
        run_import(
            self,
            options,
            lambda: import_task_files(
                path=Path(options["path"]),
                slug=options["slug"],
                new_task=new_task,
                split=options["split"],
                build_nested=options["build_nested"],
                dry_run=options["dry_run"],
            ),
        )


def _question_type(text: str) -> dict[str, str]:
    code, sep, question = text.partition("=")
    if not sep or not code.strip() or not question.strip():
        raise CommandError(f"--question-type must look like CODE=question text, got {text!r}")
    return {"code": code.strip(), "name": code.strip(), "question": question.strip()}
