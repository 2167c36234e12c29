"""The command blocks of README.md and docs/*.md, and a checkout's layout to run them in.

A block is a fenced block (```bash, ```json, ...) or an indented one (four spaces more than the list item
it sits in). Each is named by its page and first line, so a test can account for every block: run it,
check it (a synopsis against the command's --help, a JSON example by parsing it) or exempt it with a
reason; a block nobody accounts for fails."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(\s*)```(\w*)")


@dataclass(frozen=True)
class Block:
    page: str  # README.md, docs/studies.md
    line: int  # where it starts (1-based)
    language: str  # the fence's language; "" for an indented block
    text: str  # dedented

    @property
    def name(self) -> str:
        """The page and the block's first line: how the tests list it."""
        first = re.sub(r"\s+#.*$", "", self.text.splitlines()[0]).strip()
        return f"{self.page}: {first}"

    def commands(self) -> list[str]:
        """The block's commands: continuation lines joined, comments and blank lines dropped."""
        joined = re.sub(r"\\\n\s*", " ", self.text)
        found = []
        for line in joined.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                found.append(line)
        return found


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _dedent(lines: list[str], by: int) -> str:
    return "\n".join(line[by:] for line in lines).strip("\n")


def blocks(path: Path) -> list[Block]:
    page = str(path.relative_to(REPO))
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i, list_indent = 0, 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            indent = len(fence.group(1))
            found.append(Block(page, i + 2, fence.group(2), _dedent(lines[i + 1 : end], indent)))
            i = end + 1
            continue
        item = re.match(r"^(\s*)(?:\d+\.|[-*])\s+", line)
        if item:
            list_indent = len(item.group(0))
        elif line.strip() and not line.startswith(" "):
            list_indent = 0
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and indent >= list_indent + 4 and (i == 0 or not lines[i - 1].strip()):
            start = i
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" " * (list_indent + 4))):
                i += 1
            found.append(Block(page, start + 1, "", _dedent(lines[start:i], list_indent + 4)))
            continue
        i += 1
    return found


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks(path)]


def checkout(where: Path) -> Path:
    """A fresh checkout's layout at ``where``: the repository's top-level entries linked, nothing written.

    Relative outputs (appendix/, table.tex) land in ``where``, not in the repository; the settings find
    their base through the links, so the tests give DATABASE_URL as db.sqlite3 in ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    for entry in REPO.iterdir():
        if entry.name not in {".git", "db.sqlite3", "demo.sqlite3", "appendix", "test-artifacts"}:
            (where / entry.name).symlink_to(entry)
    return where


def environment(**extra: str) -> dict[str, str]:
    """The shell's environment, without the test run's database and settings (the docs set their own)."""
    drop = ("DATABASE_URL", "DJANGO_SETTINGS", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return {**env, **extra}


def run_script(script: str, *, cwd: Path, env: dict[str, str], timeout: int = 600) -> str:
    """Runs commands as a researcher's shell would (bash, one script: an ``export`` holds for the rest)."""
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{script}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    return done.stdout


def as_manage(command: str) -> str:
    """``manage.py X`` as the docs' reference pages write it is run as ``.venv/bin/python manage.py X``."""
    return re.sub(r"^manage\.py ", ".venv/bin/python manage.py ", command)


def help_text(command: str) -> str:
    """What ``manage.py COMMAND [SUBCOMMAND] --help`` prints for the command a synopsis line names.

    Django's own entry point, as manage.py calls it, in this process: the parser and its options are the
    command's, and no interpreter starts for each of the pages' twenty-odd synopses."""
    from django.core.management import execute_from_command_line

    words = shlex.split(command.replace("[", " ").replace("]", " ").replace("|", " "))
    name = words[words.index("manage.py") + 1]
    args = [name]
    if name == "prolific":
        args.append(words[words.index("manage.py") + 2])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        execute_from_command_line(["manage.py", *args, "--help"])
    assert exited.value.code in (0, None), out.getvalue()
    return out.getvalue()
