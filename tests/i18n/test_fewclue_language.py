"""FewCLUE studies are in Chinese by default: their items are, and so are the tasks' translated texts."""

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
