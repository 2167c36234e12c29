"""The peer harness's adapter (bench/peers_adapter.py) against the app, in-process on a live server.

The harness lives in ../shared/peers/ (never copied here) and needs ``requests``: the test skips
when either is missing. The items are imported in-process (the adapter's own import runs
``manage.py``, which cannot reach the test database); everything else goes over HTTP as in a
real run: admin login, study creation, workers' entry links, the next-item flow, the sequential
submissions and the export job.
"""

import argparse
import json
import sys

import pytest

from annotation.models import AnswerSpan, Participation, Response
from tests.conftest import REPO_ROOT

HARNESS = REPO_ROOT.parent / "shared" / "peers"
N_NEXT, N_SEQ = 3, 5


@pytest.fixture
def harness(monkeypatch):
    if not (HARNESS / "bench_peers.py").is_file():
        pytest.skip(f"the peer harness is not at {HARNESS}")
    pytest.importorskip("requests")
    monkeypatch.syspath_prepend(str(HARNESS))
    import bench_peers

    yield bench_peers
    sys.modules.pop("bench.peers_adapter", None)  # its @register ran against this import of the harness


@pytest.fixture
def adapter(harness, live_server, django_user_model, tmp_path):
    from bench import peers_adapter

    class InProcess(peers_adapter.HumanPerfAdapter):
        def import_test_set(self, state, deadline):
            from pathlib import Path

            from tasks_app.importing.service import NewTask, import_task_files

            path = Path(tmp_path) / f"{state.slug}_test.jsonl"
            with open(path, "w", encoding="utf-8") as f:
                for position, item in enumerate(state.items):
                    line = {
                        "id": f"{state.slug}-{position}",
                        "context": item.text,
                        "question": peers_adapter._question(item.label),
                        "answer": [{"text": item.text[item.start : item.end], "answer_start": item.start}],
                    }
                    f.write(json.dumps(line) + "\n")
            question_types = tuple(
                {"code": label, "name": label, "question": peers_adapter._question(label)} for label in state.labels
            )
            import_task_files(
                path=path,
                slug=state.slug,
                new_task=NewTask(name=state.name, kind="span", question_types=question_types),
            )

    django_user_model.objects.create_superuser("admin", password="pass")
    opts = argparse.Namespace(username="admin", password="pass", threads=2)
    instance = InProcess(live_server.url, opts)
    instance.login()
    return instance


@pytest.mark.django_db(transaction=True)
def test_each_harness_submission_is_one_locked_answer_with_one_span(harness, adapter):
    items = harness.make_items(N_NEXT + N_SEQ, seed=1)
    project, created, setup = harness.setup_project(adapter, "bench-human-perf-test-r1-seq", items, 60)
    assert setup["items_created"] == N_NEXT + N_SEQ and [iid for iid, _ in created] == list(range(N_NEXT + N_SEQ))

    flow, consumed = harness.phase_next_flow(adapter, project, dict(created), N_NEXT, 60)
    assert flow["errors"] == {} and consumed == {0, 1, 2}
    work = [(iid, item) for iid, item in created if iid not in consumed]
    sequential = harness.phase_sequential(adapter, project, work, 60)
    assert sequential["errors"] == {} and sequential["ok"] == N_SEQ

    answered = Response.objects.filter(participation__study__slug=project.id).exclude(status=Response.Status.PENDING)
    assert answered.count() == N_NEXT + N_SEQ
    for response in answered.select_related("example"):
        spans = list(AnswerSpan.objects.filter(response=response))
        assert len(spans) == 1 and response.score == 1.0  # the item's own gold span, locked and scored
        assert response.example.context[spans[0].start : spans[0].end] == spans[0].text
    # one worker answered them all in order (the sequential phase took over the next-item flow's worker)
    worker = Participation.objects.get(pk=answered.first().participation_id)
    assert set(answered.values_list("participation_id", flat=True)) == {worker.pk}
    assert worker.state == Participation.State.COMPLETED

    exported = harness.phase_export(adapter, project, 60)
    assert "error" not in exported, exported
    assert exported["records"] == exported["spans"] == N_NEXT + N_SEQ
    assert exported["submits_on_named_item"] == N_NEXT + N_SEQ
