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

The reading-time estimate (``reading_ms``) it is read against is the item's own, computed once when the
example was written (``tasks_app.reading_time``, stored in ``Example.reading_ms``) and copied into the
answer's row on lock, so that a submission never tokenises the item's text.
"""

from __future__ import annotations

from typing import Any

from annotation.errors import ServiceError
from tasks_app.reading_time import CJK_CHARS_PER_MINUTE, WORDS_PER_MINUTE, reading_ms, text_length

__all__ = [
    "CJK_CHARS_PER_MINUTE",
    "FIELDS",
    "InvalidSignals",
    "WORDS_PER_MINUTE",
    "parse",
    "reading_ms",
    "text_length",
]

FIELDS = ("visible_ms", "hidden_count", "hidden_ms", "copy_count")
# Bounds against nonsense, not against workers: a day on one item, a hundred thousand events.
MAXIMUM = {"visible_ms": 86_400_000, "hidden_count": 100_000, "hidden_ms": 86_400_000, "copy_count": 100_000}


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
