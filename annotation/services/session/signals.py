"""The integrity signals a worker's page sends with an answer, and the reading-time estimate they are read against.

The page (static/worker/signals.js) sends, per item, with the submit or skip, an object of exactly these
keys, all non-negative integers:

- ``visible_ms``: how long the item was visible (the page not hidden), in milliseconds;
- ``hidden_count``: how often the page lost focus or was hidden while the item was open;
- ``hidden_ms``: how long it was away (unfocused or hidden) in total, in milliseconds;
- ``copy_count``: how often text of the item was copied (the count only: never what was copied).

Nothing else: no keystrokes, no clipboard content, no pointer tracks. The object is optional (an API
client may leave it out: its fields stay empty); if it is sent it must have the four keys and no
other: an unknown key is refused, not dropped, so nothing beyond these figures can ever be stored.

The reading-time estimate (``reading_ms``) is computed here, on the server, from the item's question
and context: space-separated words at ``WORDS_PER_MINUTE`` and CJK characters (Chinese, Japanese
kana, Korean Hangul) at ``CJK_CHARS_PER_MINUTE``. Both rates are fast silent reading, about two
standard deviations above the mean of adult readers (Trauzettel-Klosinski et al. 2012, IReST: English
228 ± 30 words/min, Chinese 255 ± 29 characters/min), so an answer faster than the estimate came
before the text could have been read once.
"""

from __future__ import annotations

import re
from typing import Any

from annotation.errors import ServiceError

FIELDS = ("visible_ms", "hidden_count", "hidden_ms", "copy_count")
# Bounds against nonsense, not against workers: a day on one item, a hundred thousand events.
MAXIMUM = {"visible_ms": 86_400_000, "hidden_count": 100_000, "hidden_ms": 86_400_000, "copy_count": 100_000}

WORDS_PER_MINUTE = 300
CJK_CHARS_PER_MINUTE = 320

# Han (with extensions A and B..), Hiragana, Katakana, Hangul syllables: each character is a reading unit.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0003134f]")
# CJK and full-width punctuation separates, and is not read as a unit.
_CJK_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff00-\uffef]")


class InvalidSignals(ServiceError):
    """The signals object is malformed; nothing was stored. Answered 400 ``invalid_signals``.

    In English only: the worker page never sends a malformed object; the reader is a client's developer."""

    status = 400
    code = "invalid_signals"


def parse(raw: Any) -> dict[str, int]:
    """The signals to store: {} when none were sent (None), else the four validated figures."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidSignals("signals must be an object")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise InvalidSignals(f"signals takes only {', '.join(FIELDS)} (not {', '.join(map(str, unknown))})")
    missing = [k for k in FIELDS if k not in raw]
    if missing:
        raise InvalidSignals(f"signals needs {', '.join(missing)}")
    values: dict[str, int] = {}
    for key in FIELDS:
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAXIMUM[key]:
            raise InvalidSignals(f"signals.{key} must be a whole number from 0 to {MAXIMUM[key]}")
        values[key] = value
    return values


def text_length(text: str) -> tuple[int, int]:
    """(words, CJK characters) of ``text``: CJK characters count one by one, other text by words."""
    cjk = len(_CJK.findall(text))
    rest = _CJK_PUNCTUATION.sub(" ", _CJK.sub(" ", text))
    words = sum(1 for token in rest.split() if any(c.isalnum() for c in token))
    return words, cjk


def reading_ms(text: str) -> int:
    """The time to read ``text`` once at a fast silent reading rate, in milliseconds."""
    words, cjk = text_length(text)
    return round(60_000 * (words / WORDS_PER_MINUTE + cjk / CJK_CHARS_PER_MINUTE))
