"""FewCLUE's nine studies in the paper's design, driven over HTTP: create_fewclue_studies on the fixture
(training on development items, a seeded sample of test items, three workers), 27 workers join and answer
scripted labels over the session API, and the table in FewCLUE's shape holds exactly the accuracies the
script gives, per worker (mean ± population std) and by majority vote, with an item without a majority
counted as wrong and reported."""

import json
import random
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Condition, Participation, Response, Study
from annotation.reporting.fewclue_table import TASKS
from annotation.services.session import samples
from tasks_app.models import Example, Label
from tasks_app.paper import FEWCLUE_HUMAN
from tasks_app.scoring import mean, std
from tests import entry_link
from tests.conftest import FEWCLUE_FIXTURE

pytestmark = pytest.mark.django_db

SEED = 7
# The fixture is small: ten development items and three or four test items per task. The design is the
# paper's with N and K fitted to it; K below the test set's size, so the sample is a real draw.
TRAINING_ITEMS = 10
TEST_SAMPLE = 2
NO_MAJORITY_TASK = "ocnli"  # three labels: three workers can each give a different one


def _labels(task_slug: str) -> list[str]:
    return list(Label.objects.filter(task__slug=task_slug).order_by("position", "name").values_list("name", flat=True))


def scripted(folder: str, worker: int, sample_index: int, gold: str, labels: list[str]) -> str:
    """The answer worker ``worker`` (0..2) gives to the ``sample_index``-th item of the condition's sample."""
    if folder == NO_MAJORITY_TASK and sample_index == 0:
        return labels[worker]  # three different labels: no majority
    wrong = next(label for label in labels if label != gold)
    # Worker 0 is always right; worker 1 wrong on the first item; worker 2 wrong on the second (so both
    # items keep a majority for the right label).
    return wrong if (worker, sample_index) in {(1, 0), (2, 1)} and folder != "eprstmt" else gold


def _work(worker_id: str, slug: str, folder: str, worker: int) -> Participation:
    client = Client()
    assert entry_link.take_part(client, slug, {"worker_id": worker_id}).status_code == 302
    assert client.post("/api/session/start/", content_type="application/json").status_code == 200
    labels = _labels(f"fewclue-{folder}")
    condition = Condition.objects.get(study__slug=slug)
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        response = Response.objects.select_related("example").get(pk=item["item"])
        gold = response.example.gold_answers[0]
        if item["phase"] == "training":
            label = labels[0]
        else:
            label = scripted(folder, worker, condition.test_sample.index(response.example_id), gold, labels)
        body = {"item": item["item"], "label": label, "confidence": 3}
        assert client.post("/api/session/submit/", body, content_type="application/json").status_code == 200
    return Participation.objects.get(worker__external_id=worker_id)


def _expected() -> dict[str, dict]:
    """Per task, from the script and the gold alone: each worker's accuracy, and the majority vote's."""
    result = {}
    for folder in TASKS:
        condition = Condition.objects.get(study__slug=f"fewclue-{folder}-paper")
        labels = _labels(f"fewclue-{folder}")
        golds = [
            Response.objects.filter(example_id=e).values_list("example__gold_answers", flat=True).first()[0]
            for e in condition.test_sample
        ]
        answers = [[scripted(folder, w, j, g, labels) for j, g in enumerate(golds)] for w in range(3)]
        per_worker = [100 * mean(float(a == g) for a, g in zip(row, golds, strict=True)) for row in answers]
        ids = [Example.objects.get(pk=e).source_id for e in condition.test_sample]
        correct = no_majority = plurality = ties = 0
        for j, gold in enumerate(golds):
            counts = Counter(row[j] for row in answers)
            label, count = counts.most_common(1)[0]
            if count * 2 <= 3:
                no_majority += 1
            elif label == gold:
                correct += 1
            # Plurality: a tie is drawn among the tied labels (sorted) with random.Random("seed:item id").
            tied = sorted(a for a, n in counts.items() if n == count)
            ties += len(tied) > 1
            plurality += random.Random(f"{SEED}:{ids[j]}").choice(tied) == gold if len(tied) > 1 else label == gold
        result[folder] = {
            "mean": mean(per_worker),
            "std": std(per_worker),
            "majority": 100 * correct / len(golds),
            "no_majority": no_majority,
            "plurality": 100 * plurality / len(golds),
            "ties": ties,
        }
    return result


