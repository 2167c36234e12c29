"""The session API on the real CLUES release: gold spans sent back as a browser would are accepted."""

import json

import pytest

from annotation.models import Participation, Response
from annotation.protocol import offsets
from tasks_app import scoring
from tasks_app.importing.service import import_clues
from tasks_app.models import Task
from tests.worker.conftest import make_participation

pytestmark = [pytest.mark.clues, pytest.mark.django_db]
ITEMS = 60


@pytest.mark.parametrize("slug", ["squad2", "record", "conll03", "wikiann", "mnli"])
def test_answering_real_items_with_their_gold_in_utf16_offsets_scores_them_as_gold(clues_dir, worker, slug):
    import_clues(path=clues_dir, slugs=[slug], split=1)
    task = Task.objects.get(slug=slug)
    p = make_participation(task, state=Participation.State.TEST)
    client = worker(p)
    for _ in range(ITEMS):
        item = client.get("/api/session/current/").json()["item"]
        if item is None:
            break
        example = Response.objects.select_related("example").get(pk=item["item"]).example
        body = {"item": item["item"], "confidence": 3}
        if task.is_classification:
            body["label"] = example.gold_answers[0]
        else:
            context = item["context"]
            spans = example.gold_spans if task.multiple_spans else example.gold_spans[:1]
            # a browser sends each distinct span once, in UTF-16 units
            unique = {(s["start"], s["end"]): s for s in spans}.values()
            body["offset_unit"] = "utf16"
            body["spans"] = [
                {
                    "start": offsets.index_to_utf16(context, s["start"]),
                    "end": offsets.index_to_utf16(context, s["end"]),
                    "text": s["text"],
                }
                for s in unique
            ]
            body["no_answer"] = not body["spans"]
        response = client.post("/api/session/submit/", data=json.dumps(body), content_type="application/json")
        assert response.status_code == 200, (example.source_id, response.json())
        row = Response.objects.get(pk=item["item"])
        assert row.score == scoring.s1(row.answer, example.gold_answers)
    assert Response.objects.filter(participation=p).exclude(status="pending").count() >= min(ITEMS, 1)
