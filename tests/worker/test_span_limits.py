"""Spans per answer: capped, never the same span twice, overlapping only where the task allows it."""

import json

import pytest

from annotation.models import AnswerSpan, Participation
from annotation.services.session import answers, steps
from annotation.services.session.answers import MAX_SPANS, InvalidAnswer, span_limit, validate_spans
from tasks_app.catalog import CLUES_TASKS
from tasks_app.models import Task
from tests.worker.conftest import login, make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State

CITY = "New York City mayor Eric Adams spoke in New York ."


def at(context, text, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(text, start + 1)
    return {"start": start, "end": start + len(text), "text": text}


def check(spans, *, context=CITY, overlapping=False, multiple=True):
    return validate_spans(context=context, spans=spans, unit="codepoint", multiple=multiple, overlapping=overlapping)


def refused_with(code, spans, **kwargs):
    with pytest.raises(InvalidAnswer) as caught:
        check(spans, **kwargs)
    assert caught.value.code == code
    return caught.value


# --- Overlap ----------------------------------------------------------------------------------


def test_overlapping_spans_are_refused_by_default():
    error = refused_with("overlapping_spans", [at(CITY, "New York City"), at(CITY, "New York")])
    assert "New York" in error.detail
    refused_with("overlapping_spans", [at(CITY, "York City mayor"), at(CITY, "New York")])


def test_nested_names_are_kept_where_the_task_allows_overlap():
    spans = check([at(CITY, "New York City"), at(CITY, "New York")], overlapping=True)
    assert [s.text for s in spans] == ["New York", "New York City"]


def test_touching_and_repeated_spans_do_not_overlap():
    spans = check([at(CITY, "New York"), at(CITY, "City"), at(CITY, "New York", 1), at(CITY, "Eric Adams")])
    assert len(spans) == 4


@pytest.mark.parametrize("overlapping", [False, True])
def test_the_same_span_twice_is_never_allowed(overlapping):
    refused_with("duplicate_span", [at(CITY, "Eric Adams"), at(CITY, "Eric Adams")], overlapping=overlapping)


UNIT = 'It is called a "unit" in the text.'


def test_spans_that_differ_by_punctuation_are_two_answers():
    # SQuAD's gold for one item has both a "unit" and a "unit: full credit needs both strings (S1 over
    # exact strings), so neither is refused as a copy of the other.
    spans = check([at(UNIT, 'a "unit"'), at(UNIT, 'a "unit')], context=UNIT, overlapping=True)
    assert [s.text for s in spans] == ['a "unit', 'a "unit"']
    spans = check([at(CITY, "York ."), at(CITY, "York", 1)], overlapping=True)
    assert [s.text for s in spans] == ["York", "York ."]


# --- The cap ----------------------------------------------------------------------------------


def test_the_cap_is_the_context_words_or_the_ceiling():
    assert span_limit(CITY) == len(CITY.split()) == 11
    assert span_limit(CITY, overlapping=True) == 22
    assert span_limit("word " * 500) == MAX_SPANS == span_limit("word " * 500, overlapping=True)


def test_more_spans_than_the_cap_are_refused_before_they_are_checked():
    context = "a b c"
    spans = [at(context, "a"), at(context, "b"), at(context, "c"), {"start": "x"}]
    error = refused_with("too_many_spans", spans, context=context)
    assert "3" in error.detail
    many = "w " * 200
    refused_with("too_many_spans", [{"start": 2 * i, "end": 2 * i + 1, "text": "w"} for i in range(51)], context=many)
    assert len(check([{"start": 2 * i, "end": 2 * i + 1, "text": "w"} for i in range(50)], context=many)) == 50


def test_every_substring_of_a_sentence_is_refused():
    # the answer that was stored: every span of a short sentence (about n²/2 of them)
    context = "Ada met Bob in Rome ."
    words = [(i, i + len(w)) for i, w in ((context.index(w), w) for w in context.split())]
    spans = [{"start": s, "end": e, "text": context[s:e]} for s, _ in words for _, e in words if s < e]
    assert len(spans) > span_limit(context, overlapping=True)
    refused_with("too_many_spans", spans, context=context, overlapping=True)


# --- The task option --------------------------------------------------------------------------


def test_only_squad_takes_overlapping_spans_its_gold_answers_nest():
    assert [d.slug for d in CLUES_TASKS if d.overlapping_spans] == ["squad2"]
    # What migrate installed (0002) and brought in line with the paper (tasks_app 0004).
    assert set(Task.objects.filter(overlapping_spans=True).values_list("slug", flat=True)) == {"squad2"}
    assert set(Task.objects.filter(multiple_spans=True).values_list("slug", flat=True)) == {
        "conll03",
        "wikiann",
        "squad2",
    }
    assert set(Task.objects.filter(empty_answer_allowed=False).values_list("slug", flat=True)) == {"record"}


@pytest.mark.parametrize("overlapping, status", [(False, 400), (True, 200)])
def test_the_session_api_follows_the_task(client, overlapping, status):
    task = make_task_with_items(slug="nest", test=[(CITY, ["New York City"]), ("Nobody .", [])])
    task.overlapping_spans = overlapping
    task.save()
    participation = make_participation(task, state=State.TEST)
    login(client, participation)
    item = client.get("/api/session/current/").json()["item"]
    body = {"item": item["item"], "spans": [at(CITY, "New York City"), at(CITY, "New York")], "confidence": 3}
    response = client.post("/api/session/submit/", data=json.dumps(body), content_type="application/json")
    assert response.status_code == status
    if overlapping:
        assert AnswerSpan.objects.filter(response__participation=participation).count() == 2
    else:
        assert response.json()["error"] == "overlapping_spans"
        assert not AnswerSpan.objects.filter(response__participation=participation).exists()


def test_the_service_refuses_too_many_spans_and_stores_nothing(ner_task):
    participation = make_participation(ner_task, state=State.TEST)
    steps.lay_out_current(participation=participation)
    item = steps.current_item(participation=participation)
    context = item.example.context_text
    spans = [{"start": i, "end": i + 1, "text": context[i]} for i in range(len(context)) if not context[i].isspace()]
    with pytest.raises(InvalidAnswer) as caught:
        answers.submit(participation=participation, item_id=item.pk, spans=spans, confidence=3)
    assert caught.value.code == "too_many_spans"
    assert not AnswerSpan.objects.exists()


def test_a_gold_set_that_differs_by_punctuation_can_be_given_and_earns_full_credit(client):
    from annotation.models import Response

    task = make_task_with_items(slug="unitqa", test=[(UNIT, ['a "unit"', 'a "unit'])])
    task.overlapping_spans = True
    task.save()
    participation = make_participation(task, state=State.TEST)
    login(client, participation)
    item = client.get("/api/session/current/").json()["item"]
    body = {"item": item["item"], "spans": [at(UNIT, 'a "unit"'), at(UNIT, 'a "unit')], "confidence": 3}
    response = client.post("/api/session/submit/", data=json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content
    stored = Response.objects.get(pk=item["item"])
    assert sorted(stored.answer) == ['a "unit', 'a "unit"'] and stored.score == 1.0
