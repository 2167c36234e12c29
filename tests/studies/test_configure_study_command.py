"""manage.py configure_study: consent, survey, codes and title through the study service."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.services.admission import consent

pytestmark = pytest.mark.django_db


def test_sets_consent_survey_codes_and_title(study, tmp_path, capsys):
    (tmp_path / "consent.md").write_text("# Consent\n\nYou agree.", encoding="utf-8")
    survey = [{"key": "age", "type": "single", "label": "Age", "options": ["young", "old"]}]
    (tmp_path / "survey.json").write_text(json.dumps(survey), encoding="utf-8")
    call_command(
        "configure_study",
        study.slug,
        "--consent-file", str(tmp_path / "consent.md"),
        "--survey-file", str(tmp_path / "survey.json"),
        "--survey-placement", "before_training",
        "--code", "declined=NOCONSENT,https://app.prolific.com/submissions/complete",
        "--title", "Movie review sentiment",
        "--show",
    )  # fmt: skip
    study.refresh_from_db()
    assert study.consent_required and consent.text_hash(study.consent_text) == consent.text_hash(
        "# Consent\n\nYou agree."
    )
    assert study.survey == survey and study.survey_placement == "before_training"
    assert study.outcome_codes["declined"] == {
        "code": "NOCONSENT",
        "url": "https://app.prolific.com/submissions/complete",
    }
    assert study.worker_title == "Movie review sentiment"
    assert json.loads(capsys.readouterr().out)["worker_title"] == "Movie review sentiment"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--code", "finished=X"], "Unknown outcome"),
        (["--code", "declined"], "OUTCOME=CODE"),
        (["--survey-file", "SURVEY_BAD"], "2 to 30 options"),
        (["--survey-file", "NOT_JSON"], "not valid JSON"),
        (["--consent-file", "EMPTY"], "consent text"),
    ],
)
def test_bad_input_is_refused_with_the_reason_and_nothing_changes(study, tmp_path, args, message):
    (tmp_path / "bad.json").write_text('[{"key": "a", "type": "single", "label": "A", "options": ["x"]}]')
    (tmp_path / "broken.json").write_text("[{")
    (tmp_path / "empty.md").write_text("   ")
    paths = {"SURVEY_BAD": "bad.json", "NOT_JSON": "broken.json", "EMPTY": "empty.md"}
    args = [str(tmp_path / paths[a]) if a in paths else a for a in args]
    before = dict(study.outcome_codes), list(study.survey), study.consent_text
    with pytest.raises(CommandError, match=message):
        call_command("configure_study", study.slug, *args)
    study.refresh_from_db()
    assert (study.outcome_codes, study.survey, study.consent_text) == before
