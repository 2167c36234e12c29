"""The reading-time estimate of an item: how long its question and context take to read once, fast.

Space-separated words at ``WORDS_PER_MINUTE`` and CJK characters (Chinese, Japanese kana, Korean Hangul)
at ``CJK_CHARS_PER_MINUTE``. Both rates are fast silent reading, about two standard deviations above the
mean of adult readers (Trauzettel-Klosinski et al. 2012, IReST: English 228 ± 30 words/min, Chinese
255 ± 29 characters/min), so an answer faster than the estimate came before the text could have been
read once (annotation.services.session.signals compares them).

An example's estimate depends on its text only, which never changes after import (it is part of the
fingerprint): it is computed once, when the example is written (``Example.reading_ms``), not on every
submission.
"""

from __future__ import annotations

import re

WORDS_PER_MINUTE = 300
CJK_CHARS_PER_MINUTE = 320

# Han (with extensions A and B..), Hiragana, Katakana, Hangul syllables: each character is a reading unit.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0003134f]")
# CJK and full-width punctuation separates, and is not read as a unit.
_CJK_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff00-\uffef]")


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


def item_text(question: str, context: str | list[str]) -> str:
    """What a worker reads of an item: the question, then the context (a sentence pair one per line)."""
    return f"{question}\n{chr(10).join(context) if isinstance(context, list) else context}"


def example_reading_ms(question: str, context: str | list[str]) -> int:
    """An example's reading-time estimate, from its question and its context as stored."""
    return reading_ms(item_text(question, context))
