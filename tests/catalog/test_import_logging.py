"""The importer logs each run at info: why a run was refused (the caller reports the error itself, so a
command still prints one line), or its summary when it imports."""

import json
import logging

import pytest

from tasks_app.importing.service import ImportRejected, NewTask, import_task_files
from tasks_app.models import Task

pytestmark = pytest.mark.django_db
LOGGER = "tasks_app.importing.service"
TOPICS = NewTask(name="Topics", kind="classification", labels=("sport", "weather"))


def rows(n):
    return [
        {"id": f"t{i}", "context": f"Headline {i}.", "question": "sport or weather?", "answer": ["sport"]}
        for i in range(n)
    ]


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_a_refused_import_logs_why_at_info(tmp_path, caplog):
    write(tmp_path / "topics_test.jsonl", [json.dumps(rows(1)[0]), "{not json"])
    with caplog.at_level(logging.INFO, logger=LOGGER), pytest.raises(ImportRejected):
        import_task_files(path=tmp_path, slug="topics", new_task=TOPICS)
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.INFO
    message = record.getMessage()
    assert "topics" in message and "nothing was imported" in message and "malformed_json" in message
    assert not Task.objects.filter(slug="topics").exists()


def test_an_import_logs_its_summary_at_info(tmp_path, caplog):
    write(tmp_path / "topics_test.jsonl", [json.dumps(r) for r in rows(3)])
    with caplog.at_level(logging.INFO, logger=LOGGER):
        import_task_files(path=tmp_path, slug="topics", new_task=TOPICS)
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == LOGGER)
    assert any("imported topics: examples 3 new" in m for m in messages)
    assert any(m.startswith("import of topics done") for m in messages)
