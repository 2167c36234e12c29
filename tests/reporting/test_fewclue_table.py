"""The FewCLUE table's refusals and its majority vote under the skip policies."""

import csv
import io
import random
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Condition, Study
from annotation.reporting.exports import export_with_provenance
from annotation.reporting.fewclue_table import CSV_COLUMNS, build_fewclue_table
from annotation.reporting.majority import condition_majority
from annotation.reporting.options import MetricOptions
from tasks_app.demo import import_demo_data
from tests import entry_link
from tests.conftest import FEWCLUE_FIXTURE

pytestmark = pytest.mark.django_db


def _create(*args):
    call_command("create_fewclue_studies", *args, stdout=StringIO(), stderr=StringIO())


@pytest.fixture
def fewclue():
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())


def test_a_study_of_another_benchmark_is_refused(admin_client, fewclue):
    import_demo_data()
    slug = admin_client.post(
        "/api/studies/standard-design/", {"task": "sst2", "split_number": 1}, content_type="application/json"
    ).json()["slug"]
    answer = admin_client.get(f"/api/reports/table/?studies={slug}&benchmark=fewclue")
    assert answer.status_code == 400 and "not one of FewCLUE's nine tasks" in answer.json()["detail"]
    assert admin_client.get(f"/api/reports/table/?studies={slug}&benchmark=glue").status_code == 400


def test_two_protocols_in_one_table_are_refused(fewclue):
    _create("--training-items", "2", "--test-sample", "2", "--tasks", "ocnli")
    _create("--protocol", "readme", "--training-items", "2", "--test-sample", "2", "--tasks", "ocnli")
    with pytest.raises(CommandError, match="different protocols"):
        call_command("human_performance", "--all", "--benchmark", "fewclue", stdout=StringIO())
    out = StringIO()
    call_command("human_performance", "--study", "fewclue-ocnli-readme", "--benchmark", "fewclue", stdout=out)
    assert "| Human (per worker) | – |" in out.getvalue()  # nobody has worked yet: cells missing, never 0


def test_the_fewclue_csv_is_a_plain_table_with_its_provenance_beside_it(fewclue):
    _create("--training-items", "2", "--test-sample", "2", "--tasks", "ocnli", "--seed", "5")
    study = Study.objects.get(slug="fewclue-ocnli-paper")
    content, provenance = export_with_provenance(kind="fewclue-csv", studies=[study], options=MetricOptions())
    rows = list(csv.reader(io.StringIO(content.decode())))
    assert rows[0] == CSV_COLUMNS and all(len(row) == len(rows[0]) for row in rows)
    assert len(rows) == 1 + 4 * 10  # four rows (per worker, majority, plurality, paper) of nine tasks and the score
    assert provenance["export"] == "fewclue-csv" and provenance["studies"][0]["protocol"] == "fewclue-paper"
    assert provenance["studies"][0]["conditions"][0]["sample_seed"] == 5
    assert any("drawn with seed 5" in note for note in provenance["notes"])


def _work(worker_id, slug, answers):
    """answers: per test position, a label or None (a skip)."""
    client = Client()
    assert entry_link.take_part(client, slug, {"worker_id": worker_id}).status_code == 302
    assert client.post("/api/session/start/", content_type="application/json").status_code == 200
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        label = "neutral" if item["phase"] == "training" else answers[item["position"]]
        path, body = (
            ("skip/", {"item": item["item"]})
            if label is None
            else ("submit/", {"item": item["item"], "label": label, "confidence": 3})
        )
        assert client.post("/api/session/" + path, body, content_type="application/json").status_code == 200


def test_a_skip_is_a_vote_under_the_skip_policy(fewclue):
    _create(
        "--training-items",
        "2",
        "--test-sample",
        "1",
        "--tasks",
        "ocnli",
        "--seed",
        "1",
        "--open",
        "--posted-reward",
        "1.50",
    )
    condition = Condition.objects.get(study__slug="fewclue-ocnli-paper")
    gold = condition.training_set.task.examples.get(pk=condition.test_sample[0]).gold_answers[0]
    _work("a", "fewclue-ocnli-paper", [gold])
    _work("b", "fewclue-ocnli-paper", [None])
    _work("c", "fewclue-ocnli-paper", [None])

    def vote(policy):
        result = condition_majority(condition=condition, options=MetricOptions(skip_policy=policy))
        return result.accuracy, result.no_majority

    assert vote("zero") == (0.0, 0)  # two skips are the majority, and a skip earns nothing
    assert vote("empty") == (0.0, 0)  # the empty answer wins, and is wrong
    assert vote("exclude") == (1.0, 0)  # the one vote left is the gold


def test_a_tie_is_no_strict_majority_and_a_seeded_draw_under_plurality(fewclue):
    # FewCLUE's README votes without a tie rule: the strict rule counts the tie as wrong, the plurality draws
    # among the tied answers with random.Random("<sample seed>:<item id>"), and both are reported.
    _create(
        "--training-items",
        "2",
        "--test-sample",
        "1",
        "--tasks",
        "ocnli",
        "--seed",
        "1",
        "--posted-reward",
        "1.00",
        "--open",
    )
    condition = Condition.objects.get(study__slug="fewclue-ocnli-paper")
    item = condition.training_set.task.examples.get(pk=condition.test_sample[0])
    gold = item.gold_answers[0]
    wrong = next(label for label in ("entailment", "neutral", "contradiction") if label != gold)
    _work("a", "fewclue-ocnli-paper", [gold])
    _work("b", "fewclue-ocnli-paper", [wrong])
    _work("c", "fewclue-ocnli-paper", [None])

    result = condition_majority(condition=condition, options=MetricOptions(skip_policy="exclude"))
    assert (result.items, result.no_majority, result.accuracy) == (1, 1, 0.0)  # 1 vote against 1: no majority
    drawn = random.Random(f"1:{item.source_id}").choice(sorted([gold, wrong]))
    assert result.ties == 1 and result.plurality_accuracy == (1.0 if drawn == gold else 0.0)

    table = build_fewclue_table(studies=[condition.study], options=MetricOptions(skip_policy="exclude"))
    rows = {row.kind: row for row in table.rows}
    assert rows["majority"].cells["ocnli"].text() == "0.0 (1 no majority)"
    assert rows["plurality"].cells["ocnli"].text() == f"{100.0 if drawn == gold else 0.0:.1f} (1 tie)"
    # Under --skip-policy exclude a skip is no vote: the majority is of the votes cast, not of the workers.
    assert "more than half of the votes cast (a skip is no vote)" in table.note
    assert "completed workers" not in table.note.split("Majority vote:")[1].split(";")[0]


def test_the_papers_row_says_which_numbers_come_from_clue(fewclue):
    _create("--training-items", "2", "--test-sample", "2", "--tasks", "ocnli")
    table = build_fewclue_table(studies=list(Study.objects.all()))
    paper = next(row for row in table.rows if row.kind == "paper")
    # The README: TNEWS, CHID, IFLYTEK, OCNLI, CSL and CLUEWSC come from CLUE; EPRSTMT, CSLDCP, BUSTM are new.
    marked = {task for task, cell in paper.cells.items() if cell.text().endswith("(CLUE)")}
    assert marked == {"tnews", "chid", "iflytek", "ocnli", "csl", "cluewsc"}
    assert paper.cells["eprstmt"].text() == "90.0"
    assert "TNEWS, IFLYTEK, OCNLI, CSL, CHID, CLUEWSC, marked CLUE" in table.note
    assert "discussed their answers after training, which this platform's workers do not" in table.note
