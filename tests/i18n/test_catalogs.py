"""The translation catalogs: complete, nothing fuzzy, and the committed .mo files compiled from the .po files.

Read with tests/i18n/pofile.py and Python's gettext, so no GNU gettext is needed to run this; after editing
a .po file, ``bash scripts/messages.sh compile`` brings its .mo up to date.
"""

import gettext
from pathlib import Path

import pytest
from django.conf import settings
from django.utils.translation import to_locale

from tests.i18n import pofile

LOCALE = Path(settings.LOCALE_PATHS[0])
TRANSLATED = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
# Django looks for a language's catalog under its locale name: zh-hans -> locale/zh_Hans/.
CATALOGS = [
    LOCALE / to_locale(code) / "LC_MESSAGES" / f"{domain}.po"
    for code in TRANSLATED
    for domain in ("django", "djangojs")
]


@pytest.mark.parametrize("po", CATALOGS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_shipped_language_has_both_catalogs(po):
    assert po.exists(), f"{po} is missing: bash scripts/messages.sh {po.parent.parent.name}"


@pytest.mark.parametrize("po", CATALOGS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_no_message_is_left_untranslated_or_fuzzy(po):
    entries = [e for e in pofile.read(po) if not e.is_header and not e.obsolete]
    empty = [e.msgid for e in entries if not all(e.msgstr.values()) or not e.msgstr]
    fuzzy = [e.msgid for e in entries if "fuzzy" in e.flags]
    assert empty == [] and fuzzy == []


@pytest.mark.parametrize("po", CATALOGS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_the_committed_mo_file_is_compiled_from_the_po_file(po):
    mo = po.with_suffix(".mo")
    assert mo.exists(), f"{mo} is missing: bash scripts/messages.sh compile"
    with mo.open("rb") as f:
        compiled = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
    expected = pofile.catalog(pofile.read(po))
    # msgfmt rewrites the header (drops POT-Creation-Date): compare the messages.
    compiled = {k: v for k, v in compiled.items() if k != ""}
    expected = {k: v for k, v in expected.items() if k != ""}
    assert compiled == expected, f"{mo} is out of date: bash scripts/messages.sh compile"


def test_python_format_placeholders_match_in_every_translation():
    import re

    placeholder = re.compile(r"%\(\w+\)[sd]|%[sd]")
    for po in CATALOGS:
        for entry in pofile.read(po):
            if entry.is_header or "python-format" not in entry.flags:
                continue
            for text in entry.msgstr.values():
                assert sorted(placeholder.findall(text)) == sorted(placeholder.findall(entry.msgid)), entry.msgid


def test_the_po_reader_reads_plurals_contexts_and_continuations(tmp_path):
    po = tmp_path / "x.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Language: de\\n"\n\n'
        '#, python-format\nmsgid "one %(n)s"\nmsgid_plural "many %(n)s"\nmsgstr[0] "ein %(n)s"\nmsgstr[1] "viele "\n'
        '"%(n)s"\n\nmsgctxt "menu"\nmsgid "Open"\nmsgstr "Öffnen"\n\n#, fuzzy\nmsgid "guess"\nmsgstr "Rate"\n',
        encoding="utf-8",
    )
    catalog = pofile.catalog(pofile.read(po))
    assert catalog[("one %(n)s", 1)] == "viele %(n)s"
    assert catalog["menu\x04Open"] == "Öffnen"
    assert "guess" not in catalog


def test_german_calls_an_item_aufgabe_and_a_training_item_uebungsbeispiel_everywhere():
    """One word for one thing (issue 40, item 14): a worker who reads "Aufgabe" on one page and "Frage" or
    "Beispiel" for the same item on the next wonders whether they are different things."""
    import re

    mixed = []
    for domain in ("django", "djangojs"):
        for entry in pofile.read(LOCALE / "de" / "LC_MESSAGES" / f"{domain}.po"):
            source = f"{entry.msgid} {entry.msgid_plural or ''}"
            if entry.is_header or entry.obsolete or not re.search(r"\bitems?\b", source, re.I):
                continue
            for text in entry.msgstr.values():
                word = "Übungsbeispiel" if re.search(r"\btraining items?\b", source, re.I) else "Aufgabe"
                if word not in text and not text.startswith(("item ", "items ")) or re.search(r"\bFragen?\b", text):
                    mixed.append((entry.msgid, text))
    assert mixed == []


def test_german_calls_a_training_example_uebungsbeispiel_too():
    """Where the English says "training ... example" (the start page's "Training: 30 examples."), the German says
    Übungsbeispiel, as the facts above it do ("30 Übungsbeispiele"), never a bare "Beispiele"."""
    import re

    mixed = []
    for domain in ("django", "djangojs"):
        for entry in pofile.read(LOCALE / "de" / "LC_MESSAGES" / f"{domain}.po"):
            source = f"{entry.msgid} {entry.msgid_plural or ''}"
            if entry.is_header or entry.obsolete or not re.search(r"\btraining\b.*\bexamples?\b", source, re.I | re.S):
                continue
            mixed += [(entry.msgid, text) for text in entry.msgstr.values() if "Übungsbeispiel" not in text]
    assert mixed == []


def test_chinese_texts_use_full_width_punctuation_beside_chinese_characters():
    """Every Chinese message on every page, not only the FewCLUE pages the browser test opens (issue 40,
    item 14): ASCII ,.:;?!() beside a Chinese character reads as a typo to a Chinese worker."""
    import re

    ascii_beside_chinese = re.compile(r"[\u4e00-\u9fff][,.:;?!(]|[,:;?!)][\u4e00-\u9fff]")
    wrong = []
    for domain in ("django", "djangojs"):
        for entry in pofile.read(LOCALE / "zh_Hans" / "LC_MESSAGES" / f"{domain}.po"):
            if entry.is_header or entry.obsolete:
                continue
            # A placeholder's own syntax, %(name)s, is not punctuation the worker reads.
            wrong += [
                (entry.msgid, t)
                for t in entry.msgstr.values()
                if ascii_beside_chinese.search(re.sub(r"%\(\w+\)[sd]", "", t))
            ]
    assert wrong == []
