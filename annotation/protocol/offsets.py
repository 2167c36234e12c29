"""Character offsets between the browser and Python, and where a cut is allowed.

Pure Python (no Django import). JavaScript strings count UTF-16 code units:
every character outside the Basic Multilingual Plane (most emoji, rare CJK,
math letters) is two units (a surrogate pair) but one Python ``str`` index.
A span sent by a browser is converted here before it is checked against the
context, so a span after an emoji does not shift by one.

A span may only start or end on a boundary between user-perceived characters
(extended grapheme clusters of Unicode's UAX #29): never inside a surrogate
pair, between a letter and its combining accent, inside a ZWJ emoji sequence,
between the two regional indicators of a flag, before a variation selector or
skin-tone modifier, or between CR and LF. ``is_grapheme_boundary`` implements
the UAX #29 rules GB1-GB13 with ``unicodedata``, plus the Indic conjunct
rule GB9c of Unicode 15.1 (which browsers' segmenters follow); the
Extended_Pictographic, Prepend and Indic_Conjunct_Break properties (not
exposed by ``unicodedata``) are taken from the code point ranges below.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right

from annotation.errors import ServiceError

__all__ = [
    "OffsetError",
    "CutsSurrogatePair",
    "CutsCharacter",
    "utf16_length",
    "utf16_to_index",
    "index_to_utf16",
    "is_grapheme_boundary",
    "check_span_boundaries",
]


class OffsetError(ServiceError, ValueError):
    """An offset that cannot be used on this text."""

    code = "offset_out_of_range"


class CutsSurrogatePair(OffsetError):
    """A UTF-16 offset that falls between the two halves of a surrogate pair."""

    code = "cuts_character"


class CutsCharacter(OffsetError):
    """An offset inside a user-perceived character (grapheme cluster)."""

    code = "cuts_character"


def _is_astral(ch: str) -> bool:
    return ord(ch) > 0xFFFF


def utf16_length(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript's ``text.length``).

    Encoded in C rather than counted in a Python loop; ``surrogatepass`` counts a lone surrogate
    as the one unit it is in JavaScript."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_to_index(text: str, offset: int) -> int:
    """The Python index of a UTF-16 offset; refuses one that splits a surrogate pair."""
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise OffsetError(f"offset {offset!r} is not an integer")
    if offset < 0:
        raise OffsetError(f"offset {offset} is negative")
    units = 0
    for index, ch in enumerate(text):
        if units == offset:
            return index
        units += 2 if _is_astral(ch) else 1
        if units > offset:
            raise CutsSurrogatePair(f"UTF-16 offset {offset} falls inside the character {ch!r} at index {index}")
    if units == offset:
        return len(text)
    raise OffsetError(f"UTF-16 offset {offset} is past the end of the text ({units} units)")


def index_to_utf16(text: str, index: int) -> int:
    """The UTF-16 offset of a Python index (0..len(text))."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise OffsetError(f"index {index!r} is not an integer")
    if not 0 <= index <= len(text):
        raise OffsetError(f"index {index} is outside 0..{len(text)}")
    return utf16_length(text[:index])


# --- Grapheme cluster boundaries (UAX #29) -----------------------------------

_CR, _LF, _CONTROL, _EXTEND, _ZWJ, _RI, _PREPEND, _SPACING = [
    "CR",
    "LF",
    "Control",
    "Extend",
    "ZWJ",
    "RI",
    "Prepend",
    "SpacingMark",
]
_L, _V, _T, _LV, _LVT, _OTHER = ["L", "V", "T", "LV", "LVT", "Other"]

