"""The README and docs/ link to files and headings that exist."""

import ast
import re
import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")


def markdown_files() -> list[Path]:
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def prose_lines(path: Path) -> list[str]:
    """The file's lines outside code blocks (fenced or indented by four spaces)."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            lines.append(line)
    return lines


def anchors(path: Path) -> set[str]:
    """Heading anchors as GitHub builds them: lower case, punctuation dropped, spaces to hyphens."""
    found: set[str] = set()
    repeats: dict[str, int] = {}
    for line in prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        count = repeats.get(slug, 0)
        repeats[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    broken = []
    for line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            destination = (path.parent / file_part).resolve() if file_part else path
            if not destination.exists():
                broken.append(f"{target} (no such file)")
            elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
                broken.append(f"{target} (no such heading)")
    return broken


def test_every_relative_link_in_the_docs_resolves():
    problems = {path.name: broken_links(path) for path in markdown_files()}
    assert {name: links for name, links in problems.items() if links} == {}


def test_every_docs_page_is_linked_from_the_readme():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted(path.name for path in (REPO_ROOT / "docs").glob("*.md"))
    assert pages, "docs/ has no pages"
    assert [name for name in pages if f"(docs/{name}" not in readme] == []


# A path of the repository as the docs write it (``annotation/services/state/slots.py``, ``bench/``),
# and a dotted module path (``annotation.services.state.lifecycle.on_slot_change``).
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:annotation|tasks_app|tests|scripts|bench|deploy|docs|static|templates)/[\w./*<>-]*)"
)
DOTTED = re.compile(r"(?<![\w./])((?:annotation|tasks_app)(?:\.\w+)+)")


def _missing_path(written: str) -> bool:
    as_written, written = written, written.rstrip(".,;:)/")
    if "*" in written or "<" in written:
        return not list(REPO_ROOT.glob(re.sub(r"<[^>]*>", "*", written)))
    if (REPO_ROOT / written).exists() or (REPO_ROOT / f"{written}.py").exists():
        return False
    # An output the commands write (bench/results/...): ignored by git, so it is in no checkout.
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", as_written], cwd=REPO_ROOT, check=False)
    return ignored.returncode != 0


def _missing_dotted(written: str) -> bool:
    """True when no module of that name exists, nor a name defined in the longest module it starts with."""
    parts = written.split(".")
    for cut in range(len(parts), 0, -1):
        base = REPO_ROOT.joinpath(*parts[:cut])
        module = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if module.exists():
            rest = parts[cut:]
            return bool(rest) and rest[0] not in _defined_names(module)
    return True


def _defined_names(module: Path) -> set[str]:
    """The names a module defines at any depth: functions, classes, assignments, imports (for attributes)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def celery_task_names() -> set[str]:
    """The names the Celery tasks are registered under (``annotation.sweep_export_jobs``): no module path."""
    found: set[str] = set()
    for module in REPO_ROOT.glob("*/**/celery_tasks.py"):
        found.update(re.findall(r'name="([\w.]+)"', module.read_text(encoding="utf-8")))
    return found


def missing_paths(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    missing = [p for p in REPO_PATH.findall(text) if _missing_path(p)]
    tasks = celery_task_names()
    missing += [d for d in DOTTED.findall(text) if d not in tasks and _missing_dotted(d)]
    return sorted(set(missing))


def test_every_path_the_docs_name_exists():
    problems = {path.name: missing_paths(path) for path in markdown_files()}
    assert {name: paths for name, paths in problems.items() if paths} == {}


def test_the_path_check_sees_a_moved_module(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "See `annotation/services/state/slots.py`, `annotation.services.state.lifecycle.on_slot_change`;\n"
        "not `annotation/services/slots.py` nor `annotation.services.lifecycle` nor `annotation.web.nothing_here`.\n"
    )
    assert missing_paths(page) == [
        "annotation.services.lifecycle",
        "annotation.web.nothing_here",
        "annotation/services/slots.py",
    ]
