"""UTF-16 <-> Python offsets and grapheme boundaries (a pure module: no database)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.protocol import offsets
from annotation.protocol.offsets import CutsCharacter, CutsSurrogatePair, OffsetError


def js_offset(text: str, index: int) -> int:
    """What JavaScript would report: UTF-16 code units before ``index``."""
    return len(text[:index].encode("utf-16-le")) // 2


@pytest.mark.parametrize(
    "text, target",
    [
        ("Café au lait avec Zoë", "Zoë"),
        ("東京タワーは東京にある", "東京"),
        ("I ❤️ New York", "New York"),
        ("Hi 😀 Ada Lovelace", "Ada Lovelace"),
        ("𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters then Bob", "Bob"),
        ("e\u0301clair by Jose\u0301 Marti", "Jose\u0301"),
        ("col1\tcol2\tAda", "Ada"),
        ("Ada\u00a0Lovelace and Bob", "Ada\u00a0Lovelace"),
        ("line one\r\nline two Ada", "Ada"),
        ("lots    of     space   Ada", "Ada"),
        ("👨‍👩‍👧 family of Ada and 🇫🇷 Marie", "Marie"),
    ],
)
def test_a_span_after_any_character_converts_to_the_same_python_offsets(text, target):
    start = text.rindex(target)
    end = start + len(target)
    u_start, u_end = js_offset(text, start), js_offset(text, end)
    assert offsets.index_to_utf16(text, start) == u_start
    assert offsets.utf16_to_index(text, u_start) == start
    assert offsets.utf16_to_index(text, u_end) == end
    assert text[offsets.utf16_to_index(text, u_start) : offsets.utf16_to_index(text, u_end)] == target
    offsets.check_span_boundaries(text, start, end)


def test_a_span_after_an_emoji_does_not_shift_by_one():
    text = "😀 Ada"
    assert offsets.utf16_to_index(text, 3) == 2  # JS "Ada" starts at 3; Python at 2
    assert text[offsets.utf16_to_index(text, 3) : offsets.utf16_to_index(text, 6)] == "Ada"


def test_an_offset_inside_a_surrogate_pair_is_refused():
    with pytest.raises(CutsSurrogatePair):
        offsets.utf16_to_index("a😀b", 2)


@pytest.mark.parametrize("offset", [-1, 4, 100])
def test_an_offset_outside_the_text_is_refused(offset):
    with pytest.raises(OffsetError) as info:
        offsets.utf16_to_index("a😀", offset)
    assert info.value.code == "offset_out_of_range"


def test_non_integer_offsets_are_refused():
    for bad in (1.0, "1", True, None):
        with pytest.raises(OffsetError):
            offsets.utf16_to_index("abc", bad)
        with pytest.raises(OffsetError):
            offsets.index_to_utf16("abc", bad)


@pytest.mark.parametrize(
    "text, index, why",
    [
        ("e\u0301", 1, "between a letter and its combining accent"),
        ("a\u0308\u0301b", 2, "between two combining marks"),
        ("👨\u200d👩\u200d👧", 1, "before a zero-width joiner"),
        ("👨\u200d👩\u200d👧", 2, "after a zero-width joiner"),
        ("🇫🇷", 1, "between the two regional indicators of a flag"),
        ("🇫🇷🇩🇪", 3, "inside the second flag"),
        ("❤\ufe0f", 1, "before a variation selector"),
        ("👍🏽", 1, "before a skin-tone modifier"),
        ("a\r\nb", 2, "between CR and LF"),
        ("\u1100\u1161", 1, "inside a Hangul syllable of jamo"),
        ("क्ष", 1, "before a virama"),
        ("क्ष", 2, "inside a conjunct (after the virama, GB9c)"),
        ("స్త్రీ", 3, "inside a Telugu conjunct"),
        ("\u0600\u0661", 1, "after an Arabic number sign, a Prepend character (GB9b)"),
    ],
)
def test_cuts_inside_a_user_perceived_character_are_refused(text, index, why):
    assert offsets.is_grapheme_boundary(text, index) is False, why
    with pytest.raises(CutsCharacter):
        offsets.check_span_boundaries(text, 0, index)


@pytest.mark.parametrize(
    "text, index",
    [
        ("ab", 1),
        ("a b", 1),
        ("a\tb", 1),
        ("a\u00a0b", 1),
        ("a\r\nb", 1),
        ("a\r\nb", 3),
        ("😀😀", 1),
        ("🇫🇷🇩🇪", 2),
        ("é!", 1),
        ("東京", 1),
        ("👨\u200d👩 x", 3),
        ("한국", 1),
    ],
)
def test_cuts_between_user_perceived_characters_are_allowed(text, index):
    assert offsets.is_grapheme_boundary(text, index) is True


def test_the_ends_of_the_text_are_always_boundaries():
    assert offsets.is_grapheme_boundary("\u0301x", 0)
    assert offsets.is_grapheme_boundary("x\u0301", 2)
    with pytest.raises(OffsetError):
        offsets.is_grapheme_boundary("x", 2)


@given(st.text(max_size=60))
def test_every_python_index_round_trips_through_utf16(text):
    for index in range(len(text) + 1):
        unit = offsets.index_to_utf16(text, index)
        assert unit == js_offset(text, index)
        assert offsets.utf16_to_index(text, unit) == index
    assert offsets.utf16_length(text) == len(text.encode("utf-16-le")) // 2


def test_a_lone_surrogate_counts_as_the_one_utf16_unit_it_is_in_javascript():
    text = "a\ud800b😀c"  # what json.loads makes of an unpaired "\ud800" escape
    assert offsets.utf16_length(text) == 6
    assert [offsets.index_to_utf16(text, i) for i in range(len(text) + 1)] == [0, 1, 2, 3, 5, 6]


@given(st.text(min_size=1, max_size=40))
def test_every_utf16_offset_is_either_a_character_start_or_refused(text):
    starts = {js_offset(text, i): i for i in range(len(text) + 1)}
    for unit in range(offsets.utf16_length(text) + 1):
        if unit in starts:
            assert offsets.utf16_to_index(text, unit) == starts[unit]
        else:
            with pytest.raises(CutsSurrogatePair):
                offsets.utf16_to_index(text, unit)


CLUSTERS = [
    "a",
    "é",
    "e\u0301",
    "😀",
    "👨\u200d👩\u200d👧",
    "🇫🇷",
    "❤\ufe0f",
    " ",
    "\r\n",
    "東",
    "👍🏽",
    "한",
    "\u1100\u1161\u11a8",
    "क्ष",
    "\t",
    "\u00a0",
    "🏳\ufe0f\u200d🌈",
]


@given(st.lists(st.sampled_from(CLUSTERS), max_size=12))
def test_boundaries_fall_exactly_between_the_clusters_a_text_is_built_from(clusters):
    text = "".join(clusters)
    expected, position = {0}, 0
    for cluster in clusters:
        position += len(cluster)
        expected.add(position)
    # A flag followed by a flag pairs up from the left, which is still a cluster boundary here.
    actual = {i for i in range(len(text) + 1) if offsets.is_grapheme_boundary(text, i)}
    assert actual == expected