def test_fewclue_studies_over_http_give_the_table_of_the_scripted_answers(admin_client):
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())
    out = StringIO()
    call_command(
        "create_fewclue_studies",
        "--training-items",
        str(TRAINING_ITEMS),
        "--test-sample",
        str(TEST_SAMPLE),
        "--seed",
        str(SEED),
        "--open",
        stdout=out,
    )
    assert out.getvalue().count(": created (open)") == 9
    for folder in TASKS:
        study = Study.objects.get(slug=f"fewclue-{folder}-paper")
        assert study.protocol == Study.Protocol.FEWCLUE_PAPER and study.test_sample_size == TEST_SAMPLE
        condition = study.conditions.get()
        assert condition.training_set.name == "dev_few_all" and condition.shots == TRAINING_ITEMS
        assert len(condition.training_sample) == TRAINING_ITEMS and len(condition.test_sample) == TEST_SAMPLE
        test_ids = samples.set_ids(samples.test_set(study.task_id).pk)  # the fixture's test sets hold no repeat
        assert condition.test_sample == samples.draw(test_ids, TEST_SAMPLE, seed=SEED, stream="test_sample")
        for worker in range(3):
            p = _work(f"{folder}-w{worker}", study.slug, folder, worker)
            assert p.state == Participation.State.COMPLETED
            # Every worker of the condition answered exactly the condition's sample.
            answered = p.responses.filter(phase="test").order_by("position").values_list("example_id", flat=True)
            assert list(answered) == condition.test_sample

    expected = _expected()
    assert expected[NO_MAJORITY_TASK]["no_majority"] == 1  # the script does give an item without a majority
    data = admin_client.get("/api/reports/table/?studies=all&benchmark=fewclue").json()
    rows = {row["kind"]: row for row in data["rows"]}
    assert [t["name"] for t in data["tasks"]] == [f.upper() for f in FEWCLUE_HUMAN]
    for folder, want in expected.items():
        worker_cell = rows["per_worker"]["cells"][f"fewclue-{folder}"]
        assert worker_cell["mean"] == pytest.approx(want["mean"], abs=1e-3)
        assert worker_cell["std"] == pytest.approx(want["std"], abs=1e-3)
        assert worker_cell["text"] == f"{want['mean']:.1f} ± {want['std']:.1f}"
        vote_cell = rows["majority"]["cells"][f"fewclue-{folder}"]
        assert vote_cell["mean"] == pytest.approx(want["majority"], abs=1e-3)
        assert vote_cell["no_majority"] == want["no_majority"] and vote_cell["items"] == TEST_SAMPLE
        plurality_cell = rows["plurality"]["cells"][f"fewclue-{folder}"]
        assert plurality_cell["mean"] == pytest.approx(want["plurality"], abs=1e-3)
        assert plurality_cell["ties"] == want["ties"]
        assert rows["paper"]["cells"][f"fewclue-{folder}"]["mean"] == FEWCLUE_HUMAN[folder]
    assert rows["per_worker"]["score"] == pytest.approx(mean(w["mean"] for w in expected.values()), abs=1e-3)
    assert rows["majority"]["score"] == pytest.approx(mean(w["majority"] for w in expected.values()), abs=1e-3)
    assert rows["paper"]["score"] == 82.5
    assert rows["majority"]["cells"]["fewclue-ocnli"]["text"].endswith("(1 no majority)")

    # The same table from the command, in each format, with the sample stated.
    out = StringIO()
    call_command("human_performance", "--all", "--benchmark", "fewclue", "--format", "json", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["table"]["rows"] == data["rows"]
    assert printed["meta"]["studies"][0]["conditions"][0]["test_sample"] is not None
    for fmt in ("markdown", "latex", "csv"):
        out = StringIO()
        call_command("human_performance", "--all", "--benchmark", "fewclue", "--format", fmt, stdout=out)
        assert "CLUEWSC" in out.getvalue() and "82.5" in out.getvalue()
    markdown = StringIO()
    call_command("human_performance", "--all", "--benchmark", "fewclue", stdout=markdown)
    assert f"sample of {TEST_SAMPLE} of the 3 items of test_public, drawn with seed {SEED}" in markdown.getvalue()
    statement = StringIO()
    call_command("human_evaluation_statement", "--study", "fewclue-ocnli-paper", stdout=statement)
    assert f"each worker answered the condition's sample of {TEST_SAMPLE} of the 3 items of test_public" in (
        statement.getvalue()
    )
