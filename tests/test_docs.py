"""The README and docs/ link to files and headings that exist."""

import re
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
