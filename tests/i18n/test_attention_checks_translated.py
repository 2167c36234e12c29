"""Attention checks in the study's language: a template check in a German (or Chinese) study is written in
it and names the label as the worker's button shows it ("„folgt daraus“" above "folgt daraus / weder noch /
Widerspruch"), a span check's word is a word of its translated sentence, and a study that follows the
browser words its label checks in each worker's language when it shows them."""

import pytest
from django.test import Client
from django.utils import translation

from annotation.models import Response, Study
from annotation.services.verdicts import attention
from annotation.services.verdicts.attention import definitions
from tasks_app.catalog import install_clues_tasks
from tasks_app.models import Task
from tests import entry_link
from tests.factories import ConditionFactory, StudyFactory

pytestmark = pytest.mark.django_db

# The German button texts of MNLI's labels (tasks_app/catalog_de.py), written out here.
MNLI_BUTTONS_DE = {"entailment": "folgt daraus", "neutral": "weder noch", "contradiction": "Widerspruch"}


def _task(slug: str) -> Task:
    install_clues_tasks(slugs=[slug])
    return Task.objects.get(slug=slug)


def _study(task: Task, language: str) -> Study:
    from tests.factories import ExampleFactory, ExampleSetFactory, add_examples_to_set

    if not task.example_sets.filter(role="test").exists():
        gold = list(task.labels.values_list("name", flat=True))[:1] or ["x"]
        examples = [ExampleFactory(task=task, gold_answers=gold, context=f"Item {i} .") for i in range(6)]
        add_examples_to_set(ExampleSetFactory(task=task, role="test"), examples)
    study = StudyFactory(task=task, language=language)
    ConditionFactory(study=study, shots=0)
    return study


def test_a_german_studys_label_checks_are_german_and_name_the_german_buttons():
    task = _task("mnli")
    study = _study(task, "de")
    checks = attention.definitions.generate(study=study, positions=[1, 2, 3])
    named = {}
    for check in checks:
        assert "choose" not in check.question and "reading" not in check.context
        assert check.question.startswith("Zum Zeichen, dass Sie aufmerksam lesen, wählen Sie „")
        named[check.expected_label] = check.question.split("„")[1].split("“")[0]
    assert named == MNLI_BUTTONS_DE


def test_a_german_study_shows_the_german_check_and_passes_the_worker_who_follows_it():
    task = _task("mnli")
    study = _study(task, "de")
    check = attention.definitions.generate(study=study, positions=[1])[0]
    client = Client()
    assert entry_link.take_part(client, study.slug, {"worker_id": "careful"}).status_code == 302
    assert client.post("/api/session/start/", content_type="application/json").status_code == 200
    item = client.get("/api/session/current/").json()["item"]
    assert (
        item["question"]
        == f"Zum Zeichen, dass Sie aufmerksam lesen, wählen Sie „{MNLI_BUTTONS_DE[check.expected_label]}“."
    )
    assert item["context"].startswith("Mit dieser Aufgabe prüfen wir")
    body = {"item": item["item"], "label": check.expected_label, "confidence": 3}
    assert client.post("/api/session/submit/", body, content_type="application/json").status_code == 200
    response = Response.all_objects.get(attention_check=check)
    assert response.label == check.expected_label and response.score == 1.0  # passed


@pytest.mark.parametrize(("language", "word"), [("de", "Orange"), ("zh-hans", "橙子"), ("en", "orange")])
def test_a_span_check_is_a_sentence_in_the_studys_language_with_its_word(language, word):
    task = _task("conll03")
    study = _study(task, language)
    check = attention.definitions.generate(study=study, positions=[1])[0]
    assert check.expected_spans == [word]
    assert f"“{word}”" in check.question or f"„{word}“" in check.question
    assert check.example.gold_spans[0]["text"] == word
    start = check.example.gold_spans[0]["start"]
    assert check.context[start : start + len(word)] == word


@pytest.mark.parametrize("language", ["de", "zh-hans"])
def test_every_template_sentence_holds_its_word_in_every_language(language):
    for english_word, english_sentence in definitions._SPAN_SENTENCES:
        with translation.override(language):
            word, sentence = str(english_word), str(english_sentence)
        assert word != str(english_word) and sentence != str(english_sentence), (language, word)
        assert definitions._located(sentence, word) is not None, (language, word, sentence)


def test_a_study_that_follows_the_browser_words_its_label_checks_in_each_workers_language():
    task = _task("mnli")
    study = _study(task, "")
    check = attention.definitions.generate(study=study, positions=[1])[0]
    assert check.question.startswith("To show you are reading, choose")  # stored in the default language
    shown = {}
    for worker, accept in (("de-worker", "de"), ("en-worker", "en")):
        client = Client(HTTP_ACCEPT_LANGUAGE=accept)
        assert entry_link.take_part(client, study.slug, {"worker_id": worker}).status_code == 302
        client.post("/api/session/start/", content_type="application/json")
        shown[accept] = client.get("/api/session/current/").json()["item"]["question"]
    assert (
        shown["de"] == f"Zum Zeichen, dass Sie aufmerksam lesen, wählen Sie „{MNLI_BUTTONS_DE[check.expected_label]}“."
    )
    assert shown["en"] == f"To show you are reading, choose “{check.expected_label}”."


def test_a_researchers_own_wording_of_a_template_check_is_shown_as_written():
    task = _task("mnli")
    study = _study(task, "")
    check = attention.definitions.generate(study=study, positions=[1])[0]
    attention.definitions.update_check(check, question="Bitte wählen Sie die erste Antwort.")
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    entry_link.take_part(client, study.slug, {"worker_id": "w"})
    client.post("/api/session/start/", content_type="application/json")
    assert client.get("/api/session/current/").json()["item"]["question"] == "Bitte wählen Sie die erste Antwort."
