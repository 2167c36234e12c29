"""Find gold strings in their context: every occurrence, end exclusive.

A string may occur inside a longer word ("US" in "USA"). Occurrences on word
boundaries are preferred; only when there is none does a plain substring
match count, so a gold string is located whenever it occurs at all.
"""

from __future__ import annotations


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def all_occurrences(context: str, text: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` with ``context[start:end] == text`` (overlaps included)."""
    if not text:
        return []
    found = []
    start = context.find(text)
    while start != -1:
        found.append((start, start + len(text)))
        start = context.find(text, start + 1)
    return found


def on_word_boundaries(context: str, start: int, end: int) -> bool:
    text = context[start:end]
    before_ok = start == 0 or not (_is_word_char(context[start - 1]) and _is_word_char(text[0]))
    after_ok = end == len(context) or not (_is_word_char(context[end]) and _is_word_char(text[-1]))
    return before_ok and after_ok


def locate(context: str, text: str) -> list[tuple[int, int]]:
    """Occurrences of ``text``: those on word boundaries, else all substring matches."""
    matches = all_occurrences(context, text)
    bounded = [m for m in matches if on_word_boundaries(context, *m)]
    return bounded or matches


def offset_matches(context: str, text: str, start: object) -> bool:
    return isinstance(start, int) and start >= 0 and context[start : start + len(text)] == text
