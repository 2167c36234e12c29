"""Model predictions: parse a CLUES-format file, validate it, store a ModelRun, score it.

Accepted files:
- JSON object ``{"<test id>": ["answer", ...], ...}`` (the CLUES format);
- JSONL, one ``{"id": ..., "answer": [...]}`` per line (``prediction`` or
  ``predictions`` are accepted for ``answer``).

Test ids are the examples' ``source_id`` within the task's test set. Every test
id must be predicted, no unknown id may appear, and every answer must be a
list of strings (``[]`` is the empty set). A model's S1 is the mean over test
items of the same ``tasks_app.scoring.s1`` the human responses are scored with.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from annotation.models import ModelRun
from annotation.reporting.options import ReportError
from tasks_app.importing.reading import json_lines
from tasks_app.models import Example, ExampleSet, Task
from tasks_app.scoring import mean, s1

_ANSWER_KEYS = ("answer", "prediction", "predictions")
_MAX_LISTED = 5


def _listed(ids: Iterable[str]) -> str:
    ordered = sorted(ids)
    head = ", ".join(repr(i) for i in ordered[:_MAX_LISTED])
    return head + (f" and {len(ordered) - _MAX_LISTED} more" if len(ordered) > _MAX_LISTED else "")


def parse_predictions(text: str | bytes) -> dict[str, list[str]]:
    """The file's predictions as {test id: answers}; ReportError naming the problem."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ReportError("the predictions file is not UTF-8 text") from None
    stripped = text.strip()
    if not stripped:
        raise ReportError("the predictions file is empty")
    raw: object
    if stripped.startswith("{"):
        try:
            raw = json.loads(stripped)
        except json.JSONDecodeError:
            raw = None  # maybe JSONL whose first line is an object
        if isinstance(raw, dict) and not any(k in raw for k in ("id", *_ANSWER_KEYS)):
            return _validate_pairs(raw.items())
    pairs = []
    for number, line in json_lines(text):  # an answer may hold a raw U+2028: not splitlines()
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportError(f"line {number}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or "id" not in obj:
            raise ReportError(f'line {number}: expected an object with "id" and "answer"')
        key = next((k for k in _ANSWER_KEYS if k in obj), None)
        if key is None:
            raise ReportError(f'line {number}: no "answer" (or "prediction") for id {obj["id"]!r}')
        pairs.append((obj["id"], obj[key]))
    return _validate_pairs(pairs)


def _validate_pairs(pairs: Iterable[tuple[Any, Any]]) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    bad: list[str] = []
    for raw_id, answers in pairs:
        test_id = str(raw_id)
        if test_id in result:
            raise ReportError(f"test id {test_id!r} is predicted twice")
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            bad.append(test_id)
            continue
        result[test_id] = answers
    if bad:
        raise ReportError(f"answers must be lists of strings; not so for {_listed(bad)}")
    return result


def _test_examples(task: Task) -> dict[str, list[str]]:
    test_set = ExampleSet.objects.filter(task=task, role=ExampleSet.Role.TEST).first()
    if test_set is None:
        raise ReportError(f"task {task.slug} has no test set")
    gold: dict[str, list[str]] = {}
    rows = Example.objects.filter(set_items__example_set=test_set).values_list("source_id", "gold_answers")
    for source_id, answers in rows:
        if source_id in gold:
            raise ReportError(f"task {task.slug}: test id {source_id!r} is not unique in the test set")
        gold[source_id] = answers
    return gold


def validate_against_task(*, task: Task, predictions: dict[str, list[str]]) -> None:
    gold = _test_examples(task)
    unknown = set(predictions) - set(gold)
    missing = set(gold) - set(predictions)
    problems = []
    if unknown:
        problems.append(f"unknown test ids: {_listed(unknown)}")
    if missing:
        problems.append(f"missing predictions for {len(missing)} test ids: {_listed(missing)}")
    if problems:
        raise ReportError(f"{task.slug}: " + "; ".join(problems))


def model_run_create(*, task: Task, name: str, content: str | bytes, shots: int | None = None) -> ModelRun:
    """Parse, validate against the task's test set and store; nothing is stored on error."""
    name = (name or "").strip()
    if not name:
        raise ReportError("give the model run a name")
    predictions = parse_predictions(content)
    validate_against_task(task=task, predictions=predictions)
    return ModelRun.objects.create(task=task, name=name, shots=shots, predictions=predictions)


@dataclass(frozen=True)
class ModelScore:
    run: ModelRun
    s1: float  # 0..1
    items: int


def model_run_score(run: ModelRun) -> ModelScore:
    gold = _test_examples(run.task)
    scores = [s1(run.predictions.get(test_id, []), answers) for test_id, answers in gold.items()]
    return ModelScore(run=run, s1=mean(scores), items=len(scores))


def model_item_scores(run: ModelRun, *, example_ids: Collection[int] | None = None) -> dict[int, float]:
    """The run's S1 per item, keyed by example id (to pair with the humans' item scores): on ``example_ids``,
    the items the humans saw (a FewCLUE condition's sample, which may come from the validation set), or on
    the whole test set. An item without a prediction scores as the empty answer."""
    if example_ids is not None:
        rows = Example.objects.filter(task=run.task, pk__in=example_ids).values_list("pk", "source_id", "gold_answers")
    else:
        test_set = ExampleSet.objects.filter(task=run.task, role=ExampleSet.Role.TEST).first()
        if test_set is None:
            raise ReportError(f"task {run.task.slug} has no test set")
        rows = Example.objects.filter(set_items__example_set=test_set).values_list("pk", "source_id", "gold_answers")
    return {pk: s1(run.predictions.get(source_id, []), gold) for pk, source_id, gold in rows}
