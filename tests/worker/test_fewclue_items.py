"""FewCLUE items over the session API: an item's own options (CHID), marked spans (CLUEWSC), titled
parts (TNEWS, CSL, pairs), and nothing of the gold or of ``Example.extra`` before the answer is locked."""

import json

import pytest

from annotation.models import Response, Study
from tasks_app.models import Example, Label
from tests.worker.fewclue import fewclue_participation
from tests.worker.test_gold_never_leaks import FORBIDDEN_KEYS, keys_of

pytestmark = pytest.mark.django_db
API = "/api/session/"


def current(client):
    return client.get(API + "current/").json()


def post(client, path, body):
    return client.post(API + path, data=json.dumps(body), content_type="application/json")


def current_example(p) -> Example:
    return Response.objects.filter(participation=p, status="pending").order_by("phase", "position").first().example


def test_a_chid_item_carries_its_own_candidates_and_nothing_that_tells_the_right_one(worker):
    p = fewclue_participation("chid")
    client = worker(p)
    response = client.get(API + "current/")
    item = response.json()["item"]
    example = current_example(p)
    assert item["options"] == [{"name": str(i), "text": c, "key": str(i + 1)} for i, c in enumerate(example.choices)]
    assert item["answer_kind"] == "label" and item["segment_titles"] == []
    assert [(m["role"], m["text"]) for m in item["marks"]] == [("blank", "#idiom#")]
    # Before the lock: the candidates in their stored order, no gold, no extra, no reveal.
    assert not FORBIDDEN_KEYS & set(keys_of(response.json()))
    for value in example.extra.values():
        assert json.dumps(value, ensure_ascii=False) not in response.content.decode()
    assert client.get(API + f"items/{item['item']}/reveal/").status_code == 409
    gold = example.gold_answers[0]
    wrong = next(o["name"] for o in item["options"] if o["name"] != gold)
    body = post(client, "submit/", {"item": item["item"], "label": wrong, "confidence": 3}).json()
    reveal = body["reveal"]
    assert reveal["gold"]["answers"] == [gold] and reveal["gold"]["texts"] == [example.choices[int(gold)]]
    assert reveal["verdict"] == "incorrect" and body["answer"]["label"] == wrong


def test_a_chid_answer_is_scored_as_the_index_of_its_candidate(worker):
    p = fewclue_participation("chid")
    client = worker(p)
    item = current(client)["item"]
    gold = current_example(p).gold_answers[0]
    reveal = post(client, "submit/", {"item": item["item"], "label": gold, "confidence": 4}).json()["reveal"]
    assert reveal["correct"] and reveal["score"] == 1.0
    assert post(client, "submit/", {"item": item["item"] + 0, "label": "7", "confidence": 4}).status_code == 409


def test_an_option_outside_the_item_is_refused_and_stores_nothing(worker):
    p = fewclue_participation("chid")
    client = worker(p)
    item = current(client)["item"]
    refused = post(client, "submit/", {"item": item["item"], "label": "7", "confidence": 4})
    assert refused.status_code == 400 and refused.json()["error"] == "unknown_label"
    assert Response.objects.get(pk=item["item"]).status == "pending"


def test_a_cluewsc_item_carries_its_two_spans_as_marks(worker):
    p = fewclue_participation("cluewsc")
    client = worker(p)
    item = current(client)["item"]
    example = current_example(p)
    context = item["context"]
    assert [m["role"] for m in item["marks"]] == ["span1", "span2"]
    for mark in item["marks"]:
        assert context[mark["start"] : mark["end"]] == mark["text"]
        assert (mark["utf16_start"], mark["utf16_end"]) == (mark["start"], mark["end"])  # no astral characters
    assert {m["text"] for m in item["marks"]} == {m["text"] for m in example.marks}
    assert item["options"] == []


def test_marks_that_do_not_point_at_their_text_are_not_sent(worker):
    p = fewclue_participation("cluewsc")
    client = worker(p)
    current(client)
    example = current_example(p)
    example.marks = [{**example.marks[0], "start": example.marks[0]["start"] + 1}, example.marks[1]]
    example.save()
    item = current(client)["item"]
    assert [m["role"] for m in item["marks"]] == ["span2"]


@pytest.mark.parametrize(
    ("folder", "language", "titles"),
    [
        ("csl", "zh-hans", ["摘要", "关键词"]),
        ("ocnli", "zh-hans", ["第一句", "第二句"]),
        ("csl", "en", ["Abstract", "Keywords"]),
        ("ocnli", "en", ["First sentence", "Second sentence"]),
    ],
)
def test_a_two_part_item_is_sent_as_its_parts_with_the_tasks_titles(worker, folder, language, titles):
    """The titles in the study's language: the task's own (English), or Task.translations (Chinese)."""
    p = fewclue_participation(folder)
    Study.objects.filter(pk=p.condition.study_id).update(language=language)
    response = worker(p).get(API + "current/")
    item = response.json()["item"]
    assert item["context_kind"] == "pair" and len(item["context"]) == 2
    assert item["segment_titles"] == titles
    assert not FORBIDDEN_KEYS & set(keys_of(response.json()))


