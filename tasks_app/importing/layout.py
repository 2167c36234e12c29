"""Find the files of a release: ``<prefix>_test.jsonl`` and ``<prefix>_train_<k>_<split>.jsonl``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tasks_app.catalog import BY_SLUG, FOLDER_TO_SLUG, SLUG_TO_FOLDER

SHOT_LEVELS = (10, 20, 30)
SPLITS = (1, 2, 3, 4, 5)
_TRAIN = re.compile(r"^(?P<prefix>.+)_train_(?P<shots>\d+)_(?P<split>\d+)\.jsonl$")
_TEST = re.compile(r"^(?P<prefix>.+)_test\.jsonl$")


class LayoutError(ValueError):
    """A path that does not hold what the command expects; the message is one line for the user."""


@dataclass
class TaskFiles:
    slug: str
    folder: Path
    test: Path
    train: dict[tuple[int, int], Path] = field(default_factory=dict)  # (split, shots) -> file

    def display(self, path: Path) -> str:
        return f"{self.folder.name}/{path.name}"


def task_files(folder: Path, *, slug: str, prefix: str | None = None, split: int | None = None) -> TaskFiles:
    """The test file and training files in one task folder (``prefix`` pins the file names)."""
    if not folder.is_dir():
        raise LayoutError(f"not a directory: {folder}")
    tests = [p for p in sorted(folder.glob("*_test.jsonl")) if prefix is None or p.name == f"{prefix}_test.jsonl"]
    if not tests:
        expected = f"{prefix}_test.jsonl" if prefix else "a *_test.jsonl file"
        raise LayoutError(f"no test file in {folder} (expected {expected})")
    if len(tests) > 1:
        raise LayoutError(f"several test files in {folder}: {', '.join(p.name for p in tests)}")
    test_match = _TEST.match(tests[0].name)
    # A bare "_test.jsonl" fits the glob but not _TEST (empty prefix): still a crash, as before typing.
    assert test_match is not None, tests[0].name
    test_prefix = test_match["prefix"]
    files = TaskFiles(slug=slug, folder=folder, test=tests[0])
    for path in sorted(folder.glob("*_train_*_*.jsonl")):
        match = _TRAIN.match(path.name)
        if not match or match["prefix"] != test_prefix:
            continue
        key = (int(match["split"]), int(match["shots"]))
        if key[0] not in SPLITS or key[1] < 1:
            raise LayoutError(
                f"{path.name}: a training file is <prefix>_train_<shots>_<split>.jsonl with "
                f"split {SPLITS[0]}-{SPLITS[-1]} and at least 1 shot"
            )
        if split is None or key[0] == split:
            files.train[key] = path
    if split is not None and not files.train:
        expected = f"{test_prefix}_train_<shots>_{split}.jsonl"
        raise LayoutError(f"no training files of split {split} in {folder} (expected {expected})")
    return files


def task_files_for_file(path: Path, *, slug: str, split: int | None = None) -> TaskFiles:
    """A single test file, plus its ``<prefix>_train_<k>_<split>.jsonl`` siblings if any."""
    if not path.is_file():
        raise LayoutError(f"no such file: {path}")
    match = _TEST.match(path.name)
    if not match:
        if split is not None:
            raise LayoutError(f"{path.name} is a single file without training files; --split needs a *_test.jsonl")
        return TaskFiles(slug=slug, folder=path.parent, test=path)
    return task_files(path.parent, slug=slug, prefix=match["prefix"], split=split)


def clues_task_files(path: Path, *, slugs: list[str] | None = None, split: int | None = None) -> list[TaskFiles]:
    """The release layout at ``path`` (six folders), or a single CLUES task folder."""
    if not path.exists():
        raise LayoutError(f"no such file or directory: {path}")
    if not path.is_dir():
        raise LayoutError(f"not a directory: {path} (give the release folder or one task folder)")
    for slug in slugs or []:
        if slug not in BY_SLUG:
            raise LayoutError(f"unknown CLUES task {slug!r} (choose from {', '.join(BY_SLUG)})")
    if path.name in FOLDER_TO_SLUG and not any((path / f).is_dir() for f in FOLDER_TO_SLUG):
        slug = FOLDER_TO_SLUG[path.name]
        if slugs and slug not in slugs:
            raise LayoutError(f"{path} is the {slug} folder, not {', '.join(slugs)}")
        return [task_files(path, slug=slug, prefix=BY_SLUG[slug].prefix, split=split)]
    wanted = slugs or [s for s in BY_SLUG if (path / SLUG_TO_FOLDER[s]).is_dir()]
    if not wanted:
        raise LayoutError(f"{path} holds none of the CLUES task folders ({', '.join(FOLDER_TO_SLUG)})")
    result = []
    for slug in wanted:
        folder = path / SLUG_TO_FOLDER[slug]
        if not folder.is_dir():
            raise LayoutError(f"missing task folder {folder}")
        result.append(task_files(folder, slug=slug, prefix=BY_SLUG[slug].prefix, split=split))
    return result
