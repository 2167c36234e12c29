"""Consent (agree, decline) and the survey (before training, after the test) in a real browser."""

import pytest

from annotation.models import Participation, SurveyResponse
from annotation.services.admission import consent
from tests.factories import make_classification_task
from tests.worker.browser.conftest import shot
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
State = Participation.State
TEXT = "## About this study\n\nWe keep your answers **without your name**.\n\n- You may stop at any time."
SURVEY = [
    {"key": "age", "type": "single", "label": "Your age", "options": ["18-29", "30-49", "50+"], "required": True},
    {"key": "years", "type": "number", "label": "Years of annotation work", "min": 0, "max": 60},
    {"key": "langs", "type": "multiple", "label": "Languages you speak", "options": ["English", "German"]},
]


def wait_for_item(page, position):
    page.wait_for_function(
        "(position) => window.workerPage && window.workerPage.item && window.workerPage.item.position === position",
        arg=position,
    )


def test_agreeing_to_consent_then_answering_the_survey_before_training(open_as, db):
    task = make_classification_task(slug="cons", n_test=2, n_train=10)
    p = make_participation(
        task,
        shots=10,
        state=State.CLAIMED,
        consent_required=True,
        consent_text=TEXT,
        survey=SURVEY,
        survey_placement="before_training",
    )
    page = open_as(p)
    assert page.locator("#consent-text strong").inner_text() == "without your name"
    shot(page, "consent")
    page.locator("#consent-agree").click()
    page.locator("#survey-form").wait_for()
    p.refresh_from_db()
    assert p.consent_hash == consent.text_hash(TEXT) and p.consented_at is not None
    page.locator("#survey-submit").click()  # the required question unanswered: refused, nothing stored
    page.locator("#error-age").wait_for()
    assert not SurveyResponse.objects.exists()
    page.get_by_label("30-49").check()
    page.get_by_label("Years of annotation work").fill("lots")
    page.locator("#survey-submit").click()
    page.locator("#error-years").wait_for()
    assert page.get_by_label("30-49").is_checked()
    page.get_by_label("Years of annotation work").fill("3")
    page.get_by_label("German").check()
    shot(page, "survey")
    page.locator("#survey-submit").click()
    page.locator("#start-button").wait_for()
    assert "Answers are final" in page.locator("#study-facts").inner_text()
    assert SurveyResponse.objects.get(participation=p).answers == {"age": "30-49", "years": 3, "langs": ["German"]}
    page.locator("#start-button").click()
    wait_for_item(page, 0)
    p.refresh_from_db()
    assert p.state == State.TRAINING


def test_declining_consent_ends_cleanly_with_the_no_consent_code(open_as, db):
    task = make_classification_task(slug="nocons", n_test=2, n_train=10)
    p = make_participation(
        task,
        state=State.CLAIMED,
        consent_required=True,
        consent_text=TEXT,
        outcome_codes={"declined": {"code": "NOPE1"}},
    )
    page = open_as(p)
    page.locator("#consent-decline").click()
    page.locator("#completion-code").wait_for()
    assert page.locator("#completion-code").inner_text() == "NOPE1"
    shot(page, "declined")
    p.refresh_from_db()
    assert p.state == State.DECLINED and p.consented_at is None
    page.goto(page.url)  # coming back shows the same page
    assert page.locator("#completion-code").inner_text() == "NOPE1"


def test_the_survey_after_the_test_comes_before_the_completion_code(open_as, db):
    task = make_classification_task(slug="after", n_test=2)
    p = make_participation(task, state=State.TEST, survey=SURVEY, survey_placement="after_test")
    page = open_as(p)
    for position in range(2):
        wait_for_item(page, position)
        page.keyboard.press("s")
        page.keyboard.press("s")  # a skip asks for a second press
    page.locator("#survey-form").wait_for()
    page.get_by_label("50+").check()
    page.get_by_label("English").check()
    page.locator("#survey-submit").click()
    page.locator("#completion-code").wait_for()
    assert page.locator("#completion-code").inner_text() == "C0DE1234"
    stored = SurveyResponse.objects.get(participation=p)
    assert (stored.placement, stored.answers) == ("after_test", {"age": "50+", "langs": ["English"]})


def test_the_entry_link_shows_the_consent_and_only_agreeing_takes_a_slot(open_as, db):
    from annotation.models import ConsentDecline, Study
    from annotation.services.studies import studies

    task = make_classification_task(slug="entry-consent", n_test=2, n_train=10)
    study = studies.study_create(
        task=task,
        slug="entry-consent",
        split_number=1,
        shots=[0],
        workers_per_condition=1,
        consent_required=True,
        consent_text=TEXT,
        outcome_codes={"declined": {"code": "NOTHANKS"}},
    )
    studies.change_status(study=study, to_status=Study.Status.OPEN)

    looker = open_as(None, path=f"/join/{study.slug}/?worker_id=looker")
    assert looker.locator("#consent-text strong").inner_text() == "without your name"
    assert looker.locator("#fact-items").is_visible() and not Participation.objects.exists()
    shot(looker, "entry-start-consent")
    looker.locator("#consent-decline").click()
    looker.locator("#completion-code").wait_for()
    assert looker.locator("#completion-code").inner_text() == "NOTHANKS"
    assert not Participation.objects.exists() and ConsentDecline.objects.count() == 1

    keen = open_as(None, path=f"/join/{study.slug}/?worker_id=keen")
    keen.locator("#consent-agree").click()
    keen.wait_for_url("**/work/")
    keen.locator("#start-button").wait_for()  # agreed at the entry: straight to the start page
    taken = Participation.objects.get()
    assert taken.worker.external_id == "keen" and taken.consent_hash == consent.text_hash(TEXT)

    late = open_as(None, path=f"/join/{study.slug}/?worker_id=late")  # the only slot is taken: told at the claim
    late.locator("#consent-agree").click()
    assert "This study is full" in late.locator("h1").inner_text()
