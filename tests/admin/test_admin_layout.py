"""The admin pages researchers use, in a real browser at a laptop's width: nothing overflows or is cut off."""

import pytest

from annotation.models import Participation, Study, Worker
from annotation.services.studies import studies
from tests.factories import make_classification_task
from tests.worker.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LAPTOP = {"width": 1366, "height": 768}

OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('#content-main *, #changelist *')]
    .filter(el => el.getBoundingClientRect().right > width + 1 && el.offsetParent !== null)
    .map(el => el.tagName + (el.id ? '#' + el.id : '') + '.' + el.className);
  return {page: document.documentElement.scrollWidth - width, wide: wide.slice(0, 5)};
}"""


def _fits(page, name):
    shot(page, name)
    result = page.evaluate(OVERFLOW)
    assert result["page"] <= 0 and result["wide"] == [], result


def test_the_participations_list_fits_a_laptop_screen(open_as, staff_session):
    task = make_classification_task(slug="sst2-layout", n_test=4)
    study = studies.study_create(
        task=task,
        slug="a-study-with-a-rather-long-slug-for-layout",
        name="A study with a long name " * 3,
        shots=[0, 10],
    )
    for n in range(3):
        worker = Worker.objects.create(platform="prolific", external_id=f"5f3c{n:020d}abcdef0123456789")
        Participation.objects.create(
            study=study, condition=study.conditions.get(shots=0), task=task, worker=worker, slot_index=n
        )
    page = open_as(None, path="/admin/annotation/participation/", cookies=staff_session, viewport=LAPTOP)
    _fits(page, "admin-participations-1366")


def test_a_tasks_labels_table_fits_the_page(open_as, staff_session):
    task = make_classification_task(slug="mnli-layout", labels=("entailment", "neutral", "contradiction"), n_test=2)
    label = task.labels.first()
    label.definition = "The second sentence must be true whenever the first one is true; " * 3
    label.example = "A man plays a guitar on stage. / A person makes music. " * 4
    label.save()
    page = open_as(None, path=f"/admin/tasks_app/task/{task.pk}/change/", cookies=staff_session, viewport=LAPTOP)
    _fits(page, "admin-task-labels-1366")


def test_a_draft_studys_page_has_an_open_button_that_opens_it(open_as, staff_session):
    task = make_classification_task(slug="sst2-open", n_test=4)
    study = studies.study_create(task=task, slug="draft-study", shots=[0], base_reward=1)  # nothing blocks
    page = open_as(None, path=f"/admin/annotation/study/{study.pk}/change/", cookies=staff_session, viewport=LAPTOP)
    assert "/join/<slug>/" not in page.content() and "/join//." not in page.locator("body").inner_text()
    _fits(page, "admin-study-draft-1366")
    page.get_by_role("button", name="Open the study").click()
    page.locator("ul.messagelist").wait_for()
    assert "is now open" in page.locator("ul.messagelist").inner_text()
    assert Study.objects.get(pk=study.pk).status == Study.Status.OPEN
    assert page.get_by_role("button", name="Pause").count() == 1
    assert page.get_by_role("button", name="Open the study").count() == 0


def test_the_study_page_folds_its_sections_and_links_the_dashboard(open_as, staff_session):
    task = make_classification_task(slug="adm-sst2", n_test=2, n_train=10)
    study = studies.study_create(task=task, slug="adm-sst2", split_number=1, shots=[0, 10], name="My SST-2 pilot")
    page = open_as(
        None,
        path=f"/admin/annotation/study/{study.pk}/change/",
        cookies=staff_session,
        viewport={"width": 1366, "height": 768},
    )
    page.locator("#study-dashboard-link").wait_for()
    height = page.evaluate("() => document.documentElement.scrollHeight")
    # was 4,579 px with every section open and the JSON fields; the launch check, data release, checklist,
    # pilot and pre-registration sections added their folded headings since (about 50 px each)
    assert height < 3000, height
    page.locator("summary", has_text="Pay and completion").click()
    page.locator("#id_outcome_codes").wait_for()
    _fits(page, "study page")
    shot(page, "admin-study-page")


def test_the_attention_checks_do_not_widen_the_study_page(open_as, staff_session):
    from annotation.services.verdicts import attention

    task = make_classification_task(slug="adm-checks", n_test=6, n_train=10)
    study = studies.study_create(task=task, slug="adm-checks", split_number=1, shots=[0])
    attention.definitions.generate(study=study, positions=[1, 3])
    attention.definitions.create_check(
        study=study, position=5, context="A long text. " * 40, question="Choose “negative”.", expected_label="negative"
    )
    page = open_as(None, path=f"/admin/annotation/study/{study.pk}/change/", cookies=staff_session, viewport=LAPTOP)
    page.locator("#attention_checks-group").wait_for()
    page.evaluate("() => document.querySelectorAll('#content-main details').forEach(d => { d.open = true; })")
    _fits(page, "admin-study-attention-checks-1366")  # was 1,862 px wide at 1,366
    assert page.locator("select[name='attention_checks-0-expected_label']").count() == 1  # a choice, not JSON
