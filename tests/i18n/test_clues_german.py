"""The six CLUES tasks ship German texts, and a study in a language its task lacks texts in does not open."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client

from annotation.models import Study
from annotation.reporting.monitoring import notices
from annotation.services.session import presentation
from annotation.services.studies import studies
from annotation.services.texts import languages
from tasks_app.catalog import CLUES_TASKS, install_clues_tasks
from tasks_app.models import Example, Task
from tasks_app.texts import missing_texts, texts_for
from tests.factories import ConditionFactory, StudyFactory, make_classification_task

pytestmark = pytest.mark.django_db
SLUGS = [t.slug for t in CLUES_TASKS]


def _clues_tasks():
    install_clues_tasks(slugs=SLUGS)  # the migrations' tasks where a test database lacks them
    return [Task.objects.get(slug=slug) for slug in SLUGS]


def test_every_clues_task_has_every_worker_text_in_german():
    for task in _clues_tasks():
        assert missing_texts(task, "de") == [], task.slug
        german, english = texts_for(task, "de"), texts_for(task, "en")
        assert german.description != english.description and german.instructions != english.instructions
        assert german.worker_title != english.worker_title
        for name, help_text in german.labels.items():
            assert help_text.text != name and help_text.definition != english.labels[name].definition
            assert help_text.example != english.labels[name].example, (task.slug, name)  # an example is a text too


def test_the_german_question_replaces_the_template_question_never_the_items_own():
    tasks = {task.slug: task for task in _clues_tasks()}
    sst2, conll, squad = tasks["sst2"], tasks["conll03"], tasks["squad2"]
    review = Example(task=sst2, context="fine", question="positive or negative?", source_id="x")
    assert presentation.question_for(sst2, review, "de") == "Ist der Text positiv oder negativ?"
    assert presentation.question_for(sst2, review, "en") == "positive or negative?"
    names = Example(task=conll, question="List all the people names in the context", question_type="PER")
    assert presentation.question_for(conll, names, "de").startswith("Markieren Sie alle Namen von Personen")
    own = Example(task=squad, question="Who dug the canal?", question_type="")
    assert presentation.question_for(squad, own, "de") == "Who dug the canal?"


def test_a_missing_german_text_is_added_back_and_an_edited_one_kept():
    task = _clues_tasks()[0]
    task.translations = {}
    task.save()
    install_clues_tasks(slugs=[task.slug])
    task.refresh_from_db()
    assert missing_texts(task, "de") == []
    task.translations["de"]["description"] = "Von einer Forscherin geändert."
    task.save()
    install_clues_tasks(slugs=[task.slug])
    task.refresh_from_db()
    assert task.translations["de"]["description"] == "Von einer Forscherin geändert."


def test_the_migration_puts_sst2s_german_examples_in_german_and_keeps_an_edited_one():
    import importlib

    from django.apps import apps

    migration = importlib.import_module("tasks_app.migrations.0011_sst2_german_examples")
    task = next(t for t in _clues_tasks() if t.slug == "sst2")
    labels = task.translations["de"]["labels"]
    labels["positive"]["example"] = "a warm, funny story that stayed with me for days"  # as 0010 left it
    labels["negative"]["example"] = "Von einer Forscherin geändert."
    task.save()
    migration.forward(apps, None)
    task.refresh_from_db()
    examples = {name: label["example"] for name, label in task.translations["de"]["labels"].items()}
    assert examples == {
        "positive": "eine warmherzige, witzige Geschichte, die mich noch tagelang begleitet hat",
        "negative": "Von einer Forscherin geändert.",
    }


def _draft(task, language):
    study = StudyFactory(task=task, language=language, status=Study.Status.DRAFT)
    ConditionFactory(study=study, shots=0)
    return study


def test_a_german_study_whose_task_lacks_texts_is_refused_at_open_naming_them():
    task = make_classification_task(slug="bare")
    study = _draft(task, "de")
    with pytest.raises(ValidationError) as refused:
        studies.change_status(study=study, to_status=Study.Status.OPEN)
    message = refused.value.message_dict["status"][0]
    assert "de.description" in message and "de.labels.positive.name" in message and "de.worker_question" in message
    assert Study.objects.get(pk=study.pk).status == Study.Status.DRAFT
    # English, and the browser's language, open as before.
    for language in ("en", ""):
        other = _draft(task, language)
        assert studies.change_status(study=other, to_status=Study.Status.OPEN).status == Study.Status.OPEN


def test_the_api_gives_the_reason_and_the_dashboard_warns_of_an_open_study_missing_texts():
    task = make_classification_task(slug="bare")
    study = _draft(task, "de")
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    response = client.post(
        f"/api/studies/{study.pk}/status/", data=json.dumps({"status": "open"}), content_type="application/json"
    )
    assert response.status_code == 400 and "de.instructions" in json.dumps(response.json())
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)  # opened before the check existed
    warned = [n for n in notices(Study.objects.get(pk=study.pk)) if n.kind == "missing-texts"]
    assert warned and warned[0].level == "warn" and "de.description" in warned[0].text


def test_a_german_clues_study_opens():
    task = _clues_tasks()[0]
    study = _draft(task, "de")
    assert languages.missing_task_texts(study) == []


def test_a_german_mnli_item_heads_its_sentences_premise_and_hypothesis_as_its_texts_say():
    mnli = next(t for t in _clues_tasks() if t.slug == "mnli")
    assert texts_for(mnli, "de").segment_titles == ["Prämisse", "Hypothese"]
    assert "Prämisse" in texts_for(mnli, "de").description  # the same words as the description's


def test_the_migration_gives_mnlis_german_entry_the_segment_titles_and_keeps_a_researchers():
    import importlib

    from django.apps import apps

    migration = importlib.import_module("tasks_app.migrations.0013_mnli_german_segment_titles")
    mnli = next(t for t in _clues_tasks() if t.slug == "mnli")
    del mnli.translations["de"]["segment_titles"]  # as 0010 left it
    mnli.save()
    migration.forward(apps, None)
    mnli.refresh_from_db()
    assert mnli.translations["de"]["segment_titles"] == ["Prämisse", "Hypothese"]
    mnli.translations["de"]["segment_titles"] = ["Erster Satz", "Zweiter Satz"]
    mnli.save()
    migration.forward(apps, None)
    mnli.refresh_from_db()
    assert mnli.translations["de"]["segment_titles"] == ["Erster Satz", "Zweiter Satz"]