# Extended_Pictographic, approximated: the emoji and pictograph blocks plus the
# scattered BMP symbols that have emoji presentation.
_PICTOGRAPHIC_RANGES = [
    (0x00A9, 0x00A9),
    (0x00AE, 0x00AE),
    (0x203C, 0x203C),
    (0x2049, 0x2049),
    (0x2122, 0x2122),
    (0x2139, 0x2139),
    (0x2194, 0x2199),
    (0x21A9, 0x21AA),
    (0x231A, 0x231B),
    (0x2328, 0x2328),
    (0x2388, 0x2388),
    (0x23CF, 0x23CF),
    (0x23E9, 0x23F3),
    (0x23F8, 0x23FA),
    (0x24C2, 0x24C2),
    (0x25AA, 0x25AB),
    (0x25B6, 0x25B6),
    (0x25C0, 0x25C0),
    (0x25FB, 0x25FE),
    (0x2600, 0x27BF),
    (0x2934, 0x2935),
    (0x2B05, 0x2B07),
    (0x2B1B, 0x2B1C),
    (0x2B50, 0x2B50),
    (0x2B55, 0x2B55),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x3297, 0x3297),
    (0x3299, 0x3299),
    (0x1F000, 0x1F0FF),
    (0x1F10D, 0x1F10F),
    (0x1F12F, 0x1F12F),
    (0x1F16C, 0x1F171),
    (0x1F17E, 0x1F17F),
    (0x1F18E, 0x1F18E),
    (0x1F191, 0x1F19A),
    (0x1F1AD, 0x1F1E5),
    (0x1F201, 0x1F20F),
    (0x1F21A, 0x1F21A),
    (0x1F22F, 0x1F22F),
    (0x1F232, 0x1F23A),
    (0x1F23C, 0x1F23F),
    (0x1F249, 0x1F3FA),
    (0x1F400, 0x1F53D),
    (0x1F546, 0x1F64F),
    (0x1F680, 0x1F6FF),
    (0x1F774, 0x1F77F),
    (0x1F7D5, 0x1F7FF),
    (0x1F80C, 0x1F80F),
    (0x1F848, 0x1F84F),
    (0x1F85A, 0x1F85F),
    (0x1F888, 0x1F88F),
    (0x1F8AE, 0x1F8FF),
    (0x1F90C, 0x1F93A),
    (0x1F93C, 0x1F945),
    (0x1F947, 0x1FAFF),
    (0x1FC00, 0x1FFFD),
]
_PICTOGRAPHIC_STARTS = [lo for lo, _ in _PICTOGRAPHIC_RANGES]

# Prepend: format characters that attach to what follows (Arabic number signs and a few Brahmic ones).
_PREPEND_CODEPOINTS = {
    0x0600,
    0x0601,
    0x0602,
    0x0603,
    0x0604,
    0x0605,
    0x06DD,
    0x070F,
    0x0890,
    0x0891,
    0x08E2,
    0x0D4E,
    0x110BD,
    0x110CD,
    0x111C2,
    0x111C3,
    0x1193F,
    0x11941,
    0x11A3A,
    0x11A84,
    0x11A85,
    0x11A86,
    0x11A87,
    0x11A88,
    0x11A89,
    0x11D46,
}

# Grapheme_Extend members outside the Mn/Me categories.
_EXTRA_EXTEND = {
    0x200C,
    0x09BE,
    0x09D7,
    0x0B3E,
    0x0B57,
    0x0BBE,
    0x0BD7,
    0x0CC2,
    0x0CD5,
    0x0CD6,
    0x0D3E,
    0x0D57,
    0x0DCF,
    0x0DDF,
    0x1B35,
    0x302E,
    0x302F,
    0xFF9E,
    0xFF9F,
    0x1133E,
    0x11357,
    0x114B0,
    0x114BD,
    0x115AF,
    0x11930,
    0x1D165,
    0x1D16E,
    0x1D16F,
    0x1D170,
    0x1D171,
    0x1D172,
}


# Indic_Conjunct_Break: the viramas that link consonants into one conjunct, and those scripts' consonants.
_INCB_LINKERS = {0x094D, 0x09CD, 0x0ACD, 0x0B4D, 0x0C4D, 0x0D4D}
_INCB_CONSONANT_RANGES = [
    (0x0915, 0x0939),
    (0x0958, 0x095F),
    (0x0978, 0x097F),  # Devanagari
    (0x0995, 0x09A8),
    (0x09AA, 0x09B0),
    (0x09B2, 0x09B2),
    (0x09B6, 0x09B9),
    (0x09DC, 0x09DD),
    (0x09DF, 0x09DF),
    (0x09F0, 0x09F1),  # Bengali
    (0x0A95, 0x0AA8),
    (0x0AAA, 0x0AB0),
    (0x0AB2, 0x0AB3),
    (0x0AB5, 0x0AB9),
    (0x0AF9, 0x0AF9),  # Gujarati
    (0x0B15, 0x0B28),
    (0x0B2A, 0x0B30),
    (0x0B32, 0x0B33),
    (0x0B35, 0x0B39),
    (0x0B5C, 0x0B5D),
    (0x0B5F, 0x0B5F),
    (0x0B71, 0x0B71),  # Oriya
    (0x0C15, 0x0C28),
    (0x0C2A, 0x0C39),
    (0x0C58, 0x0C5A),  # Telugu
    (0x0D15, 0x0D3A),  # Malayalam
]


def _is_incb_consonant(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _INCB_CONSONANT_RANGES)


