"""Chinese for who reads it: FewCLUE studies by default (their items are Chinese), a Chinese browser too."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Study
from tests.conftest import FEWCLUE_FIXTURE

pytestmark = pytest.mark.django_db


def _create(*args):
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())
    call_command("create_fewclue_studies", "--training-items", "5", "--test-sample", "2", *args, stdout=StringIO())


def test_the_fewclue_studies_are_in_chinese_unless_told_otherwise():
    _create("--tasks", "eprstmt")
    assert Study.objects.get(slug="fewclue-eprstmt-paper").language == "zh-hans"
    _create("--tasks", "chid", "--language", "")
    assert Study.objects.get(slug="fewclue-chid-paper").language == ""


def test_an_unknown_language_is_refused_before_any_study_is_made():
    with pytest.raises(CommandError, match="--language: Unknown language 'zh'.*'zh-hans'"):
        _create("--language", "zh")
    assert not Study.objects.exists()


@pytest.mark.parametrize(
    ("browser", "expected"),
    [("zh-CN,zh;q=0.9", "zh-hans"), ("zh-SG", "zh-hans"), ("zh-Hans", "zh-hans"), ("zh", "zh-hans")],
)
def test_a_chinese_browser_gets_the_chinese_pages_of_a_study_that_follows_it(browser, expected):
    from django.test import Client

    page = Client().get("/work/", HTTP_ACCEPT_LANGUAGE=browser)
    assert page["Content-Language"] == expected and f'<html lang="{expected}">' in page.content.decode()