def test_a_tnews_item_is_its_headline_alone_by_default(worker):
    """The paper's TNEWS example shows the sentence only; the keywords are an import option."""
    p = fewclue_participation("tnews")
    item = current(worker(p))["item"]
    assert item["context_kind"] == "text" and isinstance(item["context"], str) and item["segment_titles"] == []
    assert item["context"] == current_example(p).extra.get("sentence", item["context"])
    tnews = Example.objects.filter(task__slug="fewclue-tnews")
    assert all(isinstance(e.context, str) and "keywords" in e.extra for e in tnews)
    assert any(e.extra["keywords"] for e in tnews)  # the data has keywords; they are not shown


def test_a_tnews_or_iflytek_item_never_names_its_gold_through_extra(worker):
    for folder, field in (("tnews", "label_desc"), ("iflytek", "label_des")):
        p = fewclue_participation(folder, training="")
        client = worker(p)
        client.post(API + "start/", data="{}", content_type="application/json")
        response = client.get(API + "current/")
        example = current_example(p)
        item = json.dumps(response.json()["item"], ensure_ascii=False)
        # The gold's name is stored with the example and never sent with it (every label's name is in the
        # task's list of labels, which says nothing of this item).
        assert example.extra[field] and example.extra[field] not in item and field not in item


def test_a_pair_without_titles_gets_numbered_sentences(worker):
    from tasks_app.models import Task

    p = fewclue_participation("bustm")
    Task.objects.filter(pk=p.condition.study.task_id).update(segment_titles=[])
    item = current(worker(p))["item"]
    assert item["segment_titles"] == ["Sentence 1", "Sentence 2"]


def test_agreement_over_an_items_own_options_compares_the_same_idiom(client):
    """Labels name positions in each item's own list: the same label on one item is the same idiom for every
    worker, so agreement and the majority vote are computed within items as for fixed labels; kappa's
    chance term is the spread over positions (what a worker picking at random would pick)."""
    from annotation.reporting.agreement import fleiss_kappa
    from annotation.reporting.analyses import majority_and_agreement
    from annotation.reporting.options import MetricOptions
    from tests.worker.conftest import login

    first = fewclue_participation("chid", training="")
    workers = [first] + [fewclue_participation("chid", condition=first.condition) for _ in range(2)]
    chosen: dict[int, list[str]] = {}
    for n, p in enumerate(workers):
        login(client, p)
        post(client, "start/", {})
        first_item = True
        while (item := current(client)["item"]) is not None and not item["locked"]:
            example = current_example(p)
            gold = example.gold_answers[0]
            # Workers 1 and 2 always right; worker 3 takes the next candidate on the first item.
            label = str((int(gold) + 1) % 7) if n == 2 and first_item else gold
            first_item = False
            chosen.setdefault(example.pk, []).append(label)
            assert post(client, "submit/", {"item": item["item"], "label": label, "confidence": 3}).status_code == 200
        p.refresh_from_db()
        assert p.state == "completed"
    row = majority_and_agreement(study=first.condition.study, options=MetricOptions())[0]
    assert row["majority_vote_s1"] == 100.0 and row["agreement"]["items"] == len(chosen) == 3
    assert row["agreement"]["value"] == round(fleiss_kappa(list(chosen.values())), 4)
    assert 0 < row["agreement"]["value"] < 1


@pytest.mark.parametrize("titles", ["Headline", [1, 2], {"a": "b"}])
def test_segment_titles_that_are_not_a_list_of_strings_are_refused(titles):
    from django.core.exceptions import ValidationError

    from tasks_app.models import Task

    fewclue_participation("tnews")
    task = Task.objects.get(slug="fewclue-tnews")
    task.segment_titles = titles
    with pytest.raises(ValidationError) as refused:
        task.full_clean()
    assert "segment_titles" in refused.value.message_dict


@pytest.mark.fewclue
def test_the_real_items_carry_their_options_marks_and_all_labels(worker, fewclue_dir):
    from tests.worker.fewclue import import_fixture

    import_fixture(fewclue_dir, tasks=("chid", "cluewsc", "iflytek", "csldcp"))
    chid = current(worker(fewclue_participation("chid")))["item"]
    assert len(chid["options"]) == 7 and [m["role"] for m in chid["marks"]] == ["blank"]
    wsc = current(worker(fewclue_participation("cluewsc")))["item"]
    assert [m["role"] for m in wsc["marks"]] == ["span1", "span2"]
    assert all(wsc["context"][m["start"] : m["end"]] == m["text"] for m in wsc["marks"])
    for folder, count in (("iflytek", 119), ("csldcp", 67)):
        session = current(worker(fewclue_participation(folder)))
        assert len(session["task"]["labels"]) == count and session["item"]["options"] == []


def test_the_page_lists_the_label_search_keys_when_there_are_many_labels(worker):
    p = fewclue_participation("iflytek")
    Label.objects.bulk_create(Label(task=p.task, name=str(i), definition=f"类{i}", example="") for i in range(3, 20))
    page = worker(p).get("/work/").content.decode()
    assert "type part of a label, then choose it" in page and 'data-many-labels="12"' in page
    assert "choose a label" not in page  # no "1 … 20"


def test_the_page_lists_the_number_keys_for_a_few_labels(worker):
    page = worker(fewclue_participation("chid")).get("/work/").content.decode()
    assert "1 … 7" in page and "type part of a label" not in page
