"""The reveal's counts, which the page puts in words ("1 of 2 names right") beside the S1 for researchers."""

import json

import pytest

from annotation.models import Participation, Response
from annotation.services.session.reveal import wordings
from tasks_app.models import Task
from tests.factories import make_classification_task
from tests.worker.conftest import make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
State = Participation.State
API = "/api/session/"


def submit(client, body):
    return client.post(API + "submit/", data=json.dumps(body), content_type="application/json").json()


def current(client):
    return client.get(API + "current/").json()["item"]


def spans_of(context, *texts):
    return [{"start": context.index(t), "end": context.index(t) + len(t), "text": t} for t in texts]


def test_a_name_task_counts_the_gold_names_the_worker_found(db, worker):
    task = make_task_with_items(
        slug="names",
        test=[("x .", [])],
        train=[("Alan Turing met Alonzo Church .", ["Alan Turing", "Alonzo Church"])],
    )
    client = worker(make_participation(task, shots=10, state=State.TRAINING))
    item = current(client)
    body = submit(
        client, {"item": item["item"], "confidence": 3, "spans": spans_of(item["context"], "Alan Turing", "met")}
    )
    # one of the two gold names, one extra span: S1 = 2 * (1/2 * 1/2) / (1/2 + 1/2) = 0.5
    assert body["reveal"]["feedback"] == {"unit": "name", "gold": 2, "yours": 2, "found": 1}
    assert body["reveal"]["score"] == 0.5
    again = client.get(API + f"items/{item['item']}/reveal/").json()
    assert again["feedback"] == body["reveal"]["feedback"]


def test_a_reading_task_counts_answers_and_an_empty_gold_has_none(db, worker):
    task = make_task_with_items(
        slug="reading", multiple_spans=False, test=[("x .", [])], train=[("Nothing to find here .", [])]
    )
    client = worker(make_participation(task, shots=10, state=State.TRAINING))
    item = current(client)
    body = submit(client, {"item": item["item"], "confidence": 3, "no_answer": True})
    assert body["reveal"]["feedback"] == {"unit": "answer", "gold": 0, "yours": 0, "found": 0}
    assert body["reveal"]["score"] == 1.0


def test_a_label_task_counts_whether_the_label_matched(db, worker):
    task = make_classification_task(slug="labels", labels=("positive", "negative"), n_test=2, n_train=10)
    client = worker(make_participation(task, shots=10, state=State.TRAINING))
    item = current(client)
    gold = Response.objects.get(pk=item["item"]).example.gold_answers[0]
    wrong = "negative" if gold == "positive" else "positive"
    body = submit(client, {"item": item["item"], "confidence": 2, "label": wrong})
    assert body["reveal"]["feedback"] == {"unit": "label", "gold": 1, "yours": 1, "found": 0}


def test_nested_gold_strings_are_one_answer_in_several_wordings():
    assert wordings(["between 1794 and 1802", "1794 and 1802", "the canal"]) == [
        ["1794 and 1802", "between 1794 and 1802"],
        ["the canal"],
    ]


def test_the_reveal_counts_a_reading_answer_once_and_its_wordings_as_s1_does(db, worker):
    text = "The canal was dug between 1794 and 1802 ."
    task = make_task_with_items(
        slug="reading", test=[("x .", [])], train=[(text, ["between 1794 and 1802", "1794 and 1802"])]
    )
    Task.objects.filter(pk=task.pk).update(group=Task.Group.MRC, overlapping_spans=True)  # SQuAD's settings
    client = worker(make_participation(task, shots=10, state=State.TRAINING))
    item = current(client)
    body = submit(client, {"item": item["item"], "confidence": 3, "spans": spans_of(item["context"], "1794 and 1802")})
    # One answer found, in one of its two wordings: S1 (every wording a gold string) stays 2/3.
    assert body["reveal"]["feedback"] == {
        "unit": "answer",
        "gold": 1,
        "yours": 1,
        "found": 1,
        "wordings": 2,
        "wordings_found": 1,
    }
    assert body["reveal"]["gold"]["wordings"] == [["1794 and 1802", "between 1794 and 1802"]]
    assert round(body["reveal"]["score"], 2) == 0.67
