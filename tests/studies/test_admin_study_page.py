"""The study's admin page for researchers: sections that fold, outcome codes and survey as forms (not JSON),
links to the dashboard and the preview, the study's own name in messages, and a favicon."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.admin.widgets import comprehension_lines, parse_comprehension, parse_survey, survey_lines
from annotation.models import Study
from tests.studies.test_admin import _change_data

pytestmark = pytest.mark.django_db

SURVEY = [
    {"key": "age", "type": "number", "label": "How old are you?", "min": 18, "max": 99},
    {"key": "native", "type": "single", "label": "Is English your first language?", "options": ["Yes", "No"]},
    {"key": "notes", "type": "text", "label": "Anything else?", "required": False},
]


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


def test_the_survey_lines_round_trip_and_a_bad_line_is_named():
    assert parse_survey(survey_lines(SURVEY)) == SURVEY
    with pytest.raises(Exception, match="line 2: write key"):
        parse_survey("age | number | How old?\njust a question")
    with pytest.raises(Exception, match="min is a number"):
        parse_survey("age | number | How old? | min=eighteen")


def test_the_page_folds_its_sections_links_the_dashboard_and_edits_codes_as_rows(admin_client, study):
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert page.count("<details") >= 5  # Django's collapsible fieldsets: no script
    assert f'href="/dashboard/study/{study.slug}/"' in page
    assert 'id="study-preview-link"' in page
    assert 'name="outcome_codes__completed__code"' in page and 'name="outcome_codes__full__url"' in page
    assert 'class="survey-lines"' in page


def test_codes_and_survey_saved_from_the_form(admin_client, study):
    url = reverse("admin:annotation_study_change", args=[study.pk])
    data = _change_data(study, survey=survey_lines(SURVEY))
    del data["outcome_codes"]
    data["outcome_codes__completed__code"] = "DONE2026"
    data["outcome_codes__completed__url"] = "https://app.prolific.com/submissions/complete?cc=DONE2026"
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    study.refresh_from_db()
    assert study.survey == SURVEY
    assert study.outcome_codes["completed"]["code"] == "DONE2026"
    assert study.outcome_codes["full"]["code"]  # the codes left empty are generated
    bad = _change_data(study, survey="age | number")
    response = admin_client.post(url, bad)
    assert response.status_code == 200 and "Survey, line 1" in response.content.decode()
    assert Study.objects.get(pk=study.pk).survey == SURVEY


def test_a_status_message_names_the_study_as_written(admin_client, study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PAUSED, name="My SST-2 pilot")
    url = reverse("admin:annotation_study_status", args=[study.pk])
    response = admin_client.post(url, {"to_status": "open"}, follow=True)
    shown = [str(m) for m in response.context["messages"]]
    assert "“My SST-2 pilot” is now open." in shown, shown


def test_favicon_ico_is_not_a_404(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")


CHECK = [
    {"key": "what", "label": "What do you mark?", "options": ["Names", "Places", "Dates"], "correct": ["Names"]},
    {
        "key": "skip",
        "label": "Which items may you skip?",
        "options": ["None", "Unclear items", "Very long items", "Short items"],
        "correct": ["Unclear items", "Very long items"],
        "multiple": True,
    },
]
CHECK_LINES = (
    "what | What do you mark? | *Names; Places; Dates\n"
    "skip | Which items may you skip? | None; *Unclear items; *Very long items; Short items | multiple"
)


def test_the_comprehension_lines_read_as_written_and_a_bad_line_is_named():
    assert parse_comprehension(CHECK_LINES) == CHECK
    assert comprehension_lines(CHECK) == CHECK_LINES
    with pytest.raises(Exception, match="line 2: write key"):
        parse_comprehension("what | What? | *A; B\njust a question")
    with pytest.raises(Exception, match="the word multiple"):
        parse_comprehension("what | What? | *A; B | several")


def test_the_comprehension_check_and_the_translations_are_saved_from_fields(admin_client, study):
    url = reverse("admin:annotation_study_change", args=[study.pk])
    page = admin_client.get(url).content.decode()
    assert 'class="comprehension-lines"' in page
    assert 'name="translations__de__consent_text"' in page and 'name="translations__zh-hans__worker_title"' in page
    data = _change_data(study, survey=survey_lines(SURVEY), comprehension=CHECK_LINES)
    data["translations__de__worker_title"] = "Sätze bewerten"
    data["translations__de__survey"] = "native | Ist Deutsch Ihre Erstsprache? | Ja; Nein\nage | Wie alt sind Sie?"
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    study.refresh_from_db()
    assert study.comprehension == CHECK
    assert study.translations == {
        "de": {
            "worker_title": "Sätze bewerten",
            "survey": {
                "native": {"label": "Ist Deutsch Ihre Erstsprache?", "options": ["Ja", "Nein"]},
                "age": {"label": "Wie alt sind Sie?"},
            },
        }
    }
    # The page shows them again as written.
    page = admin_client.get(url).content.decode()
    assert "*Names; Places; Dates" in page and "native | Ist Deutsch Ihre Erstsprache? | Ja; Nein" in page


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("comprehension", "what | What? | A; B", "correct is the list of the right option(s)"),
        ("comprehension", "what | What?", "write key | question | options"),
        ("translations__de__survey", "native | Erstsprache? | Ja; Nein; Vielleicht", "must list 2 texts"),
        ("translations__de__survey", "shoe | Schuhgröße?", "unknown question shoe"),
    ],
)
def test_a_bad_check_or_translation_is_named_on_its_field_and_nothing_is_saved(
    admin_client, study, field, value, message
):
    url = reverse("admin:annotation_study_change", args=[study.pk])
    admin_client.post(url, _change_data(study, survey=survey_lines(SURVEY)))
    before = Study.objects.get(pk=study.pk)
    response = admin_client.post(url, {**_change_data(study, survey=survey_lines(SURVEY)), field: value})
    assert response.status_code == 200 and message in response.content.decode()
    after = Study.objects.get(pk=study.pk)
    assert (after.comprehension, after.translations) == (before.comprehension, before.translations)