def _in_conjunct(text: str, index: int) -> bool:
    """GB9c: Consonant [Extend Linker]* Linker [Extend Linker]* × Consonant."""
    if not _is_incb_consonant(ord(text[index])):
        return False
    i, linked = index - 1, False
    while i >= 0 and (ord(text[i]) in _INCB_LINKERS or _break_property(text[i]) in (_EXTEND, _ZWJ)):
        linked = linked or ord(text[i]) in _INCB_LINKERS
        i -= 1
    return linked and i >= 0 and _is_incb_consonant(ord(text[i]))


def _is_pictographic(cp: int) -> bool:
    i = bisect_right(_PICTOGRAPHIC_STARTS, cp) - 1
    return i >= 0 and cp <= _PICTOGRAPHIC_RANGES[i][1]


def _hangul(cp: int) -> str | None:
    if 0x1100 <= cp <= 0x115F or 0xA960 <= cp <= 0xA97C:
        return _L
    if 0x1160 <= cp <= 0x11A7 or 0xD7B0 <= cp <= 0xD7C6:
        return _V
    if 0x11A8 <= cp <= 0x11FF or 0xD7CB <= cp <= 0xD7FB:
        return _T
    if 0xAC00 <= cp <= 0xD7A3:
        return _LV if (cp - 0xAC00) % 28 == 0 else _LVT
    return None


def _break_property(ch: str) -> str:
    cp = ord(ch)
    if cp == 0x0D:
        return _CR
    if cp == 0x0A:
        return _LF
    if cp == 0x200D:
        return _ZWJ
    if 0x1F1E6 <= cp <= 0x1F1FF:
        return _RI
    if 0x1F3FB <= cp <= 0x1F3FF or 0xE0020 <= cp <= 0xE007F or cp in _EXTRA_EXTEND:
        return _EXTEND  # skin-tone modifiers, emoji tag characters
    if cp in _PREPEND_CODEPOINTS:
        return _PREPEND
    category = unicodedata.category(ch)
    if category in ("Mn", "Me"):
        return _EXTEND  # combining marks, variation selectors
    if category == "Mc":
        return _SPACING
    if category in ("Cc", "Zl", "Zp") or (category == "Cf" and cp not in (0x200C, 0x200D)):
        return _CONTROL
    hangul = _hangul(cp)
    return hangul or _OTHER


def is_grapheme_boundary(text: str, index: int) -> bool:
    """Is ``index`` a boundary between two user-perceived characters of ``text``?"""
    if not 0 <= index <= len(text):
        raise OffsetError(f"index {index} is outside 0..{len(text)}")
    if index == 0 or index == len(text):
        return True  # GB1, GB2
    before, after = text[index - 1], text[index]
    if 0xD800 <= ord(before) <= 0xDBFF and 0xDC00 <= ord(after) <= 0xDFFF:
        return False  # a lone surrogate pair in a str that came from broken UTF-16
    prev, nxt = _break_property(before), _break_property(after)
    if prev == _CR and nxt == _LF:
        return False  # GB3
    if prev in (_CONTROL, _CR, _LF) or nxt in (_CONTROL, _CR, _LF):
        return True  # GB4, GB5
    if prev == _L and nxt in (_L, _V, _LV, _LVT):
        return False  # GB6
    if prev in (_LV, _V) and nxt in (_V, _T):
        return False  # GB7
    if prev in (_LVT, _T) and nxt == _T:
        return False  # GB8
    if nxt in (_EXTEND, _ZWJ, _SPACING):
        return False  # GB9, GB9a
    if prev == _PREPEND:
        return False  # GB9b
    if _in_conjunct(text, index):
        return False  # GB9c
    if prev == _ZWJ and _is_pictographic(ord(after)):
        # GB11: ExtPict Extend* ZWJ × ExtPict
        i = index - 2
        while i >= 0 and _break_property(text[i]) == _EXTEND:
            i -= 1
        if i >= 0 and _is_pictographic(ord(text[i])):
            return False
    if prev == _RI and nxt == _RI:
        # GB12, GB13: flags pair up regional indicators from the left
        count = 0
        i = index - 1
        while i >= 0 and _break_property(text[i]) == _RI:
            count += 1
            i -= 1
        return count % 2 == 0
    return True  # GB999


def check_span_boundaries(text: str, start: int, end: int) -> None:
    """Raise CutsCharacter unless both ends of ``text[start:end]`` are grapheme boundaries."""
    for name, index in (("start", start), ("end", end)):
        if not is_grapheme_boundary(text, index):
            around = text[max(0, index - 2) : index + 2]
            raise CutsCharacter(f"the span's {name} ({index}) cuts through a character in {around!r}")
