"""A small reader of gettext .po files: enough to check a catalog without GNU gettext installed."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

_KEYWORD = re.compile(r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[(\d+)\])?)\s+(".*")\s*$')


@dataclass
class Entry:
    msgid: str = ""
    msgid_plural: str | None = None
    msgctxt: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)  # plural index -> text (0 for a singular entry)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False

    @property
    def is_header(self) -> bool:
        return self.msgid == "" and self.msgctxt is None


def _unquote(literal: str) -> str:
    return ast.literal_eval(literal)  # a C-style string literal is a Python one for what gettext writes


def read(path: Path) -> list[Entry]:
    """The entries of a .po file, the header (msgid "") first."""
    entries: list[Entry] = []
    entry = Entry()
    last: tuple[str, int] | None = None  # the keyword the next continuation line extends

    def finish() -> None:
        nonlocal entry, last
        if last is not None:
            entries.append(entry)
        entry, last = Entry(), None

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            finish()
            continue
        if line.startswith("#~"):
            entry.obsolete = True
            line = line[2:].strip()
            if not line or line.startswith("#"):
                continue
        elif line.startswith("#,"):
            if last is not None:
                finish()
            entry.flags.update(flag.strip() for flag in line[2:].split(","))
            continue
        elif line.startswith("#"):
            if last is not None:
                finish()
            continue
        match = _KEYWORD.match(line)
        if match:
            keyword, index, literal = match.groups()
            if keyword == "msgctxt" or (keyword == "msgid" and last is not None and last[0] != "msgctxt"):
                finish()
            text = _unquote(literal)
            if keyword == "msgctxt":
                entry.msgctxt, last = text, ("msgctxt", 0)
            elif keyword == "msgid":
                entry.msgid, last = text, ("msgid", 0)
            elif keyword == "msgid_plural":
                entry.msgid_plural, last = text, ("msgid_plural", 0)
            else:
                n = int(index) if index is not None else 0
                entry.msgstr[n], last = text, ("msgstr", n)
        elif line.startswith('"') and last is not None:
            text = _unquote(line)
            kind, n = last
            if kind == "msgctxt":
                entry.msgctxt = (entry.msgctxt or "") + text
            elif kind == "msgid":
                entry.msgid += text
            elif kind == "msgid_plural":
                entry.msgid_plural = (entry.msgid_plural or "") + text
            else:
                entry.msgstr[n] += text
        else:
            raise ValueError(f"{path}: cannot read the line {raw!r}")
    finish()
    return entries


def catalog(entries: list[Entry]) -> dict[object, str]:
    """The entries as Python's gettext.GNUTranslations keys its catalog: msgid, or (msgid, n) for plurals,
    with ``context\\x04msgid`` for a context; untranslated and fuzzy entries are left out, as msgfmt does."""
    result: dict[object, str] = {}
    for entry in entries:
        if entry.obsolete or (not entry.is_header and "fuzzy" in entry.flags):
            continue
        key = entry.msgid if entry.msgctxt is None else f"{entry.msgctxt}\x04{entry.msgid}"
        if entry.msgid_plural is None:
            if entry.msgstr.get(0) or entry.is_header:
                result[key] = entry.msgstr.get(0, "")
        elif all(entry.msgstr.values()):
            for n, text in entry.msgstr.items():
                result[(key, n)] = text
    return result
