"""The example consent and survey texts of docs/examples/ in each language: valid and saying what they must."""

import json
from pathlib import Path

import pytest

from annotation.protocol.survey import validate_definition

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def test_the_chinese_consent_text_says_what_the_page_records_and_what_it_does_not():
    chinese = (EXAMPLES / "consent.zh-hans.md").read_text(encoding="utf-8")
    # The same integrity signals as consent.en.md (tests/worker/test_integrity.py checks en and de).
    for phrase in ("可见的时长", "转到后台或失去焦点", "文字被复制的次数", "从不记录复制的内容"):
        assert phrase in chinese
    assert "我们**不会**记录您按了哪些键、剪贴板里的内容、您的鼠标移动" in chinese
    assert "“**我同意并愿意参加**”" in chinese  # the consent page's own button text


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("survey.*.json")), ids=lambda p: p.name)
def test_every_example_survey_is_a_valid_survey_definition(path):
    validate_definition(json.loads(path.read_text(encoding="utf-8")))


def test_there_is_a_chinese_example_survey():
    questions = json.loads((EXAMPLES / "survey.zh-hans.json").read_text(encoding="utf-8"))
    assert all(not q["label"].isascii() for q in questions)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("consent.*.md")), ids=lambda p: p.name)
def test_every_example_consent_text_says_how_to_withdraw_and_how_long_ids_are_kept(path):
    text = path.read_text(encoding="utf-8")
    # The retention is the default of IDENTIFIER_RETENTION_DAYS (docs/participants.md).
    assert "**90 " in text
    assert any(word in text for word in ("withdraw", "zurückziehen", "撤回"))


# The consent page's button, as each language's catalog words it (templates/entry/start.html).
AGREE = {
    "en": "I agree and want to take part",
    "de": "Ich stimme zu und möchte teilnehmen",
    "zh-hans": "我同意并愿意参加",
}


@pytest.mark.parametrize("language", sorted(AGREE))
def test_each_example_consent_names_the_agree_button_as_the_page_words_it(language):
    from django.utils import translation

    with translation.override(language):
        assert translation.gettext("I agree and want to take part") == AGREE[language]
    assert f"**{AGREE[language]}**" in (EXAMPLES / f"consent.{language}.md").read_text(encoding="utf-8")


def test_the_german_consent_calls_an_item_aufgabe_as_the_pages_do():
    """The pages say Aufgabe for an item and Übungsbeispiel for a training item (tests/i18n/test_catalogs.py):
    the consent beside them uses the same words, "Beispiel" only in "zum Beispiel"."""
    import re

    text = re.sub(r"zum\s+Beispiel", "", (EXAMPLES / "consent.de.md").read_text(encoding="utf-8"))
    words = re.findall(r"\w*beispiel\w*", text, re.IGNORECASE)
    assert [w for w in words if not w.startswith("Übungsbeispiel")] == []
    assert "Aufgaben des Hauptteils" in text  # the test items, as the start page's "Aufgaben im Hauptteil"
