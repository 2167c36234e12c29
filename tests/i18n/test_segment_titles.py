"""A list context's segment titles per language (Task.translations[code]["segment_titles"])."""

import pytest
from django.core.exceptions import ValidationError

from tasks_app.admin import TaskForm
from tasks_app.texts import segment_titles, texts_for
from tests.factories import make_classification_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(db):
    task = make_classification_task(slug="news")
    task.segment_titles = ["Headline", "Keywords"]
    return task


def test_each_title_is_translated_where_given_and_the_tasks_own_otherwise(task):
    task.translations = {"zh-hans": {"segment_titles": ["新闻标题", " "]}, "de": {"segment_titles": ["Titel"]}}
    assert segment_titles(task, "zh-hans") == ["新闻标题", "Keywords"]
    assert texts_for(task, "de", labels=()).segment_titles == ["Titel", "Keywords"]
    assert segment_titles(task, "en") == segment_titles(task, None) == ["Headline", "Keywords"]


@pytest.mark.parametrize(
    ("titles", "message"),
    [
        ("新闻标题", "zh-hans.segment_titles must be a list of titles; got str."),
        (["新闻标题", 3], "zh-hans.segment_titles[1] must be text; got int."),
    ],
)
def test_titles_that_are_not_a_list_of_texts_are_refused_by_place(task, titles, message):
    task.translations = {"zh-hans": {"segment_titles": titles}}
    with pytest.raises(ValidationError) as refused:
        task.full_clean()
    assert message in refused.value.message_dict["translations"]


def test_the_admin_form_takes_one_title_a_line_and_keeps_them(task):
    task.save()
    task.translations = {"zh-hans": {"segment_titles": ["新闻标题", "关键词"]}}
    task.save()
    form = TaskForm(instance=task)
    assert form.fields["zh-hans__segment_titles"].initial == "新闻标题\n关键词"
    data = {
        "slug": task.slug,
        "kind": task.kind,
        "name": task.name,
        "group": task.group,
        "description": task.description,
        "instructions": "",
        "question_types": "",
        "segment_titles": '["Headline", "Keywords"]',
        "display_order": 1,
        "zh-hans__segment_titles": "标题\n\n",
        "de__segment_titles": "",
    }
    saved = TaskForm(data, instance=task)
    assert saved.is_valid(), saved.errors
    saved.save()
    task.refresh_from_db()
    assert task.translations == {"zh-hans": {"segment_titles": ["标题"]}}
