"""The instruction to workers on AI tools: a study text in every worker language, shown where the task's
instructions are, named by the launch check when a language lacks it, and recorded in the statement (with the
copy signals beside it), the checklist and the appendix."""

from io import StringIO

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Participation, Response, Study
from annotation.protocol import ai_tools
from annotation.reporting.appendix import appendix_texts
from annotation.reporting.statement import build_statement, statement_markdown
from annotation.services.studies import launch
from annotation.web import worker_cookie
from tests.factories import make_classification_task
from tests.reporting.builders import add_annotator, gold_answers
from tests.worker.conftest import make_participation

pytestmark = pytest.mark.django_db
State = Participation.State
OWN = "Do not use ChatGPT or any other AI assistant."
# Written here, not read from the code: what each worker language must show with the standard instruction.
EXPECTED = {
    "en": "Do not use AI assistants (such as ChatGPT)",
    "de": "Verwenden Sie für diese Aufgabe keine KI-Assistenten",
    "zh-hans": "完成本任务时请勿使用人工智能助手",
}
HEADING = {"en": "AI tools", "de": "KI-Werkzeuge", "zh-hans": "人工智能工具"}


@pytest.fixture
def task(db):
    return make_classification_task(slug="sst2", n_test=2, n_train=10)


def _page(participation: Participation, browser: str) -> str:
    client = Client(HTTP_ACCEPT_LANGUAGE=browser)
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    return client.get("/work/").content.decode()


def test_the_standard_instruction_exists_in_every_language_the_pages_ship():
    assert set(ai_tools.STANDARD) == {code for code, _ in settings.LANGUAGES}
    assert all(text.strip() for text in ai_tools.STANDARD.values())


@pytest.mark.parametrize("state", [State.CLAIMED, State.TEST])  # the start page; the item page's instructions
@pytest.mark.parametrize("browser", ["en", "de", "zh-hans"])
def test_each_worker_language_reads_the_standard_instruction_in_its_own_language(task, state, browser):
    participation = make_participation(task, state=state)
    call_command("configure_study", participation.study.slug, "--ai-instruction-standard", stderr=StringIO())
    page = _page(participation, browser)
    assert 'id="ai-instruction"' in page and HEADING[browser] in page
    assert EXPECTED[browser] in page
    assert all(text not in page for code, text in EXPECTED.items() if code != browser)
    looks = launch.launch_check(Study.objects.get(pk=participation.study_id)).looks
    assert "ai_instruction_untranslated" not in {f.code for f in looks}


def test_the_standard_keeps_the_study_s_other_translations_and_follows_a_fixed_language(task):
    participation = make_participation(task, language="de", translations={"de": {"worker_title": "Filmkritiken"}})
    call_command("configure_study", participation.study.slug, "--ai-instruction-standard", stderr=StringIO())
    study = Study.objects.get(pk=participation.study_id)
    assert study.ai_instruction.startswith("Bitte antworten Sie selbst.")  # the study's own text is German
    assert study.translations["de"] == {"worker_title": "Filmkritiken"}
    assert study.translations["en"]["ai_instruction"].startswith("Please answer on your own.")


def test_no_instruction_shows_nothing(task):
    participation = make_participation(task)
    assert 'id="ai-instruction"' not in _page(participation, "en")


def test_an_untranslated_instruction_in_a_browser_language_study_deserves_a_look_naming_the_languages(task):
    participation = make_participation(task)
    call_command("configure_study", participation.study.slug, "--ai-instruction", OWN, stderr=StringIO())
    study = Study.objects.get(pk=participation.study_id)
    (look,) = [f for f in launch.launch_check(study).looks if f.code == "ai_instruction_untranslated"]
    assert "no text in de, zh-hans" in look.message and "--ai-instruction-standard" in look.fix
    assert OWN in _page(participation, "de")  # shown all the same, in the study's own words
    Study.objects.filter(pk=study.pk).update(language="en")  # a fixed English study lacks nothing
    assert not [f for f in launch.launch_check(Study.objects.get(pk=study.pk)).looks if "ai_" in f.code]


def test_a_bad_instruction_translation_or_both_flags_are_refused_and_nothing_saved(task):
    with pytest.raises(ValidationError, match="de.ai_instruction must be text"):
        Study(slug="s", name="S", task=task, translations={"de": {"ai_instruction": 3}}).full_clean()
    participation = make_participation(task)
    with pytest.raises(CommandError, match="not allowed with argument"):
        call_command("configure_study", participation.study.slug, "--ai-instruction", OWN, "--ai-instruction-standard")
    assert Study.objects.get(pk=participation.study_id).ai_instruction == ""


def test_the_statement_checklist_and_appendix_record_the_instruction_beside_the_copies(task):
    participation = make_participation(task, state=State.COMPLETED)
    study = participation.study
    gold = gold_answers(task)
    add_annotator(study, 0, answers=gold)
    Response.objects.filter(participation__study=study).exclude(status=Response.Status.PENDING).update(copy_count=0)
    first = Response.objects.filter(participation__study=study, phase=Response.Phase.TEST).order_by("pk").first()
    Response.objects.filter(pk=first.pk).update(copy_count=2)
    answers = Response.objects.filter(participation__study=study, phase=Response.Phase.TEST).exclude(
        status=Response.Status.PENDING
    )
    sections = {s.title: s for s in build_statement(study=Study.objects.get(pk=study.pk)).sections}
    assert not sections["AI tools"].collected
    assert sections["AI tools"].text.startswith("Instruction on AI tools: none was shown to workers.")
    assert f"1 of {answers.count()} test answers had the item's text copied (1 worker)" in sections["AI tools"].text

    call_command("configure_study", study.slug, "--ai-instruction-standard", stderr=StringIO())
    statement = build_statement(study=Study.objects.get(pk=study.pk))
    text = {s.title: s for s in statement.sections}["AI tools"]
    assert text.collected and f'"{ai_tools.STANDARD["en"]}" (in en, de, zh-hans' in text.text
    assert "### Training and quality control" in statement_markdown(statement)
    item = {a.number: a for a in statement.checklist}["3.5.1"]
    assert f'workers were told "{ai_tools.STANDARD["en"]}" (in en, de, zh-hans)' in item.answer
    assert "(1 items with a copy)" in item.answer
    appendix = appendix_texts(Study.objects.get(pk=study.pk))
    for code, expected in EXPECTED.items():
        assert appendix.count(expected) == 1, code
