"""Walk whole steps over HTTP and scan every response for gold it must not carry.

Gold answers of the items below include sentinel strings that appear nowhere
in the contexts (an unlocatable gold string is legal data), so finding one
in a response can only mean gold leaked. Each example also carries sentinels
in its alternative answers and extra fields.
"""

import json
from pathlib import Path

import pytest

from annotation.models import Participation
from tasks_app.models import Example
from tests.worker.conftest import make_participation, make_task_with_items

pytestmark = pytest.mark.django_db
STATIC = Path(__file__).resolve().parents[2] / "static" / "worker"
State = Participation.State
API = "/api/session/"
FORBIDDEN_KEYS = {
    "gold",
    "gold_answers",
    "gold_spans",
    "score",
    "verdict",
    "correct",
    "matches",
    "feedback",
    "alternative_answers",
    "extra",
    "reveal",
}


def sentinel(kind, i):
    return f"ZQ{kind}GOLD{i}X"


def build_task():
    test = [(f"Item {i} : Ada met Bob in Paris .", ["Ada", sentinel("TEST", i)]) for i in range(6)]
    train = [(f"Train {i} : Cy met Di .", ["Cy", sentinel("TRAIN", i)]) for i in range(2)]
    task = make_task_with_items(slug="leak", test=test, train=train)
    for ex in Example.objects.filter(task=task):
        tag = ex.gold_answers[1]
        ex.alternative_answers = [[tag + "ALT"]]
        ex.extra = {"hint": tag + "EXTRA", "answers": [tag]}
        ex.save()
    return task


class Recorder:
    """Every response's status, headers and body, in order, with what was asked."""

    def __init__(self, client):
        self.client = client
        self.seen = []

    def _keep(self, label, response):
        headers = "\n".join(f"{k}: {v}" for k, v in response.items())
        cookies = "\n".join(str(c) for c in response.cookies.values())
        self.seen.append((label, response.status_code, headers + "\n" + cookies, response.content.decode()))
        return response

    def get(self, path):
        return self._keep(f"GET {path}", self.client.get(path))

    def post(self, path, body):
        return self._keep(
            f"POST {path}", self.client.post(path, data=json.dumps(body), content_type="application/json")
        )


def keys_of(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from keys_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from keys_of(v)


def answer_everything(rec, *, answer_with_sentinel=True):
    """Work through the current step over the API like the page does; stop when the step is over."""
    phase_at_start = rec.get(API + "current/").json()["state"]
    while True:
        session = rec.get(API + "current/").json()
        item = session["item"]
        if item is None or session["state"] != phase_at_start:
            return
        rec.get(API + f"items/{item['item']}/")
        rec.get(API + f"items/{item['item']}/reveal/")  # before the lock: refused, and must not leak
        rec.get(API + "progress/")
        rec.post(API + "events/", {"item": item["item"], "type": "heartbeat"})
        rec.post(API + "events/", {"item": item["item"], "type": "blur"})
        ctx = item["context"]
        if item["position"] % 3 == 2 and item["skip_allowed"]:
            rec.post(API + "skip/", {"item": item["item"]})
        else:
            start = ctx.index("Ada") if "Ada" in ctx else ctx.index("Cy")
            end = start + (3 if "Ada" in ctx else 2)
            body = {
                "item": item["item"],
                "confidence": 4,
                "spans": [{"start": start, "end": end, "text": ctx[start:end]}],
            }
            rec.post(API + "submit/", body)
            rec.post(API + "submit/", body)  # replay: 409 with the stored answer
        rec.get(API + f"items/{item['item']}/")


def test_a_whole_test_step_never_carries_gold_score_or_hints(worker):
    task = build_task()
    p = make_participation(task, state=State.CLAIMED)
    rec = Recorder(worker(p))
    rec.get("/work/")
    rec.post(API + "start/", {})
    rec.get("/work/")
    answer_everything(rec)
    rec.get("/work/")  # the finish page
    p.refresh_from_db()
    assert p.state == State.COMPLETED
    assert p.responses.filter(status="pending").count() == 0 and p.responses.filter(status="skipped").count() == 2

    secrets = [sentinel("TEST", i) for i in range(6)]
    assert len(rec.seen) > 50
    for label, _status, headers, body in rec.seen:
        for secret in secrets:
            assert secret not in body, f"gold {secret} in the body of {label}"
            assert secret not in headers, f"gold {secret} in the headers of {label}"
        if "json" in headers.lower():
            leaked = FORBIDDEN_KEYS & set(keys_of(json.loads(body)))
            assert not leaked, f"{label} carries {leaked}"
    for path in sorted(STATIC.iterdir()):
        assert not any(secret in path.read_text() for secret in secrets)


def test_training_gold_appears_only_from_its_own_lock_on_and_test_gold_never(worker):
    task = build_task()
    p = make_participation(task, shots=10, state=State.CLAIMED)
    rec = Recorder(worker(p))
    rec.post(API + "start/", {})
    answer_everything(rec)  # training
    p.refresh_from_db()
    assert p.state == State.TEST
    answer_everything(rec)  # test
    p.refresh_from_db()
    assert p.state == State.COMPLETED

    first_seen = {}
    for index, (label, status, headers, body) in enumerate(rec.seen):
        for i in range(2):
            secret = sentinel("TRAIN", i)
            if secret in body and secret not in first_seen:
                first_seen[secret] = (index, label, status)
        for i in range(6):
            assert sentinel("TEST", i) not in body + headers, f"test gold in {label}"
    # Each training item's gold is first seen in the 200 response that locked it.
    assert set(first_seen) == {sentinel("TRAIN", 0), sentinel("TRAIN", 1)}
    for secret, (index, label, status) in first_seen.items():
        assert label == f"POST {API}submit/" and status == 200, (secret, label, status)
        body = json.loads(rec.seen[index][3])
        assert body["answer"]["phase"] == "training"
